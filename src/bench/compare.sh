#!/usr/bin/env bash
# Side-by-side benchmark of frame-echo and the book's C++ server (chapter 06), on this machine.
#
#   src/bench/compare.sh            build both, run every scenario, print markdown tables
#   REFS=1 src/bench/compare.sh     the same, with raw Netty and Vert.x's NetServer beside frame-echo
#
# Each server runs pinned to CPU 0 and the load generator (frame-echo's bench) to CPU 1. For each
# scenario: a warm-up run whose figures are dropped, then ROUNDS measured runs; the server's CPU time and
# resident memory are read from /proc around each measured run, and the tables show the median. Scenario 8
# is churn (bench --churn): 32 clients each connect, send one 16-byte frame, read the echo, close, and again;
# its table shows connections/s, server CPU per connection and connect-to-echo latency. Then 10,000 idle connections: server
# memory before and after, after a busy spell (for the JVM after a GC requested with jcmd, and also its
# live heap from a class histogram), and a busy client's requests/s next to them.
#
# Environment: DURATION (seconds per measured run, default 10), ROUNDS (measured runs per scenario and
# server, default 1), WARMUP (default 3), IDLE (idle
# connections, default 10000), OUT (where JSON results go, default target/compare), SKIP_BUILD=1,
# SCENARIOS (a space-separated subset of the scenario numbers 1-8; empty for only the idle test; IDLE=0
# skips the idle test), JAVA_OPTS (frame-echo's JVM flags, and the references'), BOOK=0 (leave the book's server out: an A/B run of two
# frame-echo builds takes a third less time).
# References, taken literally: REFS=1 adds a raw Netty 4.2 echo (src/bench/RawNettyEcho.java, epoll, one event loop)
# on port 1236 and a Vert.x NetServer + RecordParser echo (src/bench/VertxNetEcho.java, public API only, one event
# loop) on port 1237, both run by the JDK's source launcher on the runnable jar's classpath; they run beside
# frame-echo, measured alternately with it, and each gets a paired ratio frame-echo / reference.
# Their idle-test rows are rough: the source launcher's compiler leaves objects in the heap that are freed
# between the two readings (a 500-connection smoke run read a negative live heap per connection for both).
# A lever, before and after in the same run: BASELINE_JAR (a frame-echo jar built from another commit)
# and/or BASELINE_JAVA_OPTS (other JVM flags) add a third server, "baseline", and a ratio
# frame-echo / baseline to every scenario. The baseline runs at the same time as frame-echo (on the next
# port, idle while frame-echo is measured and the other way round) and their measured runs alternate, so
# each round gives one ratio from runs seconds apart; the table shows the median ratio and, with ROUNDS > 1,
# the lowest and highest. On a noisy machine, ROUNDS=5 or more.
# On a machine others use, run it at a raised priority (as root: nice -n -19 src/bench/compare.sh): every server and
# the load generator inherit it, so the runs measure the servers rather than the scheduler's choices (one connection
# of 32 MiB frames measured 22-26 requests/s at the default priority and 45-50 at -19 on 2026-11-28, both jars).
# Needs: java, mvn, g++, taskset, python3, and ../shared/seed beside the repository.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SEED="$ROOT/../shared/seed"
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-1}
WARMUP=${WARMUP:-3}
IDLE=${IDLE:-10000}
OUT=${OUT:-$ROOT/target/compare}
SCENARIOS=${SCENARIOS-1 2 3 4 5 6 7 8}
JAVA_OPTS=${JAVA_OPTS:-}
BASELINE_JAR=${BASELINE_JAR:-}
SERVERS=(frame-echo)
if [ -n "$BASELINE_JAR" ] || [ -n "${BASELINE_JAVA_OPTS+set}" ]; then
  SERVERS=(baseline frame-echo)
fi
if [ "${REFS:-0}" != 0 ]; then
  SERVERS+=(netty vertx)
fi
if [ "${BOOK:-1}" != 0 ]; then
  SERVERS+=(book)
fi
BASELINE_JAVA_OPTS=${BASELINE_JAVA_OPTS-$JAVA_OPTS}
PORT=1234

SCENARIO_NAMES=(
  ""
  "1 conn, depth 1, 16 B"
  "50 conns, depth 1, 16 B"
  "50 conns, depth 32, 16 B"
  "16 conns, depth 1, 4 KiB"
  "4 conns, depth 1, 1 MiB"
  "1 conn, 32 MiB frames"
  "1000 conns, depth 1, 16 B"
  "churn: 32 clients, a connection per 16 B request"
)
SCENARIO_ARGS=(
  ""
  "-c 1 -P 1 -s 16"
  "-c 50 -P 1 -s 16"
  "-c 50 -P 32 -s 16"
  "-c 16 -P 1 -s 4KiB"
  "-c 4 -P 1 -s 1MiB"
  "-c 1 -P 1 -s 32MiB"
  "-c 1000 -P 1 -s 16"
  "--churn -c 32 -s 16"
)

die() { echo "compare.sh: $*" >&2; exit 1; }
for tool in java mvn g++ taskset python3; do
  command -v "$tool" >/dev/null || die "needs $tool"
done
[ -f "$SEED/06_server.cpp" ] || die "needs the book's sources in ../shared/seed beside the repository"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number, not '$ROUNDS'"
[ "$(nproc)" -ge 2 ] || die "needs two CPUs: one for the server, one for the load generator"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT"
JAR="$ROOT/target/frame-echo.jar"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  (cd "$ROOT" && mvn -B -q -ntp package -DskipTests) || die "maven build failed"
fi
g++ -O2 -o "$OUT/06_server" "$SEED/06_server.cpp" || die "g++ failed"
# The benchmark runs from a copy, so a rebuild during a long run cannot pull the jar from under it.
cp "$JAR" "$OUT/frame-echo.jar"
cp "${BASELINE_JAR:-$JAR}" "$OUT/baseline.jar"
cp "$ROOT/src/bench/RawNettyEcho.java" "$ROOT/src/bench/VertxNetEcho.java" "$OUT/"
BENCH=(taskset -c 1 java -jar "$OUT/frame-echo.jar" bench -q -t 1)

# The book's server listens on 1234, always; a baseline and the references run beside frame-echo, on the next ports.
declare -A PORTS=([frame-echo]=$PORT [baseline]=$((PORT + 1)) [netty]=$((PORT + 2)) [vertx]=$((PORT + 3)) [book]=$PORT)
declare -A PIDS=()
stop_server() { # name
  local pid=${PIDS[$1]:-}
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  unset "PIDS[$1]"
}
stop_all() { local name; for name in "${!PIDS[@]}"; do stop_server "$name"; done; }
trap stop_all EXIT

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_server() { # name
  local port=${PORTS[$1]}
  port_in_use "$port" && die "something already listens on port $port"
  case "$1" in
    frame-echo)
      # The shipped config, with the idle test's connections on top of its usual limit.
      # shellcheck disable=SC2086
      FRAME_ECHO_MAX_CONNECTIONS=$((IDLE + 10000)) taskset -c 0 java $JAVA_OPTS -jar "$OUT/frame-echo.jar" \
        -conf "$ROOT/conf/config.json" >"$OUT/frame-echo.log" 2>&1 &
      ;;
    baseline)
      # shellcheck disable=SC2086
      # Its own defaults (conf/config.json lists every default of this commit, and may name keys an older jar
      # does not know); the settings the runs depend on (limits) have the same defaults throughout.
      FRAME_ECHO_PORT=$port FRAME_ECHO_MAX_CONNECTIONS=$((IDLE + 10000)) taskset -c 0 java $BASELINE_JAVA_OPTS \
        -jar "$OUT/baseline.jar" >"$OUT/baseline.log" 2>&1 &
      ;;
    # The references: the source launcher compiles them at start, in the server's JVM (its CPU is read
    # around each measured run only, so the compilation is not counted).
    # shellcheck disable=SC2086
    netty) taskset -c 0 java $JAVA_OPTS -cp "$OUT/frame-echo.jar" "$OUT/RawNettyEcho.java" "$port" >"$OUT/netty.log" 2>&1 & ;;
    # shellcheck disable=SC2086
    vertx) taskset -c 0 java $JAVA_OPTS -cp "$OUT/frame-echo.jar" "$OUT/VertxNetEcho.java" "$port" >"$OUT/vertx.log" 2>&1 & ;;
    book) taskset -c 0 "$OUT/06_server" >/dev/null 2>"$OUT/book.log" & ;;
  esac
  PIDS[$1]=$!
  for _ in $(seq 300); do
    port_in_use "$port" && return 0
    kill -0 "${PIDS[$1]}" 2>/dev/null || die "$1 exited at start-up"
    sleep 0.1
  done
  die "$1 did not listen on $port within 30 s"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/${PIDS[$1]}/stat"; }
# For a JVM, collect garbage first, so that RSS shows what is live rather than what awaits collection.
settle_memory() { if command -v jcmd >/dev/null && jcmd "${PIDS[$1]}" GC.run >/dev/null 2>&1; then sleep 1; fi; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/${PIDS[$1]}/status"; }
# Before a scenario's RSS is read, a JVM hands back the native memory it freed and glibc keeps (mostly the JIT compiler's
# arenas: several MiB that differ from run to run of the same jar), as -XX:TrimNativeHeapInterval does in the systemd
# unit; after the CPU time is read, so it costs the measurement nothing. RSS shows what the server holds.
trim_native() { if command -v jcmd >/dev/null; then jcmd "${PIDS[$1]}" System.trim_native_heap >/dev/null 2>&1 || true; fi; }
# The JVM's live objects (a class histogram collects garbage first), in KiB; 0 for a process without a JVM.
live_heap_kib() {
  { jcmd "${PIDS[$1]}" GC.class_histogram 2>/dev/null || true; } | awk '/^Total/ {kib = int($3 / 1024)} END {print kib + 0}'
}

measure() { # server scenario round
  local server=$1 n=$2 r=$3 before after args=${SCENARIO_ARGS[$2]}
  before=$(cpu_ticks "$server")
  # shellcheck disable=SC2086
  "${BENCH[@]}" --port "${PORTS[$server]}" $args -d "$DURATION" -w 0 --label "$server: ${SCENARIO_NAMES[$n]}" \
    --json "$OUT/$server-$n-r$r.json" >"$OUT/$server-$n-r$r.txt" \
    || echo "  (measured run reported failures; see $OUT/$server-$n-r$r.txt)" >&2
  after=$(cpu_ticks "$server")
  trim_native "$server"
  echo "{\"cpuTicks\": $((after - before)), \"clockTicks\": $(getconf CLK_TCK), \"rssKiB\": $(rss_kib "$server")}" \
    >"$OUT/$server-$n-r$r.server.json"
}

# The servers of one pass run together (each idle while another is measured); per scenario, each is warmed
# up, then the measured runs alternate, ROUNDS of them, the order reversed every round, so that the machine's
# drift falls on both sides of a ratio alike.
run_pass() { # server...
  local servers=("$@") order n r server
  for server in "${servers[@]}"; do start_server "$server"; done
  for n in $SCENARIOS; do
    echo "[${servers[*]}] scenario $n: ${SCENARIO_NAMES[$n]}" >&2
    for server in "${servers[@]}"; do
      # shellcheck disable=SC2086
      "${BENCH[@]}" --port "${PORTS[$server]}" ${SCENARIO_ARGS[$n]} -d "$WARMUP" -w 0 >/dev/null \
        || echo "  ($server: warm-up run reported failures)" >&2
    done
    for r in $(seq "$ROUNDS"); do
      order=("${servers[@]}")
      if [ $((r % 2)) = 0 ]; then order=(); for server in "${servers[@]}"; do order=("$server" "${order[@]}"); done; fi
      for server in "${order[@]}"; do measure "$server" "$n" "$r"; done
    done
  done
  for server in "${servers[@]}"; do stop_server "$server"; done
}

idle_memory() { # server
  local server=$1 before after heap_before heap_after pid_bench fds
  local bench=("${BENCH[@]}" --port "${PORTS[$server]}")
  start_server "$server"
  # One request first, so the JVM has loaded its request path before "before" is read.
  "${bench[@]}" -c 1 -n 100 >/dev/null
  "${bench[@]}" -c 1 -P 1 -s 16 -d "$WARMUP" -w 0 --json "$OUT/$server-busy-alone.json" >/dev/null
  # A busy spell first, as any server has had: the JVM touches the whole of its young generation, so
  # that "after - before" counts what the idle connections hold rather than the first use of memory
  # the heap had already reserved.
  "${bench[@]}" -c 50 -P 1 -s 16 -d "$WARMUP" -w 0 >/dev/null
  settle_memory "$server"
  before=$(rss_kib "$server")
  heap_before=$(live_heap_kib "$server")
  echo "[$server] opening $IDLE idle connections" >&2
  "${bench[@]}" --idle -c "$IDLE" -d $((DURATION + 60)) >/dev/null &
  pid_bench=$!
  for _ in $(seq 600); do
    fds=$(ls "/proc/${PIDS[$server]}/fd" | wc -l)
    [ "$fds" -ge "$IDLE" ] && break
    sleep 0.1
  done
  sleep 2   # let the last accepts settle before reading memory
  settle_memory "$server"
  after=$(rss_kib "$server")
  heap_after=$(live_heap_kib "$server")
  "${bench[@]}" -c 1 -P 1 -s 16 -d "$DURATION" -w 1 --json "$OUT/$server-busy-idle.json" >/dev/null || true
  kill "$pid_bench" 2>/dev/null || true
  wait "$pid_bench" 2>/dev/null || true
  echo "{\"before\": $before, \"after\": $after, \"heapBefore\": $heap_before, \"heapAfter\": $heap_after, \"connections\": $IDLE}" >"$OUT/$server-idle.json"
  stop_server "$server"
}

rm -f "$OUT"/*-idle.json "$OUT"/*-r[0-9]*.json
# Every server but the book's (which has port 1234 to itself) runs in one pass, measured alternately.
PASS=()
for server in "${SERVERS[@]}"; do [ "$server" = book ] || PASS+=("$server"); done
run_pass "${PASS[@]}"
if [ "${SERVERS[-1]}" = book ]; then run_pass book; fi
if [ "$IDLE" -gt 0 ]; then
  for server in "${SERVERS[@]}"; do
    idle_memory "$server"
  done
fi

python3 - "$OUT" "$SCENARIOS" "${SERVERS[*]}" "$ROUNDS" "${SCENARIO_NAMES[@]:1}" <<'PY'
import json, sys, os, statistics
out, wanted, servers, rounds, names = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4]), sys.argv[5:]
shown = {"baseline": "frame-echo (baseline)", "frame-echo": "frame-echo", "book": "book (C++, poll)",
         "netty": "raw Netty 4.2 (epoll, one loop)", "vertx": "Vert.x NetServer + RecordParser"}
# Measured in the same pass as frame-echo, seconds apart: their ratios are paired round by round.
paired = [s for s in ("baseline", "netty", "vertx") if s in servers]
keys = ("rps", "p50", "p99", "mbps", "cpu", "rss", "srvpct", "benchpct")
def load(path):
    with open(os.path.join(out, path)) as f:
        return json.load(f)
def run(server, n, r):
    b, s = load(f"{server}-{n}-r{r}.json"), load(f"{server}-{n}-r{r}.server.json")
    cpu_us = s["cpuTicks"] / s["clockTicks"] * 1e6
    req = b["requests"] or 1
    secs = b["elapsedSeconds"] or 1
    return {"rps": b["requestsPerSecond"], "p50": b["latencyMicros"]["p50"], "p99": b["latencyMicros"]["p99"],
            "mbps": b["receivedMBps"], "cpu": cpu_us / req, "rss": s["rssKiB"] / 1024,
            "srvpct": 100 * cpu_us / 1e6 / secs, "benchpct": 100 * b["clientCpuSeconds"] / secs,
            "bad": b["errors"] + b["mismatches"] + b["connectionFailures"], "churn": bool(b.get("churn"))}
def fmt(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:.2f}" if v < 10 else f"{v:.1f}"
def rows(n, columns):
    """The rows of scenario n: each server's medians, then frame-echo's ratio to each other server."""
    name = names[int(n) - 1]
    runs = {server: [run(server, n, r) for r in range(1, rounds + 1)] for server in servers}
    med = {server: {k: statistics.median(x[k] for x in runs[server]) for k in keys} for server in servers}
    for server in servers:
        r = med[server]
        flag = " (errors!)" if any(x["bad"] for x in runs[server]) else ""
        cells = [f"{r[k]:.2f}" if k == "cpu" else f"{r[k]:.1f}" if k == "rss" else f"{r[k]:.0f}" if k.endswith("pct") else fmt(r[k])
                 for k in columns]
        print(f"| {name} | {shown[server]}{flag} | " + " | ".join(cells) + " |")
    if "frame-echo" not in servers:
        return
    for other in paired:
        # Paired: round r of frame-echo against round r of the other, measured seconds apart.
        def ratio(k):
            rs = sorted(f[k] / b[k] for f, b in zip(runs["frame-echo"], runs[other]) if b[k])
            if not rs:
                return "-"
            return f"{statistics.median(rs):.2f}" + (f" ({rs[0]:.2f}-{rs[-1]:.2f})" if len(rs) > 1 else "")
        print(f"| {name} | **ratio frame-echo / {other}** | " + " | ".join(ratio(k) if not k.endswith("pct") else "" for k in columns) + " |")
    if "book" in servers:
        fe, o = med["frame-echo"], med["book"]
        print(f"| {name} | **ratio frame-echo / book** | "
              + " | ".join((f"{fe[k] / o[k]:.2f}" if o[k] else "-") if not k.endswith("pct") else "" for k in columns) + " |")
first = servers[0]
steady = [n for n in wanted if not run(first, n, 1)["churn"]]
churn = [n for n in wanted if run(first, n, 1)["churn"]]
print(f"Medians of {rounds} measured run(s) per scenario and server." if rounds > 1 else "One measured run per scenario and server.")
if steady:
    print()
    print("| scenario | server | requests/s | p50 µs | p99 µs | MB/s each way | server CPU µs/request | server RSS MiB | server CPU % | bench CPU % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in steady:
        rows(n, ("rps", "p50", "p99", "mbps", "cpu", "rss", "srvpct", "benchpct"))
if churn:
    print()
    print("| churn scenario | server | connections/s | server CPU µs/connection | connect-to-echo p50 µs | connect-to-echo p99 µs | server RSS MiB | server CPU % | bench CPU % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in churn:
        rows(n, ("rps", "cpu", "p50", "p99", "rss", "srvpct", "benchpct"))
if not any(os.path.exists(os.path.join(out, f"{server}-idle.json")) for server in servers):
    sys.exit(0)
print()
print("| idle connections | server | RSS before MiB | RSS after MiB | KiB per connection | live heap KiB per connection | busy client alone, requests/s | busy client beside them, requests/s |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for server in servers:
    i = load(f"{server}-idle.json")
    alone, beside = load(f"{server}-busy-alone.json"), load(f"{server}-busy-idle.json")
    per = (i["after"] - i["before"]) / i["connections"]
    heap = f"{(i['heapAfter'] - i['heapBefore']) / i['connections']:.2f}" if i.get("heapAfter") else "-"
    print(f"| {i['connections']:,} | {shown[server]} | {i['before']/1024:.1f} | {i['after']/1024:.1f} | {per:.2f} | {heap} | {fmt(alone['requestsPerSecond'])} | {fmt(beside['requestsPerSecond'])} |")
PY
