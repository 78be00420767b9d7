#!/usr/bin/env python3
"""Send-and-never-read load on `brisk lab up --echo` (issue 29, memory limits): opens N
connections, writes 64 KiB blocks on each as fast as the kernel takes them and never
reads, and prints the server's VmRSS/VmHWM every 5 s. Run inside the lab's namespace:

    ip netns exec NETNS python3 scripts/lab-send-no-read.py 198.18.0.1 7 400 55 BRISK_PID

Bounded: at most 64 MiB per connection and SECONDS of sending; every socket is closed
at the end.
"""
import os, resource, selectors, socket, sys, time
addr, port, n, secs, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 100, max(n + 100, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
CAP = 64 << 20  # bytes per connection at most
def rss():
    d = dict(l.split(':', 1) for l in open(f'/proc/{pid}/status'))
    return d['VmRSS'].strip(), d['VmHWM'].strip()
socks = []
for i in range(n):
    s = socket.create_connection((addr, port), timeout=10)
    s.setblocking(False)
    socks.append(s)
print(f'{n} connected; server RSS {rss()}', flush=True)
sent = [0] * n
buf = b'x' * 65536
sel = selectors.DefaultSelector()
for i, s in enumerate(socks):
    sel.register(s, selectors.EVENT_WRITE, i)
t0 = time.monotonic(); last = t0
while time.monotonic() - t0 < secs:
    for key, _ in sel.select(timeout=0.5):
        i = key.data
        try:
            k = key.fileobj.send(buf)
            sent[i] += k
            if sent[i] >= CAP:
                sel.unregister(key.fileobj)
        except BlockingIOError:
            pass
        except OSError as e:
            print('conn', i, e); sel.unregister(key.fileobj)
    if time.monotonic() - last >= 5:
        last = time.monotonic()
        print(f't={last-t0:.0f}s sent {sum(sent)/2**30:.2f} GiB; server VmRSS/VmHWM {rss()}', flush=True)
print(f'end: sent {sum(sent)/2**30:.2f} GiB total, min {min(sent)>>20} MiB, max {max(sent)>>20} MiB per conn; server {rss()}', flush=True)
for s in socks: s.close()
