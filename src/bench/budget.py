#!/usr/bin/env python3
"""The hostile clients of the memory-budget issue (maxBufferedBytes), against the runnable jar, on this machine.

  python3 src/bench/budget.py             run every scenario, print a markdown table (a few minutes)

Each scenario starts its own server on 127.0.0.1 (free ports, metrics on), samples its VmRSS from /proc
every 50 ms, runs the hostile clients and, while they hold the server, a fresh client that connects,
sends one small frame and times it (connect included) until the echo is back whole and byte-exact. Once
every client has closed it reads the metrics: frame_echo_buffered_bytes must be back to 0,
frame_echo_connections_budget_waiting too, and the budget_evicted close count must match the log's
eviction lines, once every connection has closed (within 30 s: a connection waiting for the budget when its
client left notices when its turn comes and it reads again, then lingers, lingerTimeoutMs). Then SIGTERM: the server must exit with 143 within 20 s. A row fails, with its reason,
on a fresh client not answered within 1.5 s, a wrong echo, a failed client, bytes still held, an
eviction where none may happen, or a server that died or would not stop; the exit status is then 1.

  1  default budget (a quarter of the heap): 94 bare headers declaring 2.1 GiB; a fresh 4 KiB frame
  2  64 MiB: 14 clients send 7 MiB of an 8 MiB frame and stall; once their sockets take no more, a fresh
     1 MiB frame (stalled holders are evicted after budgetGraceMs, 1 s)
  3  64 MiB: 100 connections declare 32 MiB, send 1 KiB and stall; a fresh 24-byte frame
  4  64 MiB: 8 clients send one 32 MiB frame each at full speed and read their echo (4x the budget)
  5  64 MiB: an 8 MiB frame uploaded at 1 MiB/s beside 10 stallers (7 of 8 MiB); it must not be evicted (8 s:
     within frameTimeoutMs)
  6  default budget: 2,000 bare headers declaring 32 MiB each; a fresh 4 KiB frame
  7  256 MiB: 1,000 quiet holders: each declares 32 MiB, pushes body bytes for 5 s as fast as the server and
     the kernel take them, then goes quiet with its socket open; a fresh 32 MiB frame (within 5 s)
  8  256 MiB: the same with 5,000 quiet holders        9, 10  7 and 8 with the default budget
  11 32 MiB: 16 clients upload 16 MiB frames at full speed for 30 s, reading and checking their echoes as
     they go; a fresh 4 KiB frame. None may be closed
  12 64 MiB: 3 clients send a 32 MiB frame each and never read their echoes; a fresh 32 MiB frame (within
     10 s: on epoll the non-readers are cut once sent nothing for a quarter of writeStallTimeoutMs, 7.5 s)

Options: --jar PATH (default target/frame-echo.jar, built with mvn when missing), --only N (a scenario;
repeat it for several), --json FILE (the rows as JSON), --out DIR (server logs, default target/budget).
Environment: JAVA (default java), JAVA_OPTS (the server's JVM flags, e.g. -Xmx1g).
Needs: Linux (/proc), python3 (standard library only; and benchserver.py, beside this script), java 17+,
and mvn if the jar is not built.
"""
import argparse
import hashlib
import os
import re
import resource
import sys
import threading
import time

sys.dont_write_bytecode = True  # benchserver is imported from the source tree: no __pycache__ left there
import benchserver  # noqa: E402 (beside this script: its directory is on sys.path)
from benchserver import CLOSED, HOST, OPEN, ROOT, connect, header, open_connections, read_frame, until  # noqa: E402

KiB, MiB = 1 << 10, 1 << 20
FRESH_LIMIT_S = 1.5  # the issue promises about a second
QUIET_FRESH_LIMIT_S = 5.0  # a fresh 32 MiB frame beside quiet holders: "within seconds"
NON_READER_FRESH_LIMIT_S = 10.0  # beside non-readers: a quarter of writeStallTimeoutMs (7.5 s), then the frame
RELEASE_LIMIT_S = 30  # frameTimeoutMs (15 s) plus lingerTimeoutMs (5 s), and room: every connection ends by then
HELD = "frame_echo_buffered_bytes"
WAITING = "frame_echo_connections_budget_waiting"
EVICTED = CLOSED % "budget_evicted"
EVICTED_LINE = "evicted for the buffer budget"
EVICTED_SUMMARY = r"(\d+) more connection\(s\) evicted in the last \d+ ms for the buffer"


class Server(benchserver.Server):
    """One frame-echo process (its ports, log, metrics), its budget as logged, and VmRSS sampled every 50 ms."""

    def __init__(self, jar, budget, log_path):
        super().__init__(jar, {"maxBufferedBytes": budget} if budget else {}, log_path)
        self.budget = int(re.search(r"maxBufferedBytes=(\d+)", self.log()).group(1))
        self.samples = []  # (monotonic time, RSS in bytes)
        self.sampling = True
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self):
        while self.sampling and (rss := self.rss()) is not None:
            self.samples.append((time.monotonic(), rss))
            time.sleep(0.05)

    def rss(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * KiB
        except OSError:
            return None

    def peak_rss(self, since, to):
        return max((rss for t, rss in self.samples if since <= t <= to), default=0)

    def stop(self, timeout=20):
        status = super().stop(timeout)
        self.sampling = False
        return status


# ---- clients ----

def fresh_client(port, size, wait=10.0):
    """One frame of size bytes on a new connection: (seconds until its echo was back, or None; problem or None)."""
    payload = os.urandom(size)
    start = time.monotonic()
    try:
        with connect(port) as s:
            s.settimeout(wait)  # the send too may wait for the budget
            s.sendall(header(size) + payload)
            length, echo = read_frame(s, start + wait)
    except OSError as e:
        return None, f"fresh client: {e!r}"
    took = time.monotonic() - start
    if length != size or echo != payload:
        return took, "fresh client: wrong echo"
    return took, (f"fresh client took {took:.2f} s" if took > FRESH_LIMIT_S else None)


def open_partial(port, declared, body=b""):
    """One connection per length in declared, each sending a header declaring it, then body, then nothing."""
    return open_connections(port, [header(length) + body for length in declared])


class Staller(threading.Thread):
    """Sends a header for an 8 MiB frame and 7 MiB of it, stalls, and notes how the server ends it (EOF or reset)."""
    BODY = bytes(7 * MiB)

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = connect(port)
        self.sent, self.last_progress, self.outcome = 0, time.monotonic(), "open"
        self.release = threading.Event()

    def run(self):
        data = memoryview(header(8 * MiB) + self.BODY)
        try:
            self.sock.settimeout(0.2)
            while self.sent < len(data) and not self.release.is_set():
                try:
                    self.sent += self.sock.send(data[self.sent:self.sent + 256 * KiB])
                    self.last_progress = time.monotonic()
                except TimeoutError:
                    pass
            while not self.release.is_set():
                try:
                    if not self.sock.recv(64 * KiB):
                        self.outcome = "EOF"
                        break
                except TimeoutError:
                    pass
        except (ConnectionResetError, BrokenPipeError):
            self.outcome = "reset"
        except OSError as e:
            self.outcome = f"error {e!r}"
        finally:
            self.sock.close()

    def stalled(self):
        return self.sent == 7 * MiB + 4 or time.monotonic() - self.last_progress > 0.5 or self.outcome != "open"


def start_stallers(port, count):
    stallers = []
    try:
        for _ in range(count):
            stallers.append(Staller(port))
    except OSError:
        close_all(stallers)
        raise
    for s in stallers:
        s.start()
    return stallers


def close_all(stallers, socks=()):
    for s in stallers:
        s.release.set()
        if not s.is_alive():
            s.sock.close()
    for s in stallers:
        s.join(5)
    for s in socks:
        s.close()


def ended(stallers):
    """How the stallers the server ended saw it: {'EOF': n, 'reset': m}."""
    ends = [s.outcome for s in stallers if s.outcome != "open"]
    return {o: ends.count(o) for o in sorted(set(ends))}


# ---- scenarios: each runs its clients (closing all of them) and returns what it saw ----

def idle_partial_frames(server, declared, body=b"", fresh_size=4 * KiB):
    """Connections that each send a header declaring declared[i] and body, then nothing; then a fresh client."""
    socks = open_partial(server.port, declared, body)
    try:
        # What arrived, plus the piece set aside for it (a frame's first piece is at least 4 KiB, at most 16 KiB).
        held = len(declared) * (4 + len(body))
        most = held if not body else len(declared) * (4 + max(len(body), 16 * KiB))
        if not until(lambda: held <= server.gauge(HELD) <= most and server.gauge(OPEN) == len(declared), 15):
            return {"problems": [f"the server never held the {len(declared)} connections' {held} bytes "
                                 f"(and at most {most} with what it set aside): {server.gauge(HELD):.0f}"]}
        took, problem = fresh_client(server.port, fresh_size)
        return {"fresh": took, "problems": [problem], "evictions": "none",
                "note": f"{held} bytes sent, declaring {sum(declared) / 2**30:.2f} GiB"}
    finally:
        close_all([], socks)


def s1_bare_headers(server):
    return idle_partial_frames(server, [32 * MiB] * 64 + [1 << p for p in range(24, 9, -1) for _ in (0, 1)])


def s2_stalled_partial_frames(server):
    stallers = start_stallers(server.port, 14)
    try:
        until(lambda: all(s.stalled() for s in stallers), 15)
        pushed = sum(s.sent for s in stallers)
        took, problem = fresh_client(server.port, MiB)
        until(lambda: server.gauge(WAITING) == 0, 3)  # evictions happen only while someone waits
        evicted = server.gauge(EVICTED)
        until(lambda: sum(s.outcome != "open" for s in stallers) >= evicted, 3)
        ends = ended(stallers)
        problems = [problem] + [f"{n} evicted staller(s) saw {o}" for o, n in ends.items() if o != "EOF"]
        if sum(ends.values()) < evicted:
            problems.append(f"{int(evicted) - sum(ends.values())} evicted staller(s) saw no end within 3 s")
        return {"fresh": took, "problems": problems, "evictions": "some", "ends": ends,
                "note": f"{pushed / MiB:.0f} MiB pushed before the fresh client"}
    finally:
        close_all(stallers)


def s3_announced_barely_sent(server):
    return idle_partial_frames(server, [32 * MiB] * 100, os.urandom(KiB), fresh_size=24)


def full_speed_client(port, size, results, i, deadline):
    """Sends one frame at full speed in one thread and reads its echo in another; results[i] = (done at, problem)."""
    payload = os.urandom(size)
    expected, digest, failed = hashlib.sha256(payload).digest(), hashlib.sha256(), []

    def send():
        try:
            s.sendall(header(size) + payload)
        except OSError as e:
            failed.append(f"client {i} sending: {e!r}")
    try:
        with connect(port) as s:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            length, _ = read_frame(s, deadline, digest)
            sender.join(max(0.0, deadline - time.monotonic()))
        ok = length == size and digest.digest() == expected and not failed
        results[i] = (time.monotonic(), None if ok else (failed or [f"client {i}: wrong echo"])[0])
    except OSError as e:
        results[i] = (time.monotonic(), f"client {i}: {e!r}")


def s4_full_speed(server, clients=8, size=32 * MiB):
    results = [None] * clients
    start = time.monotonic()
    threads = [threading.Thread(target=full_speed_client, daemon=True,
                                args=(server.port, size, results, i, start + 60)) for i in range(clients)]
    for t in threads:
        t.start()
    until(lambda: server.gauge(WAITING) > 0, 3, 0.02)
    took, problem = fresh_client(server.port, 4 * KiB)
    for t in threads:
        t.join(max(0.0, start + 65 - time.monotonic()))
    problems = [problem] + [r[1] if r else "a client did not finish" for r in results if not r or r[1]]
    done = max((r[0] for r in results if r), default=start) - start
    return {"fresh": took, "problems": problems, "evictions": "none",
            "note": f"{clients} x {size // MiB} MiB echoed in {done:.2f} s"}


def s5_steady_uploader(server, size=8 * MiB, piece=64 * KiB, rate=MiB):
    stallers = start_stallers(server.port, 10)
    try:
        until(lambda: server.gauge(WAITING) > 0, 10)
        payload = os.urandom(size)
        result = {}

        def upload():
            try:
                with connect(server.port) as s:
                    result["port"] = s.getsockname()[1]
                    s.sendall(header(size))
                    t0 = time.monotonic()
                    for off in range(0, size, piece):
                        time.sleep(max(0.0, t0 + off / rate - time.monotonic()))
                        s.sendall(payload[off:off + piece])
                    result["sent"] = time.monotonic() - t0
                    length, echo = read_frame(s, time.monotonic() + 10)
                    result["ok"] = length == size and echo == payload
            except OSError as e:
                result["error"] = repr(e)

        uploader = threading.Thread(target=upload, daemon=True)
        uploader.start()
        time.sleep(2)
        took, problem = fresh_client(server.port, 4 * KiB)
        uploader.join(size / rate + 15)
        problems = [problem]
        if not result.get("ok"):
            problems.append(f"uploader: {result.get('error', 'wrong echo or unfinished')}")
        if f"{HOST}:{result.get('port')} closing" in server.log():
            problems.append("the steady uploader was closed by the server")
        return {"fresh": took, "problems": problems, "evictions": "any", "ends": ended(stallers),
                "note": f"the uploader's 8 MiB took {result.get('sent', 0):.1f} s to send"}
    finally:
        close_all(stallers)


def s6_many_bare_headers(server, count=2000):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1000), hard))
    return idle_partial_frames(server, [32 * MiB] * count)


class DirectMemory(threading.Thread):
    """Samples the server's direct memory (Vert.x's JVM meters) and bytes held every 200 ms, until stopped."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server, self.peak_direct, self.peak_held, self.running = server, 0, 0, True

    def run(self):
        while self.running:
            try:
                metrics = self.server.metrics()
            except OSError:
                metrics = {}
            direct = sum(v for k, v in metrics.items()
                         if k.startswith("jvm_buffer_memory_used_bytes") and 'id="direct"' in k)
            self.peak_direct = max(self.peak_direct, direct)
            self.peak_held = max(self.peak_held, metrics.get(HELD, 0))
            time.sleep(0.2)


def quiet_holders(server, count, push_s=5.0, size=32 * MiB):
    """count connections announce size bytes, push body bytes for push_s seconds as fast as the server and the
    kernel take them, then go quiet with the socket open; then a fresh client's frame of size bytes."""
    memory = DirectMemory(server)
    memory.start()
    socks, sent, chunk = [], [], bytes(256 * KiB)
    try:
        for _ in range(count):
            s = connect(server.port)
            s.setblocking(False)
            s.send(header(size))
            socks.append(s)
            sent.append(0)
        start = time.monotonic()
        while time.monotonic() - start < push_s:
            moved = 0
            for i, s in enumerate(socks):
                if sent[i] < size - 1:
                    try:
                        k = s.send(chunk[:size - 1 - sent[i]])
                        sent[i] += k
                        moved += k
                    except (BlockingIOError, InterruptedError):
                        pass
            if not moved:
                time.sleep(0.05)
        took, problem = fresh_client(server.port, size, wait=60.0)
        if took is not None and problem and took <= QUIET_FRESH_LIMIT_S:
            problem = None  # seconds are the promise here, not the 1.5 s of the small frames
        memory.running = False
        memory.join(1)
        return {"fresh": took, "problems": [problem],
                "note": f"{sum(sent) / MiB:.0f} MiB pushed; peak held {memory.peak_held / MiB:.0f} MiB, "
                        f"peak direct memory {memory.peak_direct / MiB:.0f} MiB"}
    finally:
        memory.running = False
        close_all([], socks)


def uploader(port, size, upload_s, results, i, deadline):
    """Sends frames of size bytes at full speed for upload_s seconds in one thread, and reads and checks their echoes
    in another; results[i] = (frames echoed, problem or None)."""
    payloads = [os.urandom(size) for _ in range(2)]
    failed, sent, done = [], [0], threading.Event()

    def send():
        try:
            stop = time.monotonic() + upload_s
            while time.monotonic() < stop:
                s.sendall(header(size) + payloads[sent[0] % 2])
                sent[0] += 1
        except OSError as e:
            failed.append(f"uploader {i} sending: {e!r}")
        done.set()
    received = 0
    try:
        with connect(port) as s:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            threading.Thread(target=send, daemon=True).start()
            while not (done.is_set() and received == sent[0]) and not failed:
                length, echo = read_frame(s, deadline)
                if length != size or echo != payloads[received % 2]:
                    failed.append(f"uploader {i}: frame {received} echoed wrong")
                received += 1
        results[i] = (received, failed[0] if failed else None)
    except OSError as e:
        results[i] = (received, (failed or [f"uploader {i} after {received} echoes: {e!r}"])[0])


def s11_uploaders(server, clients=16, size=16 * MiB, upload_s=30.0):
    results = [None] * clients
    memory = DirectMemory(server)
    memory.start()
    start = time.monotonic()
    threads = [threading.Thread(target=uploader, daemon=True,
                                args=(server.port, size, upload_s, results, i, start + upload_s + 60))
               for i in range(clients)]
    for t in threads:
        t.start()
    until(lambda: server.gauge(WAITING) > 0, 5, 0.02)
    took, problem = fresh_client(server.port, 4 * KiB)
    for t in threads:
        t.join(max(0.0, start + upload_s + 65 - time.monotonic()))
    problems = [problem] + [r[1] if r else "an uploader did not finish" for r in results if not r or r[1]]
    echoed = sorted(r[0] for r in results if r)
    memory.running = False
    memory.join(1)
    return {"fresh": took, "problems": problems, "evictions": "none",
            "note": f"{sum(echoed)} frames echoed in {time.monotonic() - start:.0f} s, "
                    f"{echoed[0] if echoed else 0} to {echoed[-1] if echoed else 0} per uploader; peak held "
                    f"{memory.peak_held / MiB:.0f} MiB, peak direct memory {memory.peak_direct / MiB:.0f} MiB"}


def send_quietly(sock, data):
    """Sends data; a send the server ends (a cut, a timeout) is what the scenario expects."""
    try:
        sock.sendall(data)
    except OSError:
        pass


def s12_non_readers(server, clients=3, size=32 * MiB):
    socks = []
    try:
        for _ in range(clients):
            s = connect(server.port)
            socks.append(s)
            threading.Thread(target=send_quietly, args=(s, header(size) + bytes(size)), daemon=True).start()
        until(lambda: server.gauge(HELD) >= server.budget, 10, 0.02)
        took, problem = fresh_client(server.port, size, wait=30.0)
        if took is not None and problem and took <= NON_READER_FRESH_LIMIT_S:
            problem = None  # the non-readers are cut at a quarter of writeStallTimeoutMs
        return {"fresh": took, "problems": [problem], "evictions": "some",
                "note": f"{clients} clients sent {size // MiB} MiB each and read nothing"}
    finally:
        close_all([], socks)


def s7_quiet_holders(server):
    return quiet_holders(server, 1000)


def s8_many_quiet_holders(server):
    return quiet_holders(server, 5000)


SCENARIOS = {
    1: ("94 bare headers, 2.1 GiB declared", None, s1_bare_headers),
    2: ("14 x 7 MiB of 8 MiB, stalled", 64 * MiB, s2_stalled_partial_frames),
    3: ("100 x 1 KiB of 32 MiB, stalled", 64 * MiB, s3_announced_barely_sent),
    4: ("8 x 32 MiB at full speed", 64 * MiB, s4_full_speed),
    5: ("8 MiB at 1 MiB/s beside 10 stallers", 64 * MiB, s5_steady_uploader),
    6: ("2,000 bare headers of 32 MiB", None, s6_many_bare_headers),
    7: ("1,000 quiet holders of 32 MiB; a fresh 32 MiB frame", 256 * MiB, s7_quiet_holders),
    8: ("5,000 quiet holders of 32 MiB; a fresh 32 MiB frame", 256 * MiB, s8_many_quiet_holders),
    9: ("1,000 quiet holders of 32 MiB; a fresh 32 MiB frame", None, s7_quiet_holders),
    10: ("5,000 quiet holders of 32 MiB; a fresh 32 MiB frame", None, s8_many_quiet_holders),
    11: ("16 uploaders of 16 MiB frames at full speed", 32 * MiB, s11_uploaders),
    12: ("3 clients that never read their 32 MiB echoes; a fresh 32 MiB frame", 64 * MiB, s12_non_readers),
}


def run(number, jar, out):
    title, budget, attack = SCENARIOS[number]
    row = {"scenario": f"{number}. {title}", "problems": []}
    try:
        server = Server(jar, budget, os.path.join(out, f"server-{number}.log"))
    except (RuntimeError, OSError) as e:
        return {**row, "problems": [str(e)]}
    try:
        time.sleep(0.5)
        before, start = server.rss(), time.monotonic()
        try:
            seen = attack(server)
        except OSError as e:
            seen = {"problems": [f"clients: {e!r}"]}
        end = time.monotonic()
        row.update(budget=server.budget, rss_before=before, rss_peak=server.peak_rss(start, end),
                   fresh=seen.get("fresh"), ends=seen.get("ends", {}), note=seen.get("note", ""))
        row["problems"] += [p for p in seen["problems"] if p]
        if server.proc.poll() is not None:
            row["problems"].append(f"the server died (exit status {server.proc.returncode})")
        else:
            # Every connection has ended by then: one that was waiting for the budget when its client left notices when
            # its turn comes and it reads again (a paused socket is not read); then it lingers (lingerTimeoutMs, 5 s,
            # less once its client's end is read). Closes are counted when the socket closes, evictions logged when
            # decided: the counts are compared once all have closed.
            left = time.monotonic()
            until(lambda: server.gauge(OPEN) == 0 and server.gauge(HELD) == 0 and server.gauge(WAITING) == 0,
                  RELEASE_LIMIT_S)
            metrics = server.metrics()
            row.update(held_after=int(metrics.get(HELD, -1)), evicted=int(metrics.get(EVICTED, -1)),
                       waiting_after=int(metrics.get(WAITING, -1)), open_after=int(metrics.get(OPEN, -1)),
                       released_s=time.monotonic() - left, rss_after=server.rss(),
                       direct_after=sum(v for k, v in metrics.items()
                                        if k.startswith("jvm_buffer_memory_used_bytes") and 'id="direct"' in k))
            row["other_closes"] = {r: int(metrics[CLOSED % r]) for r in ("frame_timeout", "write_stall", "io_error")
                                   if metrics.get(CLOSED % r)}
            if row["held_after"] != 0 or row["waiting_after"] != 0 or row["open_after"] != 0:
                row["problems"].append(f"{RELEASE_LIMIT_S} s after the clients left: {row['held_after']} bytes held, "
                                       f"{row['waiting_after']} waiting, {row['open_after']} open")
            # Eviction lines are rate-limited: the first ones in full, then "N more connection(s) evicted ..." summaries,
            # written by a timer up to a second later (two, for a summary's window and its line).
            def eviction_lines():
                log = server.log()
                return log.count(EVICTED_LINE) + sum(int(n) for n in re.findall(EVICTED_SUMMARY, log))
            until(lambda: eviction_lines() == row["evicted"], 2.5)
            lines = eviction_lines()
            if lines != row["evicted"]:
                row["problems"].append(f"{lines} eviction log lines but budget_evicted = {row['evicted']}")
            expected = seen.get("evictions")
            if expected == "none" and row["evicted"] > 0:
                row["problems"].append(f"{row['evicted']} evicted where none may be")
            if expected == "some" and row["evicted"] == 0:
                row["problems"].append("no staller was evicted")
    except OSError as e:
        row["problems"].append(f"metrics: {e!r}")
    finally:
        status = server.stop()
        if status != 143:
            row["problems"].append("the server did not stop on SIGTERM within 20 s" if status is None
                                   else f"the server exited with {status} on SIGTERM, not 143")
    return row


def mib(n):
    return f"{n / MiB:.0f}" if n is not None else "-"


def markdown(rows):
    lines = ["| scenario | budget (MiB) | fresh client answered in (s) | peak RSS during attack (MiB) | "
             "RSS before attack (MiB) | peak minus before vs budget | evicted | after the clients left: all closed, "
             "nothing held, in (s) | then direct memory / RSS (MiB) | result |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        rise = (f"+{mib(r['rss_peak'] - r['rss_before'])} vs {mib(r['budget'])} "
                f"({(r['rss_peak'] - r['rss_before']) / r['budget']:.2f}x)") if r.get("rss_before") else "-"
        ends = ", ".join(f"{n} {o}" for o, n in r.get("ends", {}).items())
        others = "".join(f" + {n} {reason}" for reason, n in r.get("other_closes", {}).items())
        evicted = f"{r.get('evicted', '-')}{others}" + (f" (stallers saw: {ends})" if ends else "")
        fresh = f"{r['fresh']:.3f}" if r.get("fresh") is not None else "-"
        result = "FAIL: " + "; ".join(r["problems"]) if r["problems"] else "pass"
        released = f"{r['released_s']:.1f}" if r.get("released_s") is not None else "-"
        after = f"{mib(r.get('direct_after'))} / {mib(r.get('rss_after'))}" if r.get("released_s") is not None else "-"
        if r.get("note"):
            result += f" ({r['note']})"
        lines.append(f"| {r['scenario']} | {mib(r.get('budget'))} | {fresh} | {mib(r.get('rss_peak'))} | "
                     f"{mib(r.get('rss_before'))} | {rise} | {evicted} | {released} | {after} | {result} |")
    lines.append("")
    lines.append("RSS is the whole JVM process (heap, code, threads, Netty's direct memory), so compare the rise "
                 "during the attack, not the total, with the budget; bytes held may pass the budget by one frame "
                 "(admitted past it) plus a small read per connection.")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jar", help="the runnable jar (default: target/frame-echo.jar, built when missing)")
    parser.add_argument("--only", type=int, action="append", choices=sorted(SCENARIOS), help="run this scenario")
    parser.add_argument("--json", help="write the rows as JSON to this file")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "budget"), help="where server logs go")
    args = parser.parse_args()
    jar = benchserver.jar("budget.py", args.jar, 1)
    benchserver.run_all("budget.py", "scenario", SCENARIOS, args.only, lambda number: run(number, jar, args.out),
                        markdown, args.json, args.out)


if __name__ == "__main__":
    main()
