#!/usr/bin/env bash
# Churn, cold and warm, against frame-echo and the two references, with the independent C client (churn.c):
#
#   src/bench/churn.sh                  ROUNDS (default 5) rounds; each round starts each server afresh, in turn
#
# Each server runs pinned to CPU 0, the client to CPU 1, 32 connections at a time. A run measures the first 5 s
# after the port opens (cold: what a reconnect storm after a restart meets), churns 10 s more, then measures 5 s
# (warm: after 15 s of churn). The order of the servers turns every round, so drift falls on each alike. It prints
# each run, then per server the medians, and the medians of frame-echo's per-round ratios to each reference.
# Environment: ROUNDS, JAR (default target/frame-echo.jar), OUT (default target/churn), JAVA_OPTS; BASELINE_JAR (a
# frame-echo jar of another build, run as "baseline" beside the others for an A/B), SERVERS (a subset, in the order
# "frame-echo baseline vertx netty", e.g. SERVERS="frame-echo baseline").
# Run it on a quiet machine, as root at a raised priority: nice -n -19 src/bench/churn.sh
# Needs: java and javac, gcc, taskset, python3, and a built jar (mvn -B package -DskipTests).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-5}
JAR=${JAR:-$ROOT/target/frame-echo.jar}
OUT=${OUT:-$ROOT/target/churn}
JAVA_OPTS=${JAVA_OPTS:-}
mkdir -p "$OUT"
[ -f "$JAR" ] || { echo "churn.sh: no $JAR (mvn -B package -DskipTests)" >&2; exit 1; }
# Without TIME_WAIT reuse (Linux's default, 2, allows it on loopback) the source ports run out within seconds.
[ "$(cat /proc/sys/net/ipv4/tcp_tw_reuse)" != 0 ] || { echo "churn.sh: needs net.ipv4.tcp_tw_reuse 1 or 2" >&2; exit 1; }
gcc -O2 -o "$OUT/churn" "$ROOT/src/bench/churn.c"
cp "$JAR" "$OUT/frame-echo.jar"
[ -z "${BASELINE_JAR:-}" ] || cp "$BASELINE_JAR" "$OUT/baseline.jar"
# The references compiled beforehand, so that no compiler runs in their JVM before the port opens (cold is cold).
javac -d "$OUT/classes" -cp "$OUT/frame-echo.jar" "$ROOT/src/bench/RawNettyEcho.java" "$ROOT/src/bench/VertxNetEcho.java"

if [ -n "${BASELINE_JAR:-}" ]; then DEFAULT_SERVERS="frame-echo baseline vertx netty"; else DEFAULT_SERVERS="frame-echo vertx netty"; fi
read -ra SERVERS <<<"${SERVERS:-$DEFAULT_SERVERS}"
declare -A PORTS=([frame-echo]=1234 [baseline]=1235 [netty]=1236 [vertx]=1237)
pid=
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=; fi; }
trap stop EXIT
trap 'exit 130' INT TERM
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

run() { # server round
  local port=${PORTS[$1]} cp="$OUT/classes:$OUT/frame-echo.jar"
  port_open "$port" && { echo "churn.sh: something already listens on port $port" >&2; exit 1; }
  # shellcheck disable=SC2086
  case $1 in
    frame-echo|baseline) FRAME_ECHO_PORT=$port FRAME_ECHO_HOST=127.0.0.1 taskset -c 0 java $JAVA_OPTS -jar "$OUT/$1.jar" >"$OUT/$1.log" 2>&1 & ;;
    netty) taskset -c 0 java $JAVA_OPTS -cp "$cp" RawNettyEcho "$port" >"$OUT/$1.log" 2>&1 & ;;
    vertx) taskset -c 0 java $JAVA_OPTS -cp "$cp" VertxNetEcho "$port" >"$OUT/$1.log" 2>&1 & ;;
  esac
  pid=$!
  # The port opens: the client starts at once (one probe connection is made first).
  local waited=0
  until port_open "$port"; do
    kill -0 "$pid" 2>/dev/null || { echo "churn.sh: $1 exited at start (see $OUT/$1.log)" >&2; exit 1; }
    [ $((waited += 1)) -le 600 ] || { echo "churn.sh: $1 did not listen on $port within 30 s" >&2; exit 1; }
    sleep 0.05
  done
  taskset -c 1 "$OUT/churn" "$port" "$pid" m5 w10 m5 | sed -n "1s/^/$1 $2 cold /p;2s/^/$1 $2 warm /p" | tee -a "$OUT/runs.txt"
  stop
}

: >"$OUT/runs.txt"
for r in $(seq "$ROUNDS"); do
  for i in "${!SERVERS[@]}"; do run "${SERVERS[$(((i + r) % ${#SERVERS[@]}))]}" "$r"; done
done

python3 - "$OUT/runs.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    server, rnd, phase = f[0], int(f[1]), f[2]
    values = dict(zip(f[3::2], map(float, f[4::2])))
    runs[(server, rnd, phase)] = values
servers = sorted({k[0] for k in runs}, key=["frame-echo", "baseline", "vertx", "netty"].index)
rounds = sorted({k[1] for k in runs})
med = statistics.median
for phase in ("cold", "warm"):
    print(f"\n{phase}: medians of {len(rounds)} runs (lowest-highest)")
    print("| server | connections/s | server CPU µs per connection | p99 µs | failed |")
    print("|---|---:|---:|---:|---:|")
    for s in servers:
        col = lambda key: [runs[(s, r, phase)][key] for r in rounds if (s, r, phase) in runs]
        cpu = col("cpu_us_per_connection")
        print(f"| {s} | {med(col('connections/s')):.0f} | {med(cpu):.1f} ({min(cpu):.1f}-{max(cpu):.1f}) | {med(col('p99_us')):.0f} | {sum(col('failed')):.0f} |")
    for ref in servers[1:]:
        ratios = [runs[("frame-echo", r, phase)]["cpu_us_per_connection"] / runs[(ref, r, phase)]["cpu_us_per_connection"]
                  for r in rounds if ("frame-echo", r, phase) in runs and (ref, r, phase) in runs]
        print(f"frame-echo / {ref}, CPU per connection, per round: " + ", ".join(f"{x:.2f}" for x in ratios)
              + f"; median {med(ratios):.2f}")
PY
