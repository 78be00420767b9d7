#!/usr/bin/env python3
"""Idle-connection load on `brisk lab up --echo`: opens N connections and keeps them
idle, then times fresh echo round trips (connect, 64 bytes there and back, close)
and counts the server's threads. Run inside the lab's namespace:

    ip netns exec NETNS python3 scripts/lab-idle-load.py 198.18.0.1 7 20000 BRISK_PID

Bounded: N connections (at most 30000), 50 probes, 60 s of waiting at most.
"""
import os, resource, selectors, socket, sys, time


def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def probe(addr, port, timeout=10.0):
    t0 = time.monotonic()
    s = socket.create_connection((addr, port), timeout=timeout)
    s.sendall(b"x" * 64)
    got = b""
    while len(got) < 64:
        b = s.recv(64 - len(got))
        if not b:
            break
        got += b
    s.close()
    return time.monotonic() - t0


def percentile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    addr, port, n, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    n = min(n, 30000)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:  # root may raise the hard limit too
        resource.setrlimit(resource.RLIMIT_NOFILE, (n + 1000, max(hard, n + 1000)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    base = [probe(addr, port) for _ in range(20)]
    print(f"before: threads {threads(pid)}, probe p50 {percentile(base, .5)*1e3:.2f} ms")
    socks, pending = [], []
    sel = selectors.DefaultSelector()
    t0 = time.monotonic()
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((addr, port))
        pending.append(s)
        sel.register(s, selectors.EVENT_WRITE)
        # At most 500 handshakes in flight (the server's backlog is 128).
        while len(sel.get_map()) >= 500 or (i == n - 1 and sel.get_map()):
            if time.monotonic() - t0 > 60:
                break
            for key, _ in sel.select(1.0):
                sel.unregister(key.fileobj)
                if key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    socks.append(key.fileobj)
                else:
                    key.fileobj.close()
            if i != n - 1 and len(sel.get_map()) < 500:
                break
    print(f"opened {len(socks)} idle connections in {time.monotonic()-t0:.1f} s")
    time.sleep(2)
    lat = [probe(addr, port) for _ in range(50)]
    print(
        f"with {len(socks)} idle: threads {threads(pid)}, probe p50 {percentile(lat, .5)*1e3:.2f} ms, "
        f"p99 {percentile(lat, .99)*1e3:.2f} ms, max {max(lat)*1e3:.2f} ms"
    )
    for s in socks:
        s.close()


main()
