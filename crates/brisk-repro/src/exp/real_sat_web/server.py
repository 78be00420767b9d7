"""real-sat-web's Linux server (brisk repro real-sat-web; docs/mechanisms/satellite-web.md).

Python's http.server (threaded, HTTP/1.1, persistent connections) on the lab's
kernel address: GET /k answers object k of the page (SIZES), its body the
simulator's pattern (byte j of object k = (131 k) ^ (7 j) mod 256), the response
header padded to 300 bytes as the simulator's, header and body in one write;
GET /prime answers an empty body (Fast Open's priming visit). The listener uses
CUBIC and, with Fast Open (argv[4] == "1"), TCP_FASTOPEN with a queue of 16.
Prints "ready" once listening. Bounded: alarm(limit).

usage: server.py HOST PORT SIZES(comma-separated) FASTOPEN(0|1) LIMIT_S
"""
import http.server
import signal
import socket
import sys

RESPONSE_HEADER = 300

host, port = sys.argv[1], int(sys.argv[2])
sizes = [int(x) for x in sys.argv[3].split(",")]
fastopen = sys.argv[4] == "1"
signal.alarm(int(sys.argv[5]))


def body(k, n):
    kb = (k * 131) & 0xFF
    return bytes(kb ^ ((j * 7) & 0xFF) for j in range(n))


bodies = [body(k, n) for k, n in enumerate(sizes)]


def response(data):
    head = "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(data)
    pad = RESPONSE_HEADER - len(head) - len("X-Pad: \r\n") - 2
    return (head + "X-Pad: " + "a" * max(pad, 1) + "\r\n\r\n").encode() + data


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def setup(self):
        # Accepted sockets inherit the listener's algorithm; set it anyway.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        super().setup()

    def do_GET(self):
        if self.path == "/prime":
            self.wfile.write(response(b""))
            return
        try:
            k = int(self.path.lstrip("/"))
            data = bodies[k]
        except (ValueError, IndexError):
            self.send_error(404)
            return
        self.wfile.write(response(data))

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        if fastopen:
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        super().server_bind()


srv = Server((host, port), Handler)
print("ready", flush=True)
srv.serve_forever()
