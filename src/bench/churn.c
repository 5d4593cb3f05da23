/*
 * An independent churn client, in C so that it shares no code with the servers it loads: SLOTS connections at a
 * time, each connects, sends one frame (4-byte little-endian length 16, then 16 bytes), reads the echo, checks
 * it, closes, and starts again, from 8 loopback source addresses (127.0.0.1-8) so that ports are not the limit.
 *
 *   churn PORT SERVER_PID WINDOW...      WINDOW: mN measures N seconds, wN churns N seconds unmeasured
 *
 * For each measured window it prints one line: connections completed per second, the server's CPU time per
 * connection (utime + stime of SERVER_PID from /proc), and connect-to-echo latency p50 and p99. Used by
 * src/bench/churn.sh; build: gcc -O2 -o churn churn.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define SLOTS 32
#define SOURCES 8
#define FRAME 20
#define MAX_LATENCY_US 1000000

struct slot {
  int fd;
  int got;
  long started_us;
  unsigned char in[FRAME];
};

static struct slot slots[SLOTS];
static int ep, port;
static unsigned char frame[FRAME];
static unsigned latencies[MAX_LATENCY_US + 1];
static long done, failed, next_source;
/* Slots whose connect failed at once (no source port free, say): started again after the next poll. */
static struct slot *retry[SLOTS];
static int retries;

static long now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static double server_cpu_s(const char *pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f || !fgets(buf, sizeof buf, f)) {
    fprintf(stderr, "churn: cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  /* Fields after the command name, which ends with the last ')': utime and stime are the 14th and 15th fields. */
  char *p = strrchr(buf, ')') + 2;
  unsigned long utime, stime;
  if (sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) {
    fprintf(stderr, "churn: cannot parse %s\n", path);
    exit(2);
  }
  return (double) (utime + stime) / sysconf(_SC_CLK_TCK);
}

static void start(struct slot *s) {
  s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (s->fd < 0) {
    perror("socket");
    exit(2);
  }
  int one = 1;
  setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* The port is chosen at connect, knowing the destination, so a source port in TIME_WAIT can be reused. */
  setsockopt(s->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
  struct sockaddr_in src = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001 + next_source++ % SOURCES)};
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  if (bind(s->fd, (struct sockaddr *) &src, sizeof src) < 0) {
    perror("bind");
    exit(2);
  }
  s->got = 0;
  s->started_us = now_us();
  if (connect(s->fd, (struct sockaddr *) &dst, sizeof dst) < 0 && errno != EINPROGRESS) {
    close(s->fd);
    failed++;
    retry[retries++] = s;
    return;
  }
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = s};
  epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
}

static void restart(struct slot *s, int ok) {
  if (ok) {
    long us = now_us() - s->started_us;
    latencies[us > MAX_LATENCY_US ? MAX_LATENCY_US : us]++;
    done++;
  } else {
    failed++;
  }
  close(s->fd);
  start(s);
}

static void on_event(struct slot *s, unsigned events) {
  if (events & EPOLLOUT) { /* connected, or failed to */
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err || write(s->fd, frame, FRAME) != FRAME) {
      restart(s, 0);
      return;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
    epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
    return;
  }
  ssize_t n = read(s->fd, s->in + s->got, FRAME - s->got);
  if (n <= 0) {
    if (n < 0 && errno == EAGAIN) {
      return;
    }
    restart(s, 0);
    return;
  }
  s->got += n;
  if (s->got == FRAME) {
    restart(s, memcmp(s->in, frame, FRAME) == 0);
  }
}

static long percentile(long count, double p) {
  if (count == 0) {
    return 0;
  }
  long rank = (long) (count * p), seen = 0;
  for (long us = 0; us <= MAX_LATENCY_US; us++) {
    seen += latencies[us];
    if (seen > rank) {
      return us;
    }
  }
  return MAX_LATENCY_US;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: churn PORT SERVER_PID WINDOW... (mN: measure N s, wN: churn N s unmeasured)\n");
    return 2;
  }
  port = atoi(argv[1]);
  frame[0] = 16;
  for (int i = 4; i < FRAME; i++) {
    frame[i] = 'a' + i;
  }
  ep = epoll_create1(0);
  for (int i = 0; i < SLOTS; i++) {
    start(&slots[i]);
  }
  struct epoll_event events[SLOTS];
  for (int w = 3; w < argc; w++) {
    int measured = argv[w][0] == 'm';
    long end = now_us() + atol(argv[w] + 1) * 1000000L;
    long done0 = done, failed0 = failed;
    double cpu0 = server_cpu_s(argv[2]);
    long t0 = now_us();
    memset(latencies, 0, sizeof latencies);
    while (now_us() < end) {
      int n = epoll_wait(ep, events, SLOTS, 100);
      for (int i = 0; i < n; i++) {
        on_event(events[i].data.ptr, events[i].events);
      }
      for (int again = retries; again > 0; again--) {
        start(retry[--retries]);
      }
    }
    if (measured) {
      double seconds = (now_us() - t0) / 1e6, cpu = server_cpu_s(argv[2]) - cpu0;
      long count = done - done0;
      printf("connections/s %.0f cpu_us_per_connection %.1f p50_us %ld p99_us %ld failed %ld\n", count / seconds,
             count ? cpu * 1e6 / count : 0.0, percentile(count, 0.50), percentile(count, 0.99), failed - failed0);
      fflush(stdout);
    }
  }
  return 0;
}
