"""What the bench scripts (budget.py, idle_flood.py) share: a frame-echo server process run from the jar,
the client-side socket helpers, and the run-every-case-and-report loop of their main().

Not a script: they import it as `benchserver` (run as `python3 src/bench/<script>.py`, from any working
directory, their own directory is on sys.path). Python standard library only.

  Server               one server on 127.0.0.1 (free ports, metrics on), started with -conf JSON; its log,
                       its Prometheus metrics, stop() with SIGTERM
  connect, open_connections, header, frame, recv_exact, read_frame
                       a client's connections and the frame format (a 4-byte little-endian length, then
                       that many bytes)
  jar, run_all         main()'s jar (built with mvn when missing) and its loop over the chosen cases
"""
import json
import os
import re
import shlex
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = "127.0.0.1"
OPEN = "frame_echo_connections_open"
CLOSED = 'frame_echo_connections_closed_total{reason="%s"}'


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def until(condition, timeout, step=0.05):
    """Polls condition() until it is true or timeout seconds have passed; returns its last value."""
    deadline = time.monotonic() + timeout
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(step)
    return value


class Server:
    """One frame-echo process: its ports, log and metrics.

    Started with -conf {host, port, metrics on their own port, **settings} and launcher_args after it;
    JAVA (default java) and JAVA_OPTS choose the JVM. Ready once the log says "frame-echo metrics on";
    raises RuntimeError when that does not come within 30 s (the process is stopped) or the process exits first.
    """

    def __init__(self, jar, settings, log_path, launcher_args=()):
        self.port, self.metrics_port = free_port(), free_port()
        conf = {"host": HOST, "port": self.port, "metrics": {"enabled": True, "port": self.metrics_port}, **settings}
        self.log_path = log_path
        with open(log_path, "wb") as log:
            cmd = [os.environ.get("JAVA", "java"), *shlex.split(os.environ.get("JAVA_OPTS", "")),
                   "-jar", jar, "-conf", json.dumps(conf), *launcher_args]
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        if not until(lambda: "frame-echo metrics on" in self.log() or self.proc.poll() is not None, 30):
            self.stop()
            raise RuntimeError("the server did not start within 30 s")
        if self.proc.poll() is not None:
            raise RuntimeError(f"the server exited at start-up ({self.proc.returncode}): {self.log()[-300:]}")

    def log(self):
        with open(self.log_path, errors="replace") as log:
            return log.read()

    def metrics(self):
        """The Prometheus endpoint as {'name{labels}': value}, without the server tag (one server here)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.metrics_port}/metrics", timeout=3) as response:
            text = response.read().decode()
        text = re.sub(r',?server="[^"]*"', "", text).replace("{,", "{").replace("{}", "")
        return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                for line in text.splitlines() if line and not line.startswith("#")}

    def gauge(self, name):
        """One metric's value; -1 when it is missing or the endpoint does not answer."""
        try:
            return self.metrics().get(name, -1)
        except OSError:
            return -1

    def stop(self, timeout=20):
        """SIGTERM, then waits; kills it past the timeout. Returns the exit status (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return None


# ---- clients ----

def connect(port, timeout=5.0):
    return socket.create_connection((HOST, port), timeout=timeout)


def open_connections(port, greetings):
    """One connection per bytes in greetings, each sending them (nothing when empty) and then nothing;
    closes them all and raises if one cannot connect or send."""
    socks = []
    try:
        for greeting in greetings:
            socks.append(connect(port))
            if greeting:
                socks[-1].sendall(greeting)
    except OSError:
        for s in socks:
            s.close()
        raise
    return socks


def header(length):
    return struct.pack("<I", length)  # 4 bytes, little-endian, unsigned


def frame(payload):
    return header(len(payload)) + payload


def recv_exact(sock, n, deadline, digest=None, eof=ConnectionError):
    """Reads n bytes before the deadline; returns them, or feeds them to digest and returns b''.
    Raises TimeoutError past the deadline, and eof (ConnectionError, or e.g. EOFError to tell a clean end
    from a reset) on an end of stream, saying "end of stream after <read> of <n> bytes"."""
    out, buf, left = bytearray(), bytearray(min(n, 1 << 20) or 1), n
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"{n - left} of {n} bytes read when time ran out")
        sock.settimeout(remaining)
        k = sock.recv_into(buf, min(left, len(buf)))
        if k == 0:
            raise eof(f"end of stream after {n - left} of {n} bytes")
        (digest.update if digest else out.extend)(memoryview(buf)[:k])
        left -= k
    return bytes(out)


def read_frame(sock, deadline, digest=None, eof=ConnectionError):
    """One frame: (its length, its payload, or b'' when fed to digest); raises as recv_exact does."""
    length = struct.unpack("<I", recv_exact(sock, 4, deadline, eof=eof))[0]
    return length, recv_exact(sock, length, deadline, digest, eof)


# ---- main() ----

def jar(script, given, missing_status):
    """The jar to run: given, or target/frame-echo.jar, built with mvn when missing. A given path that is
    not a file: '<script>: no jar at PATH' on stderr and exit status missing_status."""
    path = given or os.path.join(ROOT, "target", "frame-echo.jar")
    if not os.path.isfile(path):
        if given:
            print(f"{script}: no jar at {path}", file=sys.stderr)
            sys.exit(missing_status)
        print(f"{script}: building target/frame-echo.jar", file=sys.stderr)
        subprocess.run(["mvn", "-B", "-q", "-ntp", "package", "-DskipTests"], cwd=ROOT, check=True)
    return path


def run_all(script, word, cases, only, run, table, json_path, out):
    """Runs the cases numbered in only (all of cases, {number: (title, ...)}, when empty), in order, each
    announced on stderr as '<script>: <word> N: <title>'; run(number) returns its row, {word: ..., 'problems':
    [...], ...}. Then prints table(rows), writes the rows as JSON to json_path (when given), names the
    failed ones on stderr with where the server logs are (out), and exits: 1 when a row has problems, else 0."""
    os.makedirs(out, exist_ok=True)
    rows = []
    for number in only or sorted(cases):
        print(f"{script}: {word} {number}: {cases[number][0]}", file=sys.stderr)
        rows.append(run(number))
    print(table(rows))
    if json_path:
        with open(json_path, "w") as f:
            json.dump(rows, f, indent=2)
    failed = [r[word] for r in rows if r["problems"]]
    if failed:
        print(f"{script}: failed: {', '.join(failed)}; server logs in {out}", file=sys.stderr)
    sys.exit(1 if failed else 0)
