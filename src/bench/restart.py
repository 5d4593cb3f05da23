#!/usr/bin/env python3
"""Restarts the runnable jar under persistent clients and prints what they saw (issue #33).

    python3 src/bench/restart.py --jar target/frame-echo.jar                  # every scenario, 5,000 clients
    python3 src/bench/restart.py --jar JAR --scenarios sigterm,sigkill --clients 1000
    python3 src/bench/restart.py --jar JAR --baseline-jar OLD.jar --scenarios sigterm,tls,tls-handover,sigkill

With --baseline-jar each scenario runs first on that jar ("before"), then on --jar ("after"), in the same run; the
handover rows only on --jar (a jar without handoverSocket refuses the key). Keys of the configuration the baseline jar
does not know (check-config names them) are left out of its configuration, and the run says which.

Each client keeps one connection, sends a 16-byte frame a second (start times spread over the first second), checks
each echo, and reconnects at once when the connection ends (end of stream or reset). A request unanswered when its
connection ended is lost, unless the client re-sends it on the next connection: with --resend (the default for the
"resend" rows) a request left unanswered by a graceful end of stream (a FIN, not a reset) is re-sent, as an
application that knows its requests are idempotent does. The echo is idempotent.

Scenarios (a restart as OPERATING.md's restart section does it: a second process on the port with reusePort, then a
signal to the first):
  sigterm        SIGTERM, no successor connected for a handover: the old process drains
  sigterm-resend the same with re-sending clients
  handover       the same restart with handoverSocket set in both: the old process hands its connections to the new
                 one (a jar without the key refuses it at start, and the row says so)
  handover-resend the same with re-sending clients
  tls            TLS on both, SIGTERM (a TLS session cannot move: drained)
  tls-resend     the same with re-sending clients
  tls-handover   TLS with handoverSocket set in both (a TLS connection cannot move: the server says so at start and
                 drains)
  tls-handover-resend the same with re-sending clients
  sigkill        SIGKILL: the kernel closes the old process's sockets
  sigkill-resend the same with re-sending clients

Per scenario: lost (requests never answered), re-sent, never sent (of those lost or re-sent, written after the client's
TLS layer had read the server's close_notify, which Python's asyncio then drops: the server cannot count them), the time from the signal until every client has had an answer
to a request sent after it, and the old process's event loop's longest stall while it shut down (read from Vert.x's
blocked-thread checker, run every 10 ms with a 20 ms limit, from the signal on: "<20" when it never fired, else the
longest and its thread), with the old process's
shutdown line. Run it under the bench lock (flock /tmp/frame-echo-bench.lock ...); it uses loopback ports 1238
(frames) and 9468-9469 (metrics). Set net.ipv4.tcp_migrate_req=1 first (the script says what it is).
"""
import argparse
import asyncio
import json
import os
import re
import signal
import ssl
import struct
import subprocess
import sys
import tempfile
import time

PORT = 1238
PAYLOAD = 16
VERTX_OPTIONS = json.dumps({"blockedThreadCheckInterval": 10, "blockedThreadCheckIntervalUnit": "MILLISECONDS",
                            "maxEventLoopExecuteTime": 20, "maxEventLoopExecuteTimeUnit": "MILLISECONDS",
                            "warningExceptionTime": 1, "warningExceptionTimeUnit": "HOURS"})


class Tally:
    def __init__(self):
        self.sent = 0
        self.answered = 0
        self.lost = 0
        self.resent = 0
        self.wrong = 0
        self.ends_eof = 0
        self.ends_reset = 0
        # Requests written after the client's TLS layer had read the server's close_notify: asyncio drops such a write
        # without a word (its transport is closing), so the request never leaves the client and no server can count it.
        self.unsent = 0
        self.signal_at = None
        # Clients answered at least once.
        self.answered_once = set()
        # Client id -> when its first request sent after the signal was answered.
        self.served_after = {}


class Client:
    """One persistent client: a writer that sends a frame a second, a reader that matches echoes in order."""

    def __init__(self, ident, tally, args, tls):
        self.ident = ident
        self.tally = tally
        self.args = args
        self.tls = tls
        self.seq = 0
        self.carry = []  # requests to re-send on the next connection: (payload, sent_at)

    async def run(self, stop):
        await asyncio.sleep((self.ident % 1000) / 1000.0)
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", PORT, ssl=self.tls,
                                                               server_hostname="localhost" if self.tls else None)
            except (OSError, ssl.SSLError):
                await asyncio.sleep(0.01)
                continue
            await self.serve(reader, writer, stop)

    async def serve(self, reader, writer, stop):
        pending = []  # (payload, sent_at) in order
        closed = asyncio.Event()

        def send(payload, sent_at):
            if writer.is_closing():
                self.tally.unsent += 1
            writer.write(struct.pack("<I", len(payload)) + payload)
            pending.append((payload, sent_at))

        for payload, _ in self.carry:
            self.tally.resent += 1
            send(payload, time.monotonic())
        self.carry = []

        async def read():
            how = "eof"
            try:
                while True:
                    header = await reader.readexactly(4)
                    (length,) = struct.unpack("<I", header)
                    body = await reader.readexactly(length)
                    payload, sent_at = pending.pop(0)
                    if body != payload:
                        self.tally.wrong += 1
                    self.tally.answered += 1
                    self.tally.answered_once.add(self.ident)
                    t = self.tally.signal_at
                    if t is not None and sent_at >= t and self.ident not in self.tally.served_after:
                        self.tally.served_after[self.ident] = time.monotonic()
            except asyncio.IncompleteReadError:
                how = "eof"
            except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
                how = "reset"
            finally:
                closed.set()
            return how

        reading = asyncio.ensure_future(read())
        try:
            while not stop.is_set() and not closed.is_set():
                self.seq += 1
                payload = struct.pack("<QQ", self.ident, self.seq)
                self.tally.sent += 1
                try:
                    send(payload, time.monotonic())
                except (OSError, RuntimeError):
                    break
                try:
                    await asyncio.wait_for(closed.wait(), 1.0)
                except asyncio.TimeoutError:
                    pass
        finally:
            how = await reading if closed.is_set() else None
            if how is None:
                reading.cancel()
            writer.close()
        if how == "reset":
            self.tally.ends_reset += 1
        elif how == "eof":
            self.tally.ends_eof += 1
        if stop.is_set():
            return
        if self.args.resend and how == "eof":
            self.carry = list(pending)
        else:
            self.tally.lost += len(pending)


def config(args, tls_dir, metrics_port, handover):
    conf = json.load(open(os.path.join(args.root, "conf", "hardened.json")))
    conf.update({"host": "127.0.0.1", "port": PORT, "maxConnectionsPerIp": 0, "drainDelayMs": 0,
                 "netServerOptions": {"reusePort": True}})
    conf["metrics"]["port"] = metrics_port
    if tls_dir:
        conf["tls"] = {"certPath": os.path.join(tls_dir, "cert.pem"), "keyPath": os.path.join(tls_dir, "key.pem")}
        # Thousands of handshakes at once (every client at start, and again after a drain) take longer than the
        # default 10 s on a small machine; a handshake cut by its timeout would come back as another, and the rows
        # would measure that storm rather than the restart.
        conf["netServerOptions"]["sslHandshakeTimeout"] = 60
    for key in args.unknown_keys:
        conf.pop(key, None)
    if handover:
        conf["handoverSocket"] = handover
    return conf


def unknown_keys(jar, conf, workdir):
    """The keys of conf that jar's check-config rejects as unknown, found one at a time (it names the first)."""
    conf = dict(conf)
    dropped = []
    path = os.path.join(workdir, "check.json")
    for _ in range(len(conf)):
        json.dump(conf, open(path, "w"))
        out = subprocess.run(["java", "-jar", jar, "check-config", "-conf", path], capture_output=True, text=True)
        m = re.search(r"unknown configuration key '([^']+)'", out.stdout + out.stderr)
        if not m or m.group(1) not in conf:
            break
        dropped.append(m.group(1))
        conf.pop(m.group(1))
    return dropped


def start(args, conf, name, workdir):
    path = os.path.join(workdir, name + ".json")
    json.dump(conf, open(path, "w"))
    log = open(os.path.join(workdir, name + ".log"), "w+")
    cmd = ["java", "-Xmx1g", "-jar", args.jar, "-conf", path, "-options", VERTX_OPTIONS]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = open(log.name).read()
        if "frame-echo listening on" in text:
            return proc, log.name
        if proc.poll() is not None:
            raise SystemExit(name + " exited: " + text[-2000:])
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(name + " did not listen in 60 s")


def longest_stall(log_path, offset):
    """The longest stall the log reports after offset (its size when the signal was sent), with its thread."""
    with open(log_path) as log:
        log.seek(offset)
        text = log.read()
    blocked = [(int(ms), thread) for thread, ms in
               re.findall(r"Thread (?:Thread\[)?(?:#\d+,)?([^,\]\s]+)\S* has been blocked for (\d+) ms", text)]
    if not blocked:
        return "<20"
    ms, thread = max(blocked)
    return "%d (%s)" % (ms, thread)


async def scenario(args, name, workdir, tls_dir):
    tls = "tls" in name
    resend = name.endswith("resend") or args.resend
    kill = name.startswith("sigkill")
    handover = os.path.join(workdir, "handover.sock") if "handover" in name else None
    old, old_log = start(args, config(args, tls_dir if tls else None, 9468, handover), args.label + "-" + name + "-old",
                         workdir)
    ctx = None
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    tally = Tally()
    stop = asyncio.Event()
    run_args = argparse.Namespace(resend=resend)
    clients = [Client(i, tally, run_args, ctx) for i in range(args.clients)]
    tasks = [asyncio.ensure_future(c.run(stop)) for c in clients]
    # Every client connected (TLS handshakes take a while) and answered, then the warm-up.
    ready_by = time.monotonic() + 120
    while len(tally.answered_once) < args.clients and time.monotonic() < ready_by:
        await asyncio.sleep(0.1)
    await asyncio.sleep(args.warmup)
    warm_answered = tally.answered
    new, new_log = await asyncio.get_running_loop().run_in_executor(
        None, lambda: start(args, config(args, tls_dir if tls else None, 9469, handover), args.label + "-" + name + "-new",
                            workdir))
    # Counted from the signal: what was lost before (none expected) is reported apart.
    lost_before = tally.lost
    tally.signal_at = time.monotonic()
    log_offset = os.path.getsize(old_log)
    old.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    all_served = None
    deadline = tally.signal_at + args.settle
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        if len(tally.served_after) == args.clients and all_served is None:
            all_served = max(tally.served_after.values()) - tally.signal_at
            if old.poll() is not None:
                break
    stop.set()
    await asyncio.sleep(1.2)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    try:
        old.wait(timeout=30)
    except subprocess.TimeoutExpired:
        old.kill()
    new.send_signal(signal.SIGTERM)
    try:
        new.wait(timeout=30)
    except subprocess.TimeoutExpired:
        new.kill()
    text = open(old_log).read()
    line = re.findall(r"shut down[^\n]*", text)
    handed = re.findall(r"handover on [^\n]*no successor[^\n]*|handoverSocket [^\n]*not handed over[^\n]*", text)
    return {
        "jar": args.label, "scenario": name, "clients": args.clients, "connected": len(tally.answered_once), "warm answered": warm_answered,
        "lost": tally.lost - lost_before, "lost before signal": lost_before, "re-sent": tally.resent,
        "wrong": tally.wrong, "never sent": tally.unsent, "eof ends": tally.ends_eof, "reset ends": tally.ends_reset,
        "all served after (s)": "%.1f" % all_served if all_served is not None else
        "not in %d s (%d of %d)" % (args.settle, len(tally.served_after), args.clients),
        "longest stall (ms)": longest_stall(old_log, log_offset),
        "old process": (line[-1] if line else "-") + ((" | " + handed[-1]) if handed else ""),
    }


def make_cert(workdir):
    d = os.path.join(workdir, "tls")
    os.makedirs(d, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-keyout", os.path.join(d, "key.pem"), "-out", os.path.join(d, "cert.pem")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return d


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jar", required=True)
    p.add_argument("--baseline-jar", help="also run each scenario (but the handover ones) on this jar, first")
    p.add_argument("--clients", type=int, default=5000)
    p.add_argument("--scenarios", default="sigterm,sigterm-resend,tls,tls-resend,sigkill,sigkill-resend")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds before the restart")
    p.add_argument("--settle", type=float, default=60.0, help="seconds after the signal at most")
    p.add_argument("--resend", action="store_true", help="every scenario's clients re-send")
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--logs", help="keep the processes' configurations and logs in this directory")
    args = p.parse_args()
    args.root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        migrate = open("/proc/sys/net/ipv4/tcp_migrate_req").read().strip()
    except OSError:
        migrate = "?"
    print("jar %s, %d clients, net.ipv4.tcp_migrate_req=%s" % (args.jar, args.clients, migrate), flush=True)
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rows = []
    with tempfile.TemporaryDirectory(prefix="frame-echo-restart-") as tmp:
        workdir = args.logs or tmp
        os.makedirs(workdir, exist_ok=True)
        tls_dir = make_cert(workdir) if "tls" in args.scenarios else None
        jars = [("after", args.jar)]
        if args.baseline_jar:
            jars.insert(0, ("before", args.baseline_jar))
        dropped = {}
        for label, jar in jars:
            dropped[label] = unknown_keys(jar, config(argparse.Namespace(root=args.root, unknown_keys=[]), tls_dir,
                                                      9468, os.path.join(workdir, "handover.sock")), workdir)
            if dropped[label]:
                print("%s (%s): left out of its configuration, unknown to it: %s" % (label, jar, ", ".join(dropped[label])),
                      flush=True)
        for name in args.scenarios.split(","):
            for label, jar in jars:
                if label == "before" and "handover" in name:
                    continue
                run = argparse.Namespace(**vars(args))
                run.jar, run.label, run.unknown_keys = jar, label, dropped[label]
                try:
                    row = asyncio.run(scenario(run, name, workdir, tls_dir))
                except SystemExit as e:
                    row = {"jar": label, "scenario": name, "lost": -1, "re-sent": -1, "all served after (s)": "-",
                           "longest stall (ms)": "-", "old process": "did not start: " + str(e).splitlines()[-1][:200]}
                rows.append(row)
                print(json.dumps(row), flush=True)
    print()
    print("| scenario | jar | lost | re-sent | never sent | connections ended | all served again after | loop's longest stall (ms) "
          "| old process |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ended = r.get("eof ends", 0) + r.get("reset ends", 0)
        print("| %s | %s | %d | %d | %s | %s | %s | %s | %s |" % (
            r["scenario"], r["jar"], r["lost"], r["re-sent"], r.get("never sent", "-"),
            "%d (%d reset)" % (ended, r.get("reset ends", 0)) if "eof ends" in r else "-",
            r["all served after (s)"], r["longest stall (ms)"], r["old process"]))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
