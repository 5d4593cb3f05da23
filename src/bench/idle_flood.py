#!/usr/bin/env python3
"""The idle flood of the idle-give-way issue (idleGiveWayMs), against the runnable jar, on this machine.

  python3 src/bench/idle_flood.py         run the three cases, print a markdown table (about 40 s)

Each case starts its own server on 127.0.0.1 (free ports, metrics on) with maxConnections 2,000, fills it:
10 active clients that each echo a 16-byte frame every 200 ms (every echo checked byte-exact, within 5 s),
then 1,990 idle connections that connect and never send. Once the last idle connection has been connected
for idleGiveWayMs (plus 0.5 s), the newcomers come. In cases 1 and 2, 5 fresh clients one after another:
each connects, sends one 16-byte frame at once and reads, and stays connected to the end, so that every one
of them finds the server full. Then the idle connections are swept: each either still open, or ended by a
FIN (recv gives b'') or by a reset (ConnectionResetError); an ended one is closed, as a client does at the
end of its stream (the server counts idle_evicted when that close completes; a client that never closes
holds it open for up to a second, min(lingerTimeoutMs, 1000)). The active clients go on for another second,
then everyone closes and the server gets SIGTERM: it must exit with 143 within 20 s. The table also shows
how many closes and rejections the rate-limited log lines add up to (shown, not checked: the first three of
a cause get a line each, then a summary a second counts what happened since the previous line, so whatever
follows the last line is not logged until the next event a second later).

  1  give way (idleGiveWayMs 1000): every fresh client must have its echo, byte-exact, within 1 s of
     connecting (connect included); exactly one idle connection per fresh client ends, each with a FIN,
     none with a reset; the idle_evicted close count must match, nothing is rejected, and the server logs
     its INFO line "closed an idle connection for a newcomer".
  2  off (idleGiveWayMs 0): every fresh client is turned away with a FIN (a clean end of stream, no echo,
     no reset) within 1 s; no idle connection ends; the rejected count must match, and the server logs
     its WARN line "rejected a connection".
  3  connect flood (idleGiveWayMs 1000): an attacker opens connections that never send, as fast as it can,
     up to 6,000 open at once, and opens another for each one the server ends, for 20 s (about 200,000
     connects here). The event loop lags by a second or more under it, and an active client's next request
     can sit unread in the kernel while newcomers arrive: it must not be taken for idle (#21: "a client that
     is using its connection is never closed for a newcomer"). The attacker runs in a process of its own:
     thousands of sockets in this one would starve the active clients' threads of the GIL, and they would
     be idle for real. Meanwhile fresh clients come one after another, 0.5 s apart, each closed after its
     echo or its end; they compete with the attacker's connections on equal terms, so how many were served
     is shown, not checked. Idle connections may all go, each with a FIN, none with a reset; something must
     be idle_evicted or rejected (else the flood never filled the server). The table adds the largest gap
     between an active client's echoes from the flood on (the loop's lag as a client sees it; 0.2 s when
     there is none) and how many connections the attacker opened and how they ended.

In all three, a row fails when an active client misses an echo, gets a wrong one, or is closed (the problem
then says the longest any closed client paused between an echo and its next request: under idleGiveWayMs,
it was busy, not idle). The exit status is then 1 (2 on a bad option or a file-descriptor limit that cannot
be raised).

Options: --jar PATH (default target/frame-echo.jar, built with mvn when missing), --only N (a case; repeat
it for several), --max-connections N (default 2000; the idle connections fill it up beside the active
ones), --active N (10), --fresh N (cases 1 and 2, 5), --give-way-ms MS (idleGiveWayMs of cases 1 and 3,
1000), --flood N (case 3's connections open at once, 6000), --flood-seconds S (case 3, 20), --instances N
(the launcher's -instances, 1), --json FILE (the rows as JSON), --out DIR (server logs, default
target/idle_flood).
Environment: JAVA (default java), JAVA_OPTS (the server's JVM flags, e.g. -Xmx1g).
Needs: Linux, python3 (standard library only; and benchserver.py, beside this script), java 17+, mvn if the
jar is not built, and a hard limit on open files (ulimit -Hn) of at least maxConnections + 500, and with
case 3 maxConnections + flood + 500 (the server holds the attacker's connections too): the script raises
its soft limit itself, and the server inherits it.
"""
import argparse
import errno
import multiprocessing
import os
import re
import resource
import selectors
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # benchserver is imported from the source tree: no __pycache__ left there
import benchserver  # noqa: E402 (beside this script: its directory is on sys.path)
from benchserver import (CLOSED, HOST, OPEN, ROOT, Server, connect, frame, open_connections,  # noqa: E402
                         read_frame, until)

FRESH_LIMIT_S = 1.0  # the issue: the fresh client is served within a second
FRAME = 16  # bytes of payload in every frame
INTERVAL_S = 0.2  # an active client's pace
ECHO_WAIT_S = 5.0  # longest an active client's echo may take (the JVM is cold at first, and 1,990 connects arrive)
FLOOD_FRESH_PAUSE_S = 0.5  # between two fresh clients during the connect flood
LOG_LINES_SHOWN = 8  # per case, below the table
OPEN_BATCH = 200  # connects the attacker starts between two looks at the ones it has
EVICTED = CLOSED % "idle_evicted"
REJECTED = 'frame_echo_connections_rejected_total{limit="maxConnections"}'
# Rate-limited: the first three lines one connection each, then "N more" summaries, one a second.
GAVE_WAY_LINE = re.compile(r"INFO .*closed (an|\d+ more) idle connection(?:\(s\))? for (?:a )?newcomer.*")
REJECTED_LINE = re.compile(r"WARN .*rejected (a|\d+ more) connection(?:\(s\))?.*")


def logged(pattern, log):
    """How many connections each matching line of the log counts: 1 for a line of its own, N for "N more"."""
    return [1 if n in ("a", "an") else int(n.split()[0]) for n in pattern.findall(log)]


def raise_fd_limit(needed):
    """Raises this process's soft limit on open files (the server inherits it); exits 2 when the hard limit is too low."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        print(f"idle_flood.py: needs {needed} open files, but the hard limit is {hard}: raise it "
              f"(ulimit -Hn, or LimitNOFILE for a service) or pass a smaller --max-connections (or --flood)",
              file=sys.stderr)
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
        self.quiet = 0.0  # longest from an echo to the next request: the client's own pause, not the server's
        self.failure = None  # the first failure; the client stops there
        self.closed = False  # the server ended the connection (EOF or reset)
        self.stopping = threading.Event()

    def run(self):
        next_at = time.monotonic()
        try:
            while not self.stopping.is_set():
                payload = os.urandom(FRAME)
                start = time.monotonic()
                if self.latencies:
                    self.quiet = max(self.quiet, start - sum(self.latencies[-1]))
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


def largest_gap(latencies, since):
    """The longest time between two echoes of an active client, the later one at or after since; None if no such."""
    echoes = [sent + took for sent, took in latencies]
    return max((b - a for a, b in zip(echoes, echoes[1:]) if b >= since), default=None)


def flood(port, most, seconds, report):
    """Case 3's attacker, in a process of its own: connections that never send, opened as fast as it can up to
    most at once, each one the server ends (FIN or reset) closed and opened anew, for seconds; then it closes the
    rest. Sends on report its start (time.monotonic(): one clock for all processes on Linux), then its counts."""
    counts = {"opened": 0, "FIN": 0, "reset": 0, "failed": 0, "most_open": 0}
    with selectors.DefaultSelector() as sel:
        start = time.monotonic()
        report.send(start)
        while time.monotonic() < start + seconds:
            for _ in range(min(OPEN_BATCH, most - len(sel.get_map()))):
                try:
                    sock = socket.socket()
                except OSError:  # out of descriptors: counted, tried again after the next look
                    counts["failed"] += 1
                    break
                sock.setblocking(False)
                if sock.connect_ex((HOST, port)) not in (0, errno.EINPROGRESS):
                    sock.close()
                    counts["failed"] += 1
                    continue
                sel.register(sock, selectors.EVENT_WRITE)  # writable once connected (or failed)
                counts["opened"] += 1
            counts["most_open"] = max(counts["most_open"], len(sel.get_map()))
            for key, events in sel.select(0.05):
                sock, end = key.fileobj, None
                if events & selectors.EVENT_WRITE:
                    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        end = "failed"
                    else:
                        sel.modify(sock, selectors.EVENT_READ)
                else:
                    try:
                        if not sock.recv(4096):
                            end = "FIN"
                    except ConnectionResetError:
                        end = "reset"
                    except OSError:
                        end = "failed"
                if end:
                    sel.unregister(sock)
                    sock.close()
                    counts[end] += 1
        for key in list(sel.get_map().values()):
            key.fileobj.close()
    report.send(counts)


def connect_flood(port, args, row):
    """Case 3's newcomers: flood() for args.flood_seconds in a process of its own (thousands of sockets in this
    one would starve the active clients' threads of the GIL, and they would look idle for real), and meanwhile
    fresh clients one after another, each closed after its outcome. Sets row['newcomers_at'] (the flood's
    start), row['fresh'] and row['attacker'] (its counts); returns a problem, or None."""
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no lock or thread of this one inherited
    receiver, sender = spawn.Pipe(duplex=False)
    attacker = spawn.Process(target=flood, args=(port, args.flood, args.flood_seconds, sender), daemon=True)
    attacker.start()
    sender.close()
    try:
        if not receiver.poll(30):
            return "the attacker did not start within 30 s"
        row["newcomers_at"] = started = receiver.recv()
        row["fresh"] = fresh = []
        while time.monotonic() < started + args.flood_seconds:
            took, outcome, _ = fresh_client(port, False)
            fresh.append((took, outcome))
            time.sleep(FLOOD_FRESH_PAUSE_S)
        if not receiver.poll(max(0.0, started + args.flood_seconds - time.monotonic()) + 30):
            return "the attacker did not finish within 30 s of the flood's end"
        row["attacker"] = receiver.recv()
    except EOFError:
        attacker.join(10)
        return f"the attacker died (exit status {attacker.exitcode})"
    finally:
        receiver.close()
        attacker.join(10)
        if attacker.is_alive():
            attacker.kill()
            attacker.join(10)
    return None


# ---- the cases ----

CASES = {  # title, gives way, connect flood
    1: ("give way", True, False),
    2: ("off (idleGiveWayMs 0)", False, False),
    3: ("connect flood", True, True),
}


def run(number, args):
    title, giving_way, flooding = CASES[number]
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
        row["newcomers_at"] = time.monotonic()
        if flooding:
            # Fresh clients compete with the attacker's connections on equal terms: shown, not checked.
            failure = connect_flood(server.port, args, row)
            if failure:
                problems.append(failure)
        else:
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
        if not flooding and ends["FIN"] != expected_ends:
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
        since = row.get("newcomers_at", float("inf"))
        row["active"] = [(a.echoed, a.sent, a.failure, a.closed, a.worst,
                          max((t for at, t in a.latencies if at >= since), default=None),
                          largest_gap(a.latencies, since), a.quiet)
                         for a in actives]
        closed = [a for a in actives if a.closed]
        if closed:
            # Their longest pause tells clients that really were idle for idleGiveWayMs from ones closed while busy.
            problems.append(f"{len(closed)} of {len(actives)} active client(s) closed by the server, though none "
                            f"had paused longer than {max(a.quiet for a in closed):.2f} s between an echo and its "
                            f"next request; e.g. {closed[0].failure}")
        for a in actives:
            if not a.closed and (a.failure or a.echoed != a.sent):
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
    row["gave_way_lines"] = logged(GAVE_WAY_LINE, log)
    row["rejected_lines"] = logged(REJECTED_LINE, log)
    if flooding:
        if metrics and row["evicted"] + row["rejected"] <= 0:
            problems.append("the flood never found the server full: nothing idle_evicted, nothing rejected")
    elif "fresh" in row:
        evicted, rejected = (args.fresh, 0) if giving_way else (0, args.fresh)
        if metrics and (row["evicted"], row["rejected"]) != (evicted, rejected):
            problems.append(f"counted {row['evicted']} idle_evicted and {row['rejected']} rejected, "
                            f"not {evicted} and {rejected}")
        if giving_way and not row["gave_way_lines"]:
            problems.append('no INFO line "closed an idle connection for a newcomer"')
        if not giving_way and not row["rejected_lines"]:
            problems.append('no WARN line "rejected a connection"')
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
             "worst echo in s | largest gap between an active client's echoes in s, from the newcomers on | "
             "attacker: connections opened (ended by the server: FIN / reset; failed to connect) | "
             "idle connections: open / FIN / reset | idle_evicted / rejected (counters) | "
             "logged: gave way / rejected | result |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        seen = r.get("fresh", [])
        if len(seen) <= 10:
            fresh = ", ".join(f"{o} {t:.3f}" for t, o in seen) or "-"
        else:
            outcomes = {o: sum(1 for _, x in seen if x == o) for o in sorted({o for _, o in seen})}
            times = sorted(t for t, _ in seen)
            fresh = (", ".join(f"{n} {o}" for o, n in outcomes.items())
                     + f": median {times[len(times) // 2]:.3f}, slowest {times[-1]:.3f}")
        if "attacker" in r:  # in the flood, how many of them were served is the figure
            fresh = f"{sum(1 for _, o in seen if o == 'echo')} of {len(seen)} served: {fresh}"
        active = r.get("active", [])
        echoed, sent = sum(a[0] for a in active), sum(a[1] for a in active)
        bad = sum(1 for a in active if a[2])
        worst = max((a[4] for a in active), default=0)
        worst_late = max((a[5] for a in active if a[5] is not None), default=None)
        late = f"{worst_late:.3f} from the newcomers on" if worst_late is not None else "none from the newcomers on"
        act = (f"{echoed} / {sent} over {len(active)}, {worst:.3f} ({late})"
               + (f", {bad} failed" if bad else "")) if active else "-"
        gaps = [a[6] for a in active if a[6] is not None]
        gap = f"{max(gaps):.3f}" if gaps else "-"
        attacker = r.get("attacker")
        att = (f"{attacker['opened']:,} (ended {attacker['FIN']:,} / {attacker['reset']:,}; "
               f"{attacker['failed']:,} failed), at most {attacker['most_open']:,} at once") if attacker else "-"
        idle = r.get("idle")
        ends = f"{idle['open']} / {idle['FIN']} / {idle['reset']}" if idle else "-"
        logged = f"{sum(r.get('gave_way_lines', []))} in {len(r.get('gave_way_lines', []))} line(s) / " \
                 f"{sum(r.get('rejected_lines', []))} in {len(r.get('rejected_lines', []))} line(s)"
        result = "FAIL: " + "; ".join(r["problems"]) if r["problems"] else "pass"
        lines.append(f"| {r['case']} | {r['idleGiveWayMs']} | {fresh} | {act} | {gap} | {att} | {ends} | "
                     f"{r.get('evicted', '-')} / {r.get('rejected', '-')} | {logged} | {result} |")
    lines.append("")
    lines.append(f"maxConnections {args.max_connections}" + (f", -instances {args.instances}" if args.instances > 1 else "")
                 + f": {args.active} active clients ({FRAME}-byte frames every "
                 f"{INTERVAL_S * 1000:.0f} ms), {args.max_connections - args.active} idle, then {args.fresh} fresh "
                 f"clients one after another, each kept open"
                 + (f"; in the connect flood, an attacker in a process of its own opens connections that never "
                    f"send, up to {args.flood:,} at once, re-opening each one the server ends, for "
                    f"{args.flood_seconds:g} s, while fresh clients come one after another (each closed after its "
                    f"outcome; shown, not checked)" if any("attacker" in r for r in rows) else "")
                 + ". The server's log lines are rate-limited (the first three of a cause in full, then one "
                   "summary a second): a summary counts what happened since the previous line, so the logged total "
                   "may trail the counters.")
    for r in rows:
        shown = r.get("log_lines", [])[:LOG_LINES_SHOWN]
        for line in shown:
            lines.append(f"- {r['case']}: `{line}`")
        if len(r.get("log_lines", [])) > len(shown):
            lines.append(f"- {r['case']}: {len(r['log_lines']) - len(shown)} more such line(s) in the server's log")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jar", help="the runnable jar (default: target/frame-echo.jar, built when missing)")
    parser.add_argument("--only", type=int, action="append", choices=sorted(CASES), help="run this case")
    parser.add_argument("--max-connections", type=int, default=2000, help="maxConnections (default 2000)")
    parser.add_argument("--active", type=int, default=10, help="active clients (default 10)")
    parser.add_argument("--fresh", type=int, default=5,
                        help="cases 1 and 2: fresh clients, one after another (default 5)")
    parser.add_argument("--give-way-ms", type=int, default=1000, help="idleGiveWayMs of cases 1 and 3 (default 1000)")
    parser.add_argument("--instances", type=int, default=1,
                        help="the launcher's -instances (default 1); a newcomer only finds idle connections of its "
                             "own event loop, and accepts go round-robin")
    parser.add_argument("--flood", type=int, default=6000,
                        help="case 3: the attacker's connections open at once (default 6000)")
    parser.add_argument("--flood-seconds", type=float, default=20.0, help="case 3: how long it floods (default 20)")
    parser.add_argument("--json", help="write the rows as JSON to this file")
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "idle_flood"), help="where server logs go")
    args = parser.parse_args()
    if (args.give_way_ms < 1 or args.active < 0 or args.fresh < 1 or args.instances < 1
            or args.max_connections <= args.active or args.flood < 1 or not 0 < args.flood_seconds <= 600):
        parser.error("needs --give-way-ms >= 1, --fresh >= 1, --active >= 0, --instances >= 1, "
                     "--max-connections > --active, --flood >= 1 and 0 < --flood-seconds <= 600")
    # This process holds the house; the server also holds every connection of the flood (the attacker, fewer).
    flooding = any(CASES[n][2] for n in args.only or CASES)
    raise_fd_limit(args.max_connections + max(args.fresh, args.flood if flooding else 0) + 500)
    args.jar = benchserver.jar("idle_flood.py", args.jar, 2)
    benchserver.run_all("idle_flood.py", "case", CASES, args.only, lambda number: run(number, args),
                        lambda rows: markdown(rows, args), args.json, args.out)


if __name__ == "__main__":
    main()
