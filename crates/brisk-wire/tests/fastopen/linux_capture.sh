#!/usr/bin/env bash
# Captures Linux TCP Fast Open between two network namespaces this script creates
# (198.18.0.0/15; removed on exit, also on failure or signal), into the pcap given as
# $1: `net.ipv4.tcp_fastopen = 3` in both namespaces only, a listener with
# TCP_FASTOPEN (queue 16), and a client that connects three times with
# sendto(MSG_FASTOPEN): the first SYN asks for a cookie (its data waits for the
# handshake), the later ones carry their data on the SYN with the cookie.
# Prints each namespace's `nstat` TcpExtTCPFastOpen* counters afterwards as
# `client NAME VALUE` / `server NAME VALUE` lines.
# tests/fastopen_linux.rs runs it. Needs root, python3, dumpcap, nstat.
set -euo pipefail
out=${1:?usage: linux_capture.sh OUT.pcap}
c=tfo-cap-c-$$; s=tfo-cap-s-$$
cleanup() {
    [[ -n ${cap:-} ]] && kill "$cap" 2>/dev/null || true
    [[ -n ${srv:-} ]] && kill "$srv" 2>/dev/null || true
    ip netns del "$c" 2>/dev/null || true
    ip netns del "$s" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$c"; ip netns add "$s"
ip link add tfoc0 netns "$c" type veth peer name tfos0 netns "$s"
ip -n "$c" addr add 198.18.0.1/24 dev tfoc0
ip -n "$s" addr add 198.18.0.2/24 dev tfos0
ip -n "$c" link set tfoc0 up; ip -n "$s" link set tfos0 up
ip -n "$c" link set lo up; ip -n "$s" link set lo up
for ns in "$c" "$s"; do
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_fastopen=3
done
ip netns exec "$c" dumpcap -q -i tfoc0 -w "$out" 2>/dev/null &
cap=$!
for _ in $(seq 50); do [[ -s $out ]] && break; sleep 0.1; done
sleep 0.5
ip netns exec "$s" timeout 15 python3 -c '
import socket
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
l.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
l.bind(("198.18.0.2", 8080)); l.listen(16)
for i in range(3):
    a, _ = l.accept()
    got = b""
    while True:
        d = a.recv(65536)
        if not d: break
        got += d
    a.sendall(b"ok %d" % len(got))
    a.close()
' &
srv=$!
sleep 0.5
ip netns exec "$c" timeout 10 python3 -c '
import socket
for i in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
    s.sendto(b"GET /%d HTTP/1.0\r\n\r\n" % i, socket.MSG_FASTOPEN, ("198.18.0.2", 8080))
    s.shutdown(socket.SHUT_WR)
    s.recv(100)
    s.close()
'
wait "$srv"; srv=
sleep 0.5
kill "$cap"; wait "$cap" 2>/dev/null || true; cap=
ip netns exec "$c" nstat -asz 'TcpExtTCPFastOpen*' | awk 'NR>1 {print "client", $1, $2}'
ip netns exec "$s" nstat -asz 'TcpExtTCPFastOpen*' | awk 'NR>1 {print "server", $1, $2}'
