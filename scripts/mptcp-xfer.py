#!/usr/bin/env python3
"""A Linux MPTCP transfer for the multipath lab (docs/emulator.md, "Two paths").

    mptcp-xfer.py server PORT            accept one MPTCP connection, read to EOF,
                                         print bytes and SHA-256
    mptcp-xfer.py client HOST PORT BYTES send BYTES (a fixed pattern), print bytes
                                         and SHA-256

Sockets are IPPROTO_MPTCP (262) with TCP_CONGESTION cubic (new namespaces default to
bbr). Every blocking call times out after 30 s.
"""
import hashlib
import socket
import sys

IPPROTO_MPTCP = 262
TIMEOUT = 30.0


def sock():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    s.settimeout(TIMEOUT)
    return s


def server(port):
    ls = sock()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    c, peer = ls.accept()
    c.settimeout(TIMEOUT)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.close()
    print(f"server: {n} bytes from {peer[0]} sha256 {h.hexdigest()}")


def client(host, port, total):
    s = sock()
    s.connect((host, port))
    chunk = bytes(range(256)) * 256
    h, n = hashlib.sha256(), 0
    while n < total:
        b = chunk[: min(len(chunk), total - n)]
        s.sendall(b)
        h.update(b)
        n += len(b)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()
    print(f"client: {n} bytes sha256 {h.hexdigest()}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "server":
        server(int(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
