#!/usr/bin/env python3
"""How fast /health/live and /health/ready answer while the frame port is under a burst: the jar's own `bench`
(1,000 connections pipelining 1-byte frames by default) loads the server, and a probe asks the health endpoint
every 50 ms, as a Kubernetes probe would, timing each answer (connect included).

  python3 src/bench/probe_latency.py [--connections N] [--pipeline P] [--seconds S] [--jar PATH] [-- launcher args]

Prints the probes' p50, p99 and maximum and how many took over 100 ms and over 1 s, for each path. Exit status:
0 when /health/live answered every probe within 100 ms at the 99th percentile, 1 otherwise, 2 when the jar given
does not exist. Standard library only; shares benchserver.py with budget.py.
"""
import argparse
import http.client
import os
import subprocess
import sys
import tempfile
import threading
import time

import benchserver


def probe(port, path, until, samples):
    while time.monotonic() < until:
        start = time.monotonic()
        try:
            conn = http.client.HTTPConnection(benchserver.HOST, port, timeout=5)
            conn.request("GET", path)
            conn.getresponse().read()
            conn.close()
            samples.append(time.monotonic() - start)
        except OSError:
            samples.append(5.0)
        time.sleep(max(0.0, 0.05 - (time.monotonic() - start)))


def summary(samples):
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] * 1000
    return (f"{len(s)} probes: p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {s[-1] * 1000:.1f} ms, "
            f"{sum(1 for x in s if x > 0.1)} over 100 ms, {sum(1 for x in s if x > 1)} over 1 s"), pick(0.99)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=1000)
    p.add_argument("--pipeline", type=int, default=16)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--jar")
    p.add_argument("launcher", nargs="*", help="launcher arguments after -conf (e.g. -instances 2)")
    args = p.parse_args()
    jar = benchserver.jar("probe_latency.py", args.jar, 2)
    out = tempfile.mkdtemp(prefix="probe_latency.")
    server = benchserver.Server(jar, {}, os.path.join(out, "server.log"), args.launcher)
    try:
        load = subprocess.Popen(["java", "-jar", jar, "bench", "-p", str(server.port), "-c", str(args.connections),
                                 "-P", str(args.pipeline), "-s", "1", "-d", str(args.seconds + 4), "-w", "0", "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(3)  # the burst's connections open and reach full speed
        until = time.monotonic() + args.seconds
        live, ready = [], []
        threads = [threading.Thread(target=probe, args=(server.metrics_port, path, until, samples))
                   for path, samples in (("/health/live", live), ("/health/ready", ready))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        bench_out = load.communicate(timeout=60)[0]
    finally:
        server.stop()
    rate = next((l for l in bench_out.splitlines() if "requests/s" in l), bench_out.strip()[-200:])
    print(f"load: {args.connections} connections, pipeline {args.pipeline}, 1-byte frames: {rate.strip()}")
    live_line, live_p99 = summary(live)
    print(f"/health/live  {live_line}")
    print(f"/health/ready {summary(ready)[0]}")
    sys.exit(0 if live_p99 <= 100 else 1)


if __name__ == "__main__":
    main()
