#!/usr/bin/env bash
# Captures a Linux MPTCP v1 connection (two subflows, DSS checksums on, an ADD_ADDR
# with HMAC, a DATA_FIN) between two network namespaces this script creates, into
# the pcap given as $1. With `nosignal` as $2 the server announces nothing, so the
# client's first data usually goes with MP_CAPABLE (length 24) rather than DSS.
# With `nocsum` as $3 DSS checksums are off, so MP_CAPABLE with data is 22 bytes and
# a DSS 18, 22 or 26: the lengths where Linux pads with two NOPs after the option.
# tests/mptcp_linux.rs runs it and checks every option; the fixed vectors in
# tests/mptcp.rs (`linux_*`) were taken from two runs with
#   tshark -r OUT.pcap -T fields -e frame.number -e tcp.flags.str -e tcp.options.mptcp.subtype -e tcp.option_len -e tcp.options -e tcp.payload
# Needs root, iproute2 with `ip mptcp`, python3 and dumpcap. Addresses 198.18.0.0/15.
set -euo pipefail
out=${1:?usage: linux_capture.sh OUT.pcap [signal|nosignal] [csum|nocsum]}
signal=${2:-signal}
csum=1; [[ ${3:-csum} == nocsum ]] && csum=0
c=mpopt-cap-c-$$; s=mpopt-cap-s-$$
cleanup() {
    [[ -n ${cap:-} ]] && kill "$cap" 2>/dev/null || true
    [[ -n ${srv:-} ]] && kill "$srv" 2>/dev/null || true
    ip netns del "$c" 2>/dev/null || true
    ip netns del "$s" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$c"; ip netns add "$s"
for i in 0 1; do
    ip link add "mpc$i" netns "$c" type veth peer name "mps$i" netns "$s"
    ip -n "$c" addr add "198.18.$i.1/24" dev "mpc$i"
    ip -n "$s" addr add "198.18.$i.2/24" dev "mps$i"
    ip -n "$c" link set "mpc$i" up; ip -n "$s" link set "mps$i" up
done
ip -n "$c" link set lo up; ip -n "$s" link set lo up
for ns in "$c" "$s"; do
    ip netns exec "$ns" sysctl -qw net.mptcp.enabled=1 net.mptcp.checksum_enabled=$csum
    ip -n "$ns" mptcp limits set subflows 2 add_addr_accepted 2
done
# The server announces its second address: ADD_ADDR with HMAC, echoed by the client,
# which then joins it (MP_JOIN SYN, SYN/ACK, ACK).
if [[ $signal != nosignal ]]; then
    ip -n "$s" mptcp endpoint add 198.18.1.2 dev mps1 signal
fi
ip netns exec "$c" dumpcap -q -i mpc0 -i mpc1 -w "$out" 2>/dev/null &
cap=$!
# Wait until dumpcap has written its file header (it is capturing), at most 5 s.
for _ in $(seq 50); do [[ -s $out ]] && break; sleep 0.1; done
sleep 0.5
ip netns exec "$s" timeout 15 python3 -c '
import socket
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
l.bind(("0.0.0.0", 8080)); l.listen(1)
a, _ = l.accept()
got = b""
while True:
    d = a.recv(65536)
    if not d: break
    got += d
a.sendall(b"bye")
a.close()
' &
srv=$!
sleep 0.5
ip netns exec "$c" timeout 10 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
s.connect(("198.18.0.2", 8080))
s.sendall(b"hello, mptcp")
time.sleep(1.0)
for i in range(20):
    s.sendall(bytes([65 + i]) * 1000)
    time.sleep(0.02)
s.shutdown(socket.SHUT_WR)
s.recv(100)
s.close()
'
wait "$srv"; srv=
sleep 1
kill "$cap"; wait "$cap" 2>/dev/null || true; cap=
