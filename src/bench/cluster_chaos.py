"""Chaos on a three-node cluster on loopback: what clients of the event-bus handler see when a consumer node goes.

  python3 src/bench/cluster_chaos.py [--jar JAR] [--conf JSON] [--out DIR] [--json FILE] [--ha]

Node A serves frames with the event-bus handler (its -conf is {"handler": {"type": "eventbus", "timeoutMs":
5000}, "maxBufferedBytes": 64 MiB} merged with --conf), nodes B and C run the jar's UpperCaseConsumer. Hazelcast
with conf/cluster.xml under a cluster name of its own. Run it under the bench lock (flock
/tmp/frame-echo-bench.lock). Python standard library and the JDK's jcmd.

  kill   8 connections, each keeping 8 requests of 16 bytes in flight (reconnecting when closed); kill -9 of B
         after 3 s, then 12 s more. Reports the longest time any connection went without an answer after the
         kill (stall), requests lost on closed connections (failed), connections closed, answers in the 12 s.
  freeze C (now the only consumer) frozen with SIGSTOP; 9 clients in turn each send 4 frames of 8 MiB and wait
         for the answers or the close (at most timeoutMs + 3 s). A's live heap after a full GC (jcmd), its RSS,
         frame_echo_buffered_bytes (and their peaks, sampled every 0.25 s); then SIGCONT and the same again.

  --ha   instead: HA failover of the frame server. A (haEnabled, its deployment ha) and B (a consumer, haEnabled);
         kill -9 of A; the time until A's port answers a frame again (B has redeployed frame-echo there), and
         until B's log says it listens.

Prints one JSON object with the figures (and writes it to --json); the node logs are in --out.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchserver  # noqa: E402
from benchserver import HOST, frame, read_frame, until  # noqa: E402

HZ_ARGS = ("--add-modules java.se --add-exports java.base/jdk.internal.ref=ALL-UNNAMED --add-opens "
           "java.base/java.lang=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens "
           "java.management/sun.management=ALL-UNNAMED --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED")
MIB = 1 << 20


def cluster_config(out):
    """conf/cluster.xml under a cluster name of its own, so that no other cluster on the machine is joined."""
    with open(os.path.join(benchserver.ROOT, "conf", "cluster.xml")) as f:
        xml = f.read()
    xml = xml.replace("<cluster-name>frame-echo</cluster-name>", f"<cluster-name>chaos-{uuid.uuid4().hex[:8]}</cluster-name>")
    path = os.path.join(out, "cluster.xml")
    with open(path, "w") as f:
        f.write(xml)
    return path


def consumer(jar, xml, log_path, ha=False):
    log = open(log_path, "wb")
    cmd = ["java", "-Xmx512m", f"-Dvertx.hazelcast.config={xml}", *HZ_ARGS.split(), "-jar", jar,
           "io.frameecho.example.UpperCaseConsumer", "-cluster", *(["-options", '{"haEnabled":true}'] if ha else [])]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    if not until(lambda: "upper-case consumer on" in open(log_path, errors="replace").read() or proc.poll() is not None, 90):
        raise RuntimeError(f"consumer did not start: {log_path}")
    return proc


def heap_after_gc(pid):
    """Live heap in MiB after a full GC, from jcmd GC.heap_info ('used NNNK' of the whole heap)."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"used (\d+)K", info)
    return round(int(m.group(1)) / 1024) if m else -1


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return round(int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024)


def meters(server, prefixes=("frame_echo_eventbus", "frame_echo_buffered", "frame_echo_connections_closed",
                             "vertx_eventbus_reply_failures")):
    try:
        return {k: v for k, v in server.metrics().items() if k.startswith(prefixes)}
    except OSError:
        return {}


class PipelinedClient(threading.Thread):
    """One connection keeping `depth` requests in flight; reconnects when the server closes it."""

    def __init__(self, port, depth, stop):
        super().__init__(daemon=True)
        self.port, self.depth, self.stop = port, depth, stop
        self.answers = []  # monotonic time of each answer
        self.failed = 0  # requests in flight on a connection that closed
        self.closed = 0

    def run(self):
        payload = b"abcdefghijklmnop"
        while not self.stop.is_set():
            try:
                sock = benchserver.connect(self.port)
            except OSError:
                time.sleep(0.05)
                continue
            outstanding = 0
            try:
                sock.sendall(frame(payload) * self.depth)
                outstanding = self.depth
                while not self.stop.is_set():
                    read_frame(sock, time.monotonic() + 30)
                    self.answers.append(time.monotonic())
                    sock.sendall(frame(payload))
            except (OSError, ConnectionError, TimeoutError):
                self.closed += 1
                # Answers read before the close were counted; the rest of the window was lost.
                self.failed += outstanding
            finally:
                sock.close()


def longest_gap(times, start, end):
    points = [start] + [t for t in times if start <= t <= end] + [end]
    return max(b - a for a, b in zip(points, points[1:]))


def phase_kill(server, victim, settle=3.0, after=12.0):
    stop = threading.Event()
    clients = [PipelinedClient(server.port, 8, stop) for _ in range(8)]
    for c in clients:
        c.start()
    time.sleep(settle)
    before = meters(server)
    failed0, closed0 = sum(c.failed for c in clients), sum(c.closed for c in clients)
    killed = time.monotonic()
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    time.sleep(after)
    end = time.monotonic()
    stop.set()
    for c in clients:
        c.join(35)
    return {
        "stall_s": round(max(longest_gap(c.answers, killed, end) for c in clients), 2),
        "failed": sum(c.failed for c in clients) - failed0,
        "connections_closed": sum(c.closed for c in clients) - closed0,
        "answers_after_kill": sum(sum(1 for t in c.answers if killed <= t <= end) for c in clients),
        "meters_before": before, "meters_after": meters(server),
    }


def big_client(port, frames, size, deadline):
    """Sends `frames` frames of `size` bytes and reads answers until all came, the connection closed, or the deadline."""
    got = 0
    try:
        with benchserver.connect(port) as sock:
            payload = b"x" * size
            for _ in range(frames):
                sock.sendall(frame(payload))
            while got < frames:
                read_frame(sock, deadline, digest=_Null())
                got += 1
    except (OSError, ConnectionError, TimeoutError):
        pass
    return got


class _Null:
    def update(self, _):
        pass


def phase_freeze(server, victim, timeout_ms, clients=9, frames=4, size=8 * MIB):
    pid = server.proc.pid
    base = {"heap_mib": heap_after_gc(pid), "rss_mib": rss(pid)}
    victim.send_signal(signal.SIGSTOP)
    answered = 0
    started = time.monotonic()
    peaks = {"buffered_bytes": 0, "rss_mib": 0}
    done = threading.Event()

    def sample():
        while not done.wait(0.25):
            peaks["buffered_bytes"] = max(peaks["buffered_bytes"], server.gauge("frame_echo_buffered_bytes"))
            peaks["rss_mib"] = max(peaks["rss_mib"], rss(pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for _ in range(clients):
        answered += big_client(server.port, frames, size, time.monotonic() + timeout_ms / 1000 + 3)
    done.set()
    sampler.join(5)
    frozen = {"heap_mib": heap_after_gc(pid), "rss_mib": rss(pid), "peak_buffered_bytes": peaks["buffered_bytes"],
              "peak_rss_mib": peaks["rss_mib"],
              "buffered_bytes": server.gauge("frame_echo_buffered_bytes"), "meters": meters(server),
              "seconds": round(time.monotonic() - started, 1), "answered": answered, "sent": clients * frames}
    victim.send_signal(signal.SIGCONT)
    time.sleep(5)
    thawed = {"heap_mib": heap_after_gc(pid), "rss_mib": rss(pid)}
    return {"before": base, "frozen": frozen, "after_sigcont": thawed}


def phase_ha(server, b_log):
    """kill -9 of A: seconds until its port answers a frame again, and until B's log says it listens."""
    killed = time.monotonic()
    server.proc.kill()
    server.proc.wait(10)
    listening = None
    answered = None
    deadline = killed + 60
    while time.monotonic() < deadline and answered is None:
        if listening is None and "frame-echo listening on" in open(b_log, errors="replace").read():
            listening = round(time.monotonic() - killed, 2)
        if _one_answer(server.port):
            answered = round(time.monotonic() - killed, 2)
        else:
            time.sleep(0.05)
    return {"listening_s": listening, "first_answer_s": answered}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jar")
    p.add_argument("--conf", default="{}", help="JSON merged into node A's -conf (e.g. the handler's options)")
    p.add_argument("--out", default="/tmp/cluster-chaos")
    p.add_argument("--json")
    p.add_argument("--ha", action="store_true", help="measure the HA failover of the frame server instead")
    args = p.parse_args()
    jar = benchserver.jar("cluster_chaos.py", args.jar, 2)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    xml = cluster_config(args.out)
    conf = {"handler": {"type": "eventbus", "timeoutMs": 5000}, "maxBufferedBytes": 64 * MIB}
    extra = json.loads(args.conf)
    conf["handler"].update(extra.pop("handler", {}))
    conf.update(extra)
    nodes, a = [], None
    try:
        b = consumer(jar, xml, os.path.join(args.out, "b.log"), ha=args.ha)
        nodes.append(b)
        c = consumer(jar, xml, os.path.join(args.out, "c.log"))
        nodes.append(c)
        os.environ["JAVA_OPTS"] = f"-Xmx1500m -Dvertx.hazelcast.config={xml} {HZ_ARGS}"
        if args.ha:
            c.kill()
            a = benchserver.Server(jar, conf, os.path.join(args.out, "a.log"),
                                   ["-cluster", "-options", '{"haEnabled":true}', "-deployment-options", '{"ha":true}'])
            until(lambda: _one_answer(a.port), 60, 0.5)
            result = {"conf": conf, "ha": phase_ha(a, os.path.join(args.out, "b.log"))}
        else:
            a = benchserver.Server(jar, conf, os.path.join(args.out, "a.log"), ["-cluster"])
            # Both consumers known to A: answers come back.
            until(lambda: _one_answer(a.port), 60, 0.5)
            result = {"conf": conf, "kill": phase_kill(a, b), "freeze": phase_freeze(a, c, conf["handler"]["timeoutMs"])}
    finally:
        if a is not None:
            a.stop()
        for proc in nodes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(10)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)


def _one_answer(port):
    try:
        with benchserver.connect(port) as sock:
            sock.sendall(frame(b"hello"))
            return read_frame(sock, time.monotonic() + 2)[1] == b"HELLO"
    except (OSError, ConnectionError, TimeoutError):
        return False


if __name__ == "__main__":
    main()
