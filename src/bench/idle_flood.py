#!/usr/bin/env python3
"""The idle flood of the idle-give-way issue (idleGiveWayMs), against the runnable jar, on this machine.

  python3 src/bench/idle_flood.py         run both cases, print a markdown table (about 20 s)

Each case starts its own server on 127.0.0.1 (free ports, metrics on) with maxConnections 2,000, fills it:
10 active clients that each echo a 16-byte frame every 200 ms (every echo checked byte-exact, within 5 s),
then 1,990 idle connections that connect and never send. Once the last idle connection has been connected
for idleGiveWayMs (plus 0.5 s), 5 fresh clients arrive one after another: each connects, sends one 16-byte
frame at once and reads. Each fresh client stays connected to the end, so that every one of them finds the
server full. Then the idle connections are swept: each either still open, or ended by a FIN (recv gives
b'') or by a reset (ConnectionResetError); an ended one is closed, as a client does at the end of its
stream (the server counts idle_evicted when that close completes; a client that never closes holds it
open for up to a second, min(lingerTimeoutMs, 1000)). The active clients go on for another second, then everyone closes and the
server gets SIGTERM: it must exit with 143 within 20 s. The table also shows how many closes and rejections
the rate-limited log lines add up to (shown, not checked: a line counts what happened since the previous
one, so whatever follows the last line is not logged until the next event a second later).

  1  give way (idleGiveWayMs 1000): every fresh client must have its echo, byte-exact, within 1 s of
     connecting (connect included); exactly one idle connection per fresh client ends, each with a FIN,
     none with a reset; the idle_evicted close count must match, nothing is rejected, and the server logs
     its INFO line "closed N idle connection(s) for newcomers".
  2  off (idleGiveWayMs 0): every fresh client is turned away with a FIN (a clean end of stream, no echo,
     no reset) within 1 s; no idle connection ends; the rejected count must match, and the server logs
     its WARN line "rejected N connection(s)".

In both, a row fails when an active client misses an echo, gets a wrong one, or is closed. The exit
status is then 1 (2 on a bad option or a file-descriptor limit that cannot be raised).

Options: --jar PATH (default target/frame-echo.jar, built with mvn when missing), --only N (a case; repeat
it for several), --max-connections N (default 2000; the idle connections fill it up beside the active
ones), --active N (10), --fresh N (5), --give-way-ms MS (case 1's idleGiveWayMs, 1000), --instances N (the
launcher's -instances, 1), --json FILE (the rows as JSON), --out DIR (server logs, default target/idle_flood).
Environment: JAVA (default java), JAVA_OPTS (the server's JVM flags, e.g. -Xmx1g).
Needs: Linux, python3 (standard library only; and benchserver.py, beside this script), java 17+, mvn if the
jar is not built, and a hard limit on open files (ulimit -Hn) of at least maxConnections + 500: the script
raises its soft limit itself, and the server inherits it.
"""
import argparse
import os
import re
import resource
import selectors
import sys
import threading
import time

sys.dont_write_bytecode = True  # benchserver is imported from the source tree: no __pycache__ left there
import benchserver  # noqa: E402 (beside this script: its directory is on sys.path)
from benchserver import CLOSED, OPEN, ROOT, Server, connect, frame, open_connections, read_frame, until  # noqa: E402

FRESH_LIMIT_S = 1.0  # the issue: the fresh client is served within a second
FRAME = 16  # bytes of payload in every frame
INTERVAL_S = 0.2  # an active client's pace
ECHO_WAIT_S = 5.0  # longest an active client's echo may take (the JVM is cold at first, and 1,990 connects arrive)
EVICTED = CLOSED % "idle_evicted"
REJECTED = 'frame_echo_connections_rejected_total{limit="maxConnections"}'
GAVE_WAY_LINE = re.compile(r"INFO .*closed (\d+) idle connection\(s\) for newcomers.*")
REJECTED_LINE = re.compile(r"WARN .*rejected (\d+) connection\(s\).*")


def raise_fd_limit(needed):
    """Raises this process's soft limit on open files (the server inherits it); exits 2 when the hard limit is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        print(f"idle_flood.py: needs {needed} open files, but the hard limit is {hard}: raise it "
              f"(ulimit -Hn, or LimitNOFILE for a service) or pass a smaller --max-connections", file=sys.stderr)
        sys.exit(2)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    except (ValueError, OSError) as e:
        print(f"idle_flood.py: cannot raise the open-files limit from {soft} to {needed} (hard {hard}): {e}",
              file=sys.stderr)
        sys.exit(2)
    return needed


# ---- clients ----

class Active(threading.Thread):
    """Echoes a FRAME-byte frame every INTERVAL_S, each checked byte-exact, until stopped or a failure."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = connect(port)
        self.sent = self.echoed = 0
        self.worst = 0.0
        self.latencies = []  # (when sent, seconds until the echo)
        self.failure = None  # the first failure; the client stops there
        self.closed = False  # the server ended the connection (EOF or reset)
        self.stopping = threading.Event()

    def run(self):
        next_at = time.monotonic()
        try:
            while not self.stopping.is_set():
                payload = os.urandom(FRAME)
                start = time.monotonic()
                self.sock.sendall(frame(payload))
                self.sent += 1
                _, echo = read_frame(self.sock, start + ECHO_WAIT_S, eof=EOFError)
                if echo != payload:
                    self.failure = f"wrong echo on frame {self.sent}"
                    return
                self.echoed += 1
                self.worst = max(self.worst, time.monotonic() - start)
                self.latencies.append((start, time.monotonic() - start))
                next_at += INTERVAL_S
                self.stopping.wait(max(0.0, next_at - time.monotonic()))
        except (EOFError, ConnectionResetError, BrokenPipeError) as e:
            self.closed = True
            self.failure = f"closed by the server after {self.echoed} echoes: {e!r}"
        except OSError as e:
            self.failure = f"after {self.echoed} echoes: {e!r}"

    def finish(self):
        self.stopping.set()
        self.join(ECHO_WAIT_S + 1)
        self.sock.close()


def fresh_client(port, expect_echo, wait=5.0):
    """Connects, sends one frame at once, reads. Returns (seconds until the outcome, outcome, socket or None):
    'echo' (whole and byte-exact), 'FIN' (a clean end of stream before any byte), 'reset', or another word."""
    payload = os.urandom(FRAME)
    start = time.monotonic()
    sock = None
    try:
        sock = connect(port)
        sock.sendall(frame(payload))
        _, echo = read_frame(sock, start + wait, eof=EOFError)
        outcome = "echo" if echo == payload else "wrong echo"
    except EOFError as e:
        outcome = "FIN" if "after 0 of 4" in str(e) else "EOF mid-frame"
    except ConnectionResetError:
        outcome = "reset"
    except TimeoutError:
        outcome = "no answer"
    except OSError as e:
        outcome = f"error {e!r}"
    took = time.monotonic() - start
    if outcome != "echo" or not expect_echo:
        if sock:
            sock.close()
        sock = None
    return took, outcome, sock


def open_idle(port, count):
    """count connections that never send; closes them all and raises if one cannot connect."""
    return open_connections(port, [b""] * count)


def sweep(socks):
    """How each idle connection stands now: {'open': n, 'FIN': n, 'reset': n, 'data': n}; closes the ended ones."""
    ends = {"open": 0, "FIN": 0, "reset": 0, "data": 0}
    with selectors.DefaultSelector() as sel:  # epoll: select() cannot take 2,000 descriptors
        for s in socks:
            sel.register(s, selectors.EVENT_READ)
        ready = {key.fileobj for key, _ in sel.select(timeout=0)}
    for s in socks:
        if s not in ready:
            ends["open"] += 1
            continue
        try:
            s.setblocking(False)
            end = "data" if s.recv(1) else "FIN"
        except ConnectionResetError:
            end = "reset"
        except BlockingIOError:
            end = "open"
        ends[end] += 1
        if end != "open":
            s.close()  # as a client does at the end of its stream: the server's lingering close ends here
    return ends


# ---- the cases ----

CASES = {
    1: ("give way", True),
    2: ("off (idleGiveWayMs 0)", False),
}


def run(number, args):
    title, giving_way = CASES[number]
    give_way_ms = args.give_way_ms if giving_way else 0
    idle_count = args.max_connections - args.active
    row = {"case": f"{number}. {title}", "idleGiveWayMs": give_way_ms, "problems": []}
    problems = row["problems"]
    try:
        server = Server(args.jar, {"maxConnections": args.max_connections, "idleGiveWayMs": give_way_ms},
                        os.path.join(args.out, f"server-{number}.log"),
                        ("-instances", str(args.instances)) if args.instances > 1 else ())
    except (RuntimeError, OSError) as e:
        return {**row, "problems": [str(e)]}
    actives, idle, fresh_socks = [], [], []
    try:
        for _ in range(args.active):
            actives.append(Active(server.port))
        for a in actives:
            a.start()
        idle = open_idle(server.port, idle_count)
        filled = until(lambda: server.gauge(OPEN) == args.max_connections, 10)
        if not filled:
            problems.append(f"the server counts {server.gauge(OPEN):.0f} open connections, not {args.max_connections}")
        time.sleep(give_way_ms / 1000 + 0.5)
        row["newcomers_at"] = newcomers_at = time.monotonic()
        fresh = []
        for _ in range(args.fresh):
            took, outcome, sock = fresh_client(server.port, giving_way)
            fresh.append((took, outcome))
            if sock:
                fresh_socks.append(sock)
        row["fresh"] = fresh
        want = "echo" if giving_way else "FIN"
        for i, (took, outcome) in enumerate(fresh, 1):
            if outcome != want:
                problems.append(f"fresh client {i}: {outcome}, not {want}")
            elif took > FRESH_LIMIT_S:
                problems.append(f"fresh client {i} took {took:.2f} s")
        time.sleep(0.5)  # the FINs of the connections that gave way, on their way
        row["idle"] = ends = sweep(idle)
        expected_ends = args.fresh if giving_way else 0
        if ends["FIN"] != expected_ends:
            problems.append(f"{ends['FIN']} idle connection(s) ended with a FIN, not {expected_ends}")
        if ends["reset"] or ends["data"]:
            problems.append(f"idle connections: {ends['reset']} reset, {ends['data']} got data")
        time.sleep(1.0)  # the active clients go on after the newcomers
        # A connection that gave way is counted once its close completes: at once here, as its client closed
        # on the FIN (a client that does not close holds the server's lingering close up to a second).
        until(lambda: server.gauge(EVICTED) >= ends["FIN"], 3)
    except OSError as e:
        problems.append(f"clients: {e!r}")
    finally:
        for a in actives:
            a.finish()
        row["active"] = [(a.echoed, a.sent, a.failure, a.closed, a.worst,
                          max((t for at, t in a.latencies if at >= row.get("newcomers_at", float("inf"))), default=0.0))
                         for a in actives]
        for a in actives:
            if a.failure or a.echoed != a.sent:
                problems.append(f"active client: {a.failure or f'{a.echoed} of {a.sent} echoed'}")
        try:
            metrics = server.metrics() if server.proc.poll() is None else {}
        except OSError as e:
            metrics = {}
            problems.append(f"metrics: {e!r}")
        for s in idle + fresh_socks:
            s.close()
    log = server.log()
    row["evicted"] = int(metrics.get(EVICTED, -1))
    row["rejected"] = int(metrics.get(REJECTED, -1))
    row["gave_way_lines"] = [int(n) for n in GAVE_WAY_LINE.findall(log)]
    row["rejected_lines"] = [int(n) for n in REJECTED_LINE.findall(log)]
    if "fresh" in row:
        evicted, rejected = (args.fresh, 0) if giving_way else (0, args.fresh)
        if metrics and (row["evicted"], row["rejected"]) != (evicted, rejected):
            problems.append(f"counted {row['evicted']} idle_evicted and {row['rejected']} rejected, "
                            f"not {evicted} and {rejected}")
        if giving_way and not row["gave_way_lines"]:
            problems.append('no INFO line "closed N idle connection(s) for newcomers"')
        if not giving_way and not row["rejected_lines"]:
            problems.append('no WARN line "rejected N connection(s)"')
        if giving_way and row["rejected_lines"]:
            problems.append(f"the server rejected newcomers: {row['rejected_lines']}")
    if server.proc.poll() is not None:
        problems.append(f"the server died (exit status {server.proc.returncode})")
    status = server.stop()
    if status != 143:
        problems.append("the server did not stop on SIGTERM within 20 s" if status is None
                        else f"the server exited with {status} on SIGTERM, not 143")
    row["log_lines"] = [line.split(" - ", 1)[-1] for line in log.splitlines()
                        if GAVE_WAY_LINE.search(line) or REJECTED_LINE.search(line)]
    return row


def markdown(rows, args):
    lines = ["| case | idleGiveWayMs | fresh clients: outcome in s (connect included) | active clients: echoed / sent, "
             "worst echo in s | idle connections: open / FIN / reset | idle_evicted / rejected (counters) | "
             "logged: gave way / rejected | result |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        seen = r.get("fresh", [])
        if len(seen) <= 10:
            fresh = ", ".join(f"{o} {t:.3f}" for t, o in seen) or "-"
        else:
            outcomes = {o: sum(1 for _, x in seen if x == o) for o in sorted({o for _, o in seen})}
            times = sorted(t for t, _ in seen)
            fresh = (", ".join(f"{n} {o}" for o, n in outcomes.items())
                     + f": median {times[len(times) // 2]:.3f}, slowest {times[-1]:.3f}")
        active = r.get("active", [])
        echoed, sent = sum(a[0] for a in active), sum(a[1] for a in active)
        bad = sum(1 for a in active if a[2])
        worst = max((a[4] for a in active), default=0)
        worst_late = max((a[5] for a in active), default=0)
        act = (f"{echoed} / {sent} over {len(active)}, {worst:.3f} ({worst_late:.3f} from the newcomers on)"
               + (f", {bad} failed" if bad else "")) if active else "-"
        idle = r.get("idle")
        ends = f"{idle['open']} / {idle['FIN']} / {idle['reset']}" if idle else "-"
        logged = f"{sum(r.get('gave_way_lines', []))} in {len(r.get('gave_way_lines', []))} line(s) / " \
                 f"{sum(r.get('rejected_lines', []))} in {len(r.get('rejected_lines', []))} line(s)"
        result = "FAIL: " + "; ".join(r["problems"]) if r["problems"] else "pass"
        lines.append(f"| {r['case']} | {r['idleGiveWayMs']} | {fresh} | {act} | {ends} | "
                     f"{r.get('evicted', '-')} / {r.get('rejected', '-')} | {logged} | {result} |")
    lines.append("")
    lines.append(f"maxConnections {args.max_connections}" + (f", -instances {args.instances}" if args.instances > 1 else "")
                 + f": {args.active} active clients ({FRAME}-byte frames every "
                 f"{INTERVAL_S * 1000:.0f} ms), {args.max_connections - args.active} idle, then {args.fresh} fresh "
                 f"clients one after another, each kept open. The server's log lines are rate-limited (one a "
                 f"second): a line counts what happened since the previous one, so the logged total may trail "
                 f"the counters.")
    for r in rows:
        for line in r.get("log_lines", []):
            lines.append(f"- {r['case']}: `{line}`")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jar", help="the runnable jar (default: target/frame-echo.jar, built when missing)")
    parser.add_argument("--only", type=int, action="append", choices=sorted(CASES), help="run this case")
    parser.add_argument("--max-connections", type=int, default=2000, help="maxConnections (default 2000)")
    parser.add_argument("--active", type=int, default=10, help="active clients (default 10)")
    parser.add_argument("--fresh", type=int, default=5, help="fresh clients, one after another (default 5)")
    parser.add_argument("--give-way-ms", type=int, default=1000, help="idleGiveWayMs of case 1 (default 1000)")
    parser.add_argument("--instances", type=int, default=1,
                        help="the launcher's -instances (default 1); a newcomer only finds idle connections of its "
                             "own event loop, and accepts go round-robin")
    parser.add_argument("--json", help="write the rows as JSON to this file")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "idle_flood"), help="where server logs go")
    args = parser.parse_args()
    if (args.give_way_ms < 1 or args.active < 0 or args.fresh < 1 or args.instances < 1
            or args.max_connections <= args.active):
        parser.error("needs --give-way-ms >= 1, --fresh >= 1, --active >= 0, --instances >= 1 "
                     "and --max-connections > --active")
    raise_fd_limit(args.max_connections + args.fresh + 500)
    args.jar = benchserver.jar("idle_flood.py", args.jar, 2)
    benchserver.run_all("idle_flood.py", "case", CASES, args.only, lambda number: run(number, args),
                        lambda rows: markdown(rows, args), args.json, args.out)


if __name__ == "__main__":
    main()
