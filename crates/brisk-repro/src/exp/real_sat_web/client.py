"""real-sat-web's Linux client (brisk repro real-sat-web; docs/mechanisms/satellite-web.md).

One HTTP/1.1 page load as brisk_sim::sat_web's browser does it: object 0 (the HTML)
on the first connection, then, once it is in, up to 5 more persistent connections
(6 in all), each taking the next object not yet asked for. Requests are padded to
400 bytes and the server pads its response headers to 300 (the simulator's sizes).
Every socket uses CUBIC. With Fast Open (argv[4] == "1") a priming connection first
fetches the cookie (sendto with MSG_FASTOPEN), then every page connection sets
TCP_FASTOPEN_CONNECT, so its first request rides on the SYN. Prints one JSON line:
page load time (first connect to the last body byte), HTML time, connections, and
whether every body byte was the one expected. Bounded: alarm(limit), socket timeouts.

usage: client.py HOST PORT SIZES(comma-separated) FASTOPEN(0|1) LIMIT_S
"""
import http.client
import json
import signal
import socket
import sys
import threading
import time

TCP_FASTOPEN_CONNECT = 30  # linux/tcp.h; Python 3.11 has no constant for it
REQUEST = 400
CONNECTIONS = 6

host, port = sys.argv[1], int(sys.argv[2])
sizes = [int(x) for x in sys.argv[3].split(",")]
fastopen = sys.argv[4] == "1"
signal.alarm(int(sys.argv[5]))


def body(k, n):
    kb = (k * 131) & 0xFF
    return bytes(kb ^ ((j * 7) & 0xFF) for j in range(n))


class Conn(http.client.HTTPConnection):
    def connect(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if fastopen:
            s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)
        s.settimeout(60)
        s.connect((self.host, self.port))
        cc = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        if cc.rstrip(b"\0") != b"cubic":
            raise RuntimeError("congestion control %r, not cubic" % cc)
        self.sock = s


def get(conn, k):
    path = "/%d" % k
    head = len("GET %s HTTP/1.1\r\n" % path) + len("Host: %s:%d\r\n" % (host, port))
    pad = REQUEST - head - len("X-Pad: \r\n") - 2
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.putheader("X-Pad", "a" * max(pad, 1))
    conn.endheaders()
    r = conn.getresponse()
    data = r.read()
    return r.status == 200 and data == body(k, sizes[k])


def prime():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    req = ("GET /prime HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port)).encode()
    # Blocking (a Python timeout makes the socket non-blocking: EINPROGRESS);
    # alarm() bounds it.
    s.sendto(req, socket.MSG_FASTOPEN, (host, port))
    s.settimeout(60)
    got = b""
    while b"\r\n\r\n" not in got:
        d = s.recv(4096)
        if not d:
            break
        got += d
    s.close()


if fastopen:
    prime()
    time.sleep(0.1)

lock = threading.Lock()
state = {"next": 1, "ok": True, "last": 0.0, "conns": 1}


def take():
    with lock:
        k = state["next"]
        if k >= len(sizes):
            return None
        state["next"] = k + 1
        return k


def fetch_loop(conn, k):
    try:
        while k is not None:
            ok = get(conn, k)
            t = time.monotonic()
            with lock:
                state["ok"] &= ok
                state["last"] = max(state["last"], t)
            k = take()
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        with lock:
            state["ok"] = False
            state["error"] = repr(e)
    finally:
        conn.close()


t0 = time.monotonic()
c0 = Conn(host, port, timeout=60)
ok0 = get(c0, 0)
html = time.monotonic() - t0
state["ok"] = ok0
state["last"] = time.monotonic()
threads = []
remaining = len(sizes) - 1
first = take()
if first is not None:
    threads.append(threading.Thread(target=fetch_loop, args=(c0, first)))
    for _ in range(min(CONNECTIONS - 1, remaining - 1)):
        k = take()
        if k is None:
            break
        state["conns"] += 1
        threads.append(threading.Thread(target=fetch_loop, args=(Conn(host, port, timeout=60), k)))
else:
    c0.close()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({
    "plt": state["last"] - t0,
    "html": html,
    "conns": state["conns"],
    "intact": state["ok"],
    "error": state.get("error", ""),
}), flush=True)
