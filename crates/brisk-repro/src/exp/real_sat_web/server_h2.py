"""real-sat-web's Linux HTTP/2 server (brisk repro real-sat-web, REAL-WEB-4;
docs/mechanisms/satellite-web.md).

HTTP/2 (the `h2` package from PyPI, RFC 9113 framing, HPACK and flow control) over
TLS (Python's ssl module, OpenSSL; ALPN "h2" only, TLS 1.2 or 1.3 as asked) on the
lab's kernel address. GET /k answers object k of the page (SIZES), its body the
simulator's pattern (byte j of object k = (131 k) ^ (7 j) mod 256). Like the
simulator's server, it sends DATA frames of at most 16 384 bytes round-robin over the
open streams within the stream and connection windows. The listener uses CUBIC.
Prints "ready" once listening, or "error: ..." if h2 is missing. Bounded:
alarm(limit); one connection at a time.

usage: server_h2.py HOST PORT SIZES CERTFILE KEYFILE TLSVERSION(1.2|1.3) LIMIT_S
"""
import signal
import socket
import ssl
import sys

try:
    import h2.config
    import h2.connection
    import h2.events
except ImportError as e:  # reported by the experiment as inconclusive
    print("error: python3 h2 package missing (%s)" % e, flush=True)
    sys.exit(0)

host, port = sys.argv[1], int(sys.argv[2])
sizes = [int(x) for x in sys.argv[3].split(",")]
certfile, keyfile, version = sys.argv[4], sys.argv[5], sys.argv[6]
signal.alarm(int(sys.argv[7]))
FRAME = 16384


def body(k, n):
    kb = (k * 131) & 0xFF
    return bytes(kb ^ ((j * 7) & 0xFF) for j in range(n))


bodies = [body(k, n) for k, n in enumerate(sizes)]

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
v = ssl.TLSVersion.TLSv1_3 if version == "1.3" else ssl.TLSVersion.TLSv1_2
ctx.minimum_version = v
ctx.maximum_version = v
ctx.load_cert_chain(certfile, keyfile)
ctx.set_alpn_protocols(["h2"])

ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
ls.bind((host, port))
ls.listen(16)
print("ready", flush=True)


def serve(sock):
    conn = h2.connection.H2Connection(
        config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    )
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    # Open responses: stream id -> [object, bytes sent]; round-robin in this order.
    open_ = {}
    while True:
        data = sock.recv(65536)
        if not data:
            return
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                path = dict(ev.headers).get(":path", "")
                try:
                    k = int(path.lstrip("/"))
                    size = len(bodies[k])
                except (ValueError, IndexError):
                    conn.send_headers(ev.stream_id, [(":status", "404")], end_stream=True)
                    continue
                conn.send_headers(
                    ev.stream_id,
                    [(":status", "200"), ("content-length", str(size))],
                    end_stream=size == 0,
                )
                if size:
                    open_[ev.stream_id] = [k, 0]
            elif isinstance(ev, h2.events.ConnectionTerminated):
                sock.sendall(conn.data_to_send())
                return
        # One frame per open stream per pass, while the windows allow.
        moved = True
        while moved and open_:
            moved = False
            for sid in list(open_):
                k, off = open_[sid]
                n = min(
                    FRAME,
                    len(bodies[k]) - off,
                    conn.local_flow_control_window(sid),
                    conn.max_outbound_frame_size,
                )
                if n <= 0:
                    continue
                end = off + n == len(bodies[k])
                conn.send_data(sid, bodies[k][off : off + n], end_stream=end)
                moved = True
                if end:
                    del open_[sid]
                else:
                    open_[sid][1] = off + n
            sock.sendall(conn.data_to_send())
        sock.sendall(conn.data_to_send())


while True:
    c, _ = ls.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        s = ctx.wrap_socket(c, server_side=True)
        serve(s)
    except (ssl.SSLError, OSError) as e:
        print("connection error: %s" % e, file=sys.stderr, flush=True)
    finally:
        c.close()
