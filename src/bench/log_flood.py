#!/usr/bin/env python3
"""The log a header flood writes: N connections (20,000 by default) each send the header ff ff ff ff (a
4 GiB frame length, a protocol error) and read until the server ends the connection. Counts the lines and
bytes the server logged from the end of its start-up until every protocol error was counted and one summary
interval more had passed, and checks the meter counted every one.

  python3 src/bench/log_flood.py [--connections N] [--threads T] [--jar PATH]

Exit status: 0 when every connection was counted and the log stayed under --max-lines (default 20); 1
otherwise; 2 when the jar given does not exist. Standard library only; shares benchserver.py with budget.py.
"""
import argparse
import concurrent.futures
import os
import sys
import tempfile
import time

import benchserver

ATTACK = b"\xff\xff\xff\xff"


def attack(port, count):
    """count connections in turn, each sends the header and reads to the end; returns how many ended cleanly."""
    ended = 0
    for _ in range(count):
        with benchserver.connect(port) as sock:
            sock.sendall(ATTACK)
            try:
                while sock.recv(4096):
                    pass
                ended += 1
            except OSError:
                pass
    return ended


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=20_000)
    p.add_argument("--threads", type=int, default=32)
    p.add_argument("--max-lines", type=int, default=20)
    p.add_argument("--jar")
    args = p.parse_args()
    jar = benchserver.jar("log_flood.py", args.jar, 2)
    out = tempfile.mkdtemp(prefix="log_flood.")
    server = benchserver.Server(jar, {"maxConnections": 0}, os.path.join(out, "server.log"))
    problems = []
    try:
        started = len(server.log().encode())
        begin = time.monotonic()
        per = [args.connections // args.threads + (1 if i < args.connections % args.threads else 0) for i in range(args.threads)]
        with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
            ended = sum(pool.map(lambda n: attack(server.port, n), per))
        seconds = time.monotonic() - begin
        counted = benchserver.until(lambda: server.gauge("frame_echo_protocol_errors_total") >= args.connections, 30)
        time.sleep(1.5)  # one summary interval and a little: the last summary line is written by its timer
        logged = server.log().encode()[started:]
    finally:
        status = server.stop()
    lines = logged.count(b"\n")
    print(f"{args.connections} connections sent ff ff ff ff in {seconds:.1f} s; {ended} ended cleanly by the server")
    print(f"protocol errors counted: {server_count(counted, args.connections)}")
    print(f"logged meanwhile: {lines} lines, {len(logged)} bytes")
    print(logged.decode(errors="replace"), end="")
    if not counted:
        problems.append("the protocol-error meter did not reach the number of connections")
    if lines > args.max_lines:
        problems.append(f"{lines} lines logged, more than {args.max_lines}")
    if status != 143:
        problems.append(f"SIGTERM ended the server with {status}, not 143")
    for problem in problems:
        print(f"log_flood.py: {problem}; server log in {out}", file=sys.stderr)
    sys.exit(1 if problems else 0)


def server_count(counted, expected):
    return f"all {expected}" if counted else "fewer than sent"


if __name__ == "__main__":
    main()
