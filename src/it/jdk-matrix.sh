#!/usr/bin/env bash
# The other JDKs of the test matrix: after `mvn verify` (Java 17, the build's), each JDK given as an argument (a
# JAVA_HOME), or else every JDK under /usr/lib/jvm newer than the default java, runs
#   1. the runnable jar: --version, a start on a free port whose stderr and log must hold no WARNING (JDK 24+ warns
#      about native access unless the manifest declares it), the book's client scenario through it, a SIGTERM stop;
#   2. the tests that depend on the JDK (virtual threads, the transports, start-up checks) through Surefire with
#      that JDK's java (-Djvm), from the classes `mvn verify` compiled.
# .ci/run calls it; by hand: bash src/it/jdk-matrix.sh [JAVA_HOME...]. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
jar=target/frame-echo.jar
[ -f "$jar" ] || { echo "jdk-matrix: $jar missing: run mvn verify (or package) first" >&2; exit 1; }

major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }

homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then
  default=$(major "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  for home in /usr/lib/jvm/*/; do
    home=${home%/}
    [ -x "$home/bin/java" ] && [ ! -L "$home" ] || continue
    m=$(major "$home")
    [ -n "$m" ] && [ "$m" -gt "$default" ] && homes+=("$home")
  done
fi
if [ ${#homes[@]} -eq 0 ]; then
  echo "jdk-matrix: no JDK newer than the default one: nothing to run"
  exit 0
fi

tests='PromisesTest,ProxyProtocolTest,StartupChecksTest,FrameEchoServerTest,PausedReadingTest,UnixSocketTest,TlsTest,EpollProbeTest'
for home in "${homes[@]}"; do
  java="$home/bin/java"
  echo "== jdk-matrix: Java $(major "$home") ($home)"
  "$java" -jar "$jar" --version
  log=$(mktemp)
  "$java" -jar "$jar" -conf '{"host":"127.0.0.1","port":0}' >"$log" 2>&1 &
  pid=$!
  port=""
  for _ in $(seq 1 300); do
    port=$(sed -n 's/.*frame-echo listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    kill "$pid" 2>/dev/null || true
    cat "$log" >&2
    echo "jdk-matrix: the jar did not start on $home" >&2
    exit 1
  fi
  "$java" -jar "$jar" client --port "$port" >/dev/null
  kill -TERM "$pid"
  wait "$pid" || [ $? -eq 143 ]
  if grep -q "WARNING" "$log"; then
    cat "$log" >&2
    echo "jdk-matrix: the jar warned at start on $home" >&2
    exit 1
  fi
  rm -f "$log"
  echo "jdk-matrix: the jar starts without a warning, echoes and stops on Java $(major "$home")"
  mvn -B -ntp -o -Dstyle.color=never surefire:test -Djvm="$java" -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false
done
