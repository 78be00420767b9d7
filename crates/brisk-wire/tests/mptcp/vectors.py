#!/usr/bin/env python3
"""Known answers for brisk-wire's MPTCP crypto and DSS checksum, from Python's
hashlib/hmac and a plain 16-bit one's-complement sum (RFC 1071), independent of the
Rust code under test. tests/mptcp.rs (`kat_*`) holds this script's output; run it
to re-derive them: `python3 crates/brisk-wire/tests/mptcp/vectors.py`."""
import hashlib, hmac, ipaddress, struct

def be64(x): return struct.pack(">Q", x)
def be32(x): return struct.pack(">I", x)

def token_idsn(key):
    h = hashlib.sha256(be64(key)).digest()
    return struct.unpack(">I", h[:4])[0], struct.unpack(">Q", h[24:])[0]

def mac(k1, k2, msg):
    return hmac.new(be64(k1) + be64(k2), msg, hashlib.sha256).digest()

def csum(data):
    if len(data) % 2: data += b"\0"
    s = 0
    for i in range(0, len(data), 2):
        s += (data[i] << 8) | data[i + 1]
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff

def dss(dsn, ssn, length, payload):
    return csum(be64(dsn) + be32(ssn) + struct.pack(">HH", length, 0) + payload)

print("# token, idsn")
for k in [0, 0xffffffffffffffff, 0x0123456789abcdef, 0x0697be544757115c, 0x994b4d09d49184d3]:
    t, i = token_idsn(k)
    print(f"(0x{k:016x}, 0x{t:08x}, 0x{i:016x}),")

print("# join: (sender key, receiver key, sender nonce, receiver nonce) -> thmac, hmac160")
for ka, kb, na, nb in [(0x0123456789abcdef, 0xfedcba9876543210, 0x01020304, 0xa0b0c0d0),
                       (0x0697be544757115c, 0x994b4d09d49184d3, 0x7479f3a0, 0x1a1eb3d6)]:
    h = mac(ka, kb, be32(na) + be32(nb))
    print(f"(0x{ka:016x}, 0x{kb:016x}, 0x{na:08x}, 0x{nb:08x}, 0x{h[:8].hex()}, \"{h[:20].hex()}\"),")

print("# add_addr: (sender key, receiver key, id, addr, port) -> rightmost 64 bits")
for ks, kr, aid, addr, port in [(0x0123456789abcdef, 0xfedcba9876543210, 3, "198.18.1.2", None),
                                (0x0123456789abcdef, 0xfedcba9876543210, 7, "198.18.1.2", 8080),
                                (0x0123456789abcdef, 0xfedcba9876543210, 9, "2001:db8::2", None),
                                (0x0123456789abcdef, 0xfedcba9876543210, 255, "2001:db8::2", 443)]:
    msg = bytes([aid]) + ipaddress.ip_address(addr).packed + struct.pack(">H", port or 0)
    h = mac(ks, kr, msg)
    print(f"(0x{ks:016x}, 0x{kr:016x}, {aid}, \"{addr}\", {port}, 0x{h[24:].hex()}),")

print("# dss checksum: (dsn, ssn, len, payload) -> checksum")
for dsn, ssn, ln, pl in [(0x0102030405060708, 1, 5, b"hello"),
                         (0xfffffffffffffff0, 0xfffffff0, 1000, bytes(range(256)) * 3 + bytes(232)),
                         (0x45f7e505012aa11f, 0, 1, b""),
                         (0, 0, 0, b"")]:
    print(f"(0x{dsn:016x}, 0x{ssn:08x}, {ln}, {len(pl)}, 0x{dss(dsn, ssn, ln, pl):04x}),")
