#!/usr/bin/env bash
# The event-bus handler's path against a local RequestHandler, in one run: requests/s and p99 of frame-echo's bench
# (8 connections, 16-byte frames, pipelined 1 and 16 deep) against one frame-echo answering with the payload
# upper-cased:
#   local     a RequestHandler whose future is complete at once (src/bench/EventBusPath.java)
#   eventbus  the event-bus handler, the consumer (UpperCaseConsumer) in the same Vert.x
#   cluster   the event-bus handler on node A (the jar, -cluster), the consumer on node B (another JVM), Hazelcast on
#             loopback with conf/cluster.xml under a cluster name of its own
# With BASELINE_JAR, the same rows for that jar, measured alternately with the new one.
#
#   flock /tmp/frame-echo-bench.lock src/bench/eventbus_path.sh            (JAR, default target/frame-echo.jar)
#
# Environment: JAR, BASELINE_JAR, DURATION (seconds per run, default 8), OUT (default target/eventbus-path).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
JAR="${JAR:-$ROOT/target/frame-echo.jar}"
DURATION="${DURATION:-8}"
OUT="${OUT:-$ROOT/target/eventbus-path}"
HZ="--add-modules java.se --add-exports java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.management/sun.management=ALL-UNNAMED --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED"
mkdir -p "$OUT"
sed "s|<cluster-name>frame-echo</cluster-name>|<cluster-name>ebpath-$$</cluster-name>|" "$ROOT/conf/cluster.xml" > "$OUT/cluster.xml"
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits until PORT answers a frame (at most 90 s).
wait_ready() {
  python3 - "$1" <<'PY'
import socket, struct, sys, time
port, deadline = int(sys.argv[1]), time.monotonic() + 90
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(struct.pack("<I", 2) + b"hi")
            if len(s.recv(6)) > 0:
                sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit(1)
PY
}

# start LABEL JARFILE MODE: starts the server(s), sets PORT
start() {
  local label=$1 jar=$2 mode=$3
  PORT=$(free_port)
  case $mode in
    local|eventbus)
      java -Xmx1g -cp "$jar" "$OUT/EventBusPath.java" "$mode" "$PORT" >"$OUT/$label-$mode.log" 2>&1 & PIDS+=($!) ;;
    cluster)
      java -Xmx1g -Dvertx.hazelcast.config="$OUT/cluster.xml" $HZ -jar "$jar" io.frameecho.example.UpperCaseConsumer -cluster \
        >"$OUT/$label-consumer.log" 2>&1 & PIDS+=($!)
      java -Xmx1g -Dvertx.hazelcast.config="$OUT/cluster.xml" $HZ -jar "$jar" -cluster \
        -conf "{\"host\":\"127.0.0.1\",\"port\":$PORT,\"handler\":{\"type\":\"eventbus\"}}" >"$OUT/$label-$mode.log" 2>&1 & PIDS+=($!) ;;
  esac
  wait_ready "$PORT" || { echo "eventbus_path.sh: $label $mode did not start; see $OUT" >&2; exit 1; }
}

stop() { cleanup; wait 2>/dev/null || true; PIDS=(); }

cp "$ROOT/src/bench/EventBusPath.java" "$OUT/"
declare -A RESULT
JARS=("new:$JAR")
[ -n "${BASELINE_JAR:-}" ] && JARS+=("baseline:$BASELINE_JAR")
for mode in local eventbus cluster; do
  for entry in "${JARS[@]}"; do
    label=${entry%%:*}; jar=${entry#*:}
    start "$label" "$jar" "$mode"
    for depth in 1 16; do
      json="$OUT/$label-$mode-$depth.json"
      java -jar "$JAR" bench -p "$PORT" -c 8 -P "$depth" -s 16 -d "$DURATION" -q --json "$json" >/dev/null 2>&1 || true
      RESULT[$label-$mode-$depth]=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f %.2f" % (d["requestsPerSecond"], d["latencyMicros"]["p99"] / 1000))' "$json" 2>/dev/null || echo "0 -1")
    done
    stop
  done
done
echo "| path | depth | $(for e in "${JARS[@]}"; do printf '%s req/s | %s p99 ms | ' "${e%%:*}" "${e%%:*}"; done)"
echo "|---|---|$(for e in "${JARS[@]}"; do printf -- '---|---|'; done)"
for mode in local eventbus cluster; do
  for depth in 1 16; do
    row="| $mode | $depth |"
    for e in "${JARS[@]}"; do read -r rps p99 <<<"${RESULT[${e%%:*}-$mode-$depth]}"; row="$row $rps | $p99 |"; done
    echo "$row"
  done
done
