#!/usr/bin/env bash
# frame-echo behind a real HAProxy (Debian's package: apt-get install haproxy), with the PROXY protocol v1
# (send-proxy) and v2 (send-proxy-v2): clients bound to different loopback addresses echo through HAProxy, the
# per-address limit counts the address HAProxy carried (maxConnectionsPerIp 1: a second client from one address is
# turned away while a client from another is served), and a client that reaches frame-echo directly, without a
# header, is closed. Skips (exit 0) when haproxy is not installed. Needs target/frame-echo.jar and python3.
# Loopback only; every wait is bounded. Usage: bash src/it/haproxy.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
jar=target/frame-echo.jar
if ! command -v haproxy >/dev/null; then
  echo "haproxy.sh: haproxy is not installed: skipped"
  exit 0
fi
[ -f "$jar" ] || { echo "haproxy.sh: $jar missing: run mvn package first" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

java -jar "$jar" -conf '{"host":"127.0.0.1","port":0,"maxConnectionsPerIp":1,"idleGiveWayMs":0,
  "netServerOptions":{"useProxyProtocol":true},"proxyTrustedPeers":"127.0.0.1"}' >"$work/server.log" 2>&1 &
pids+=($!)
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's/.*frame-echo listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/server.log" >&2; echo "haproxy.sh: frame-echo did not start" >&2; exit 1; }

v1=$(free_port)
v2=$(free_port)
cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 100
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend v1
    bind 127.0.0.1:$v1
    default_backend echo_v1
frontend v2
    bind 127.0.0.1:$v2
    default_backend echo_v2
backend echo_v1
    server echo 127.0.0.1:$port send-proxy
backend echo_v2
    server echo 127.0.0.1:$port send-proxy-v2
CFG
haproxy -c -q -f "$work/haproxy.cfg"
haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
pids+=($!)

status=0
python3 - "$v1" "$v2" "$port" <<'PY' || status=$?
import socket, struct, sys, time
v1, v2, direct = (int(a) for a in sys.argv[1:4])

def connect(port, source):
    deadline = time.monotonic() + 10
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            return s
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)

def echo(s, payload):
    s.sendall(struct.pack("<I", len(payload)) + payload)
    got = b""
    try:
        while len(got) < 4 + len(payload):
            chunk = s.recv(65536)
            if not chunk:
                return False
            got += chunk
    except (socket.timeout, ConnectionResetError):
        return False
    return got == struct.pack("<I", len(payload)) + payload

failures = []
def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)

# Each version with addresses of its own: no round waits for the server to see the other's closes.
for name, port, one, other in (("v1 (send-proxy)", v1, "127.0.0.2", "127.0.0.3"),
                               ("v2 (send-proxy-v2)", v2, "127.0.0.4", "127.0.0.5")):
    a = connect(port, one)
    check(name + ": a client from " + one + " is echoed", echo(a, b"hello through haproxy " + name.encode()))
    b = connect(port, other)
    check(name + ": a client from " + other + " is echoed", echo(b, b"another address"))
    c = connect(port, one)
    check(name + ": a second client from " + one + " is turned away (maxConnectionsPerIp 1 counts the carried address)",
          not echo(c, b"over the limit"))
    for s in (a, b, c):
        s.close()

d = connect(direct, "127.0.0.1")
check("a client without a header, straight to frame-echo, is closed", not echo(d, b"no header here"))
d.close()
sys.exit(1 if failures else 0)
PY
if grep -q "Proxy protocol support could not be enabled" "$work/server.log"; then
  echo "FAIL Vert.x's per-connection PROXY warning was logged" >&2
  status=1
fi
grep -E "PROXY protocol header|rejected" "$work/server.log" || true
exit $status
