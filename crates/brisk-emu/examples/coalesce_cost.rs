//! The emulator's own per-packet work on its offloaded path, for instruction counts
//! (load-independent, unlike the wall-clock `brisk bench emu`): a 64 KB TCP
//! super-packet as the sending kernel's TSO hands it over is cut into 1448-byte
//! segments (`os::vnet::Segmenter`, fresh checksums) and merged back for the write
//! (`os::gro::Run`), `ITER` times. The first argument, `verify` or `trusted`, says
//! whether the merge sums each segment's payload again or takes the checksum the
//! segmenter just computed as good (`Packet::l4_csum_valid`, the emulator's default).
//!
//! ```text
//! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/examples/coalesce_cost verify 2000
//! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/examples/coalesce_cost trusted 2000
//! ```
//! (the difference over `2000 × 45` packets is the saving per packet;
//! docs/performance.md, issue 36 §5).

use brisk_emu::os::gro::Run;
use brisk_emu::os::vnet::{Segmenter, VnetHdr};
use brisk_wire::ip::{Ecn, IpRepr, Ipv4Repr};
use brisk_wire::packet::emit_tcp_packet;
use brisk_wire::seq::SeqNum;
use brisk_wire::tcp::{Flags, TcpRepr, Timestamps};
use std::net::Ipv4Addr;

const MSS: usize = 1448;
const SEGMENTS: usize = 45;

/// One MSS packet of the burst (valid checksums), as the kernel would send it.
fn packet(i: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..MSS).map(|k| (k * 31 + i * 7) as u8).collect();
    let ip = IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(198, 18, 0, 1),
        dst: Ipv4Addr::new(198, 18, 0, 2),
        protocol: 6,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0x1234u16.wrapping_add(i as u16),
        dont_frag: true,
        payload_len: 0,
    });
    let tcp = TcpRepr {
        src_port: 40000,
        dst_port: 5201,
        seq: SeqNum(1000u32.wrapping_add((i * MSS) as u32)),
        ack: SeqNum(77),
        flags: Flags::ACK,
        window: 500,
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        payload: &payload,
        ..TcpRepr::default()
    };
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &tcp, &mut out);
    out
}

/// The super-packet (virtio header, bytes) a TSO sender hands the TUN device.
fn super_packet() -> (VnetHdr, Vec<u8>) {
    let pkts: Vec<Vec<u8>> = (0..SEGMENTS).map(packet).collect();
    let mut r = Run::start(&pkts[0]).expect("heads a run");
    for p in &pkts[1..] {
        assert!(r.push(p), "joins the run");
    }
    let h = r.hdr_len();
    let (hdr, head) = r.finish();
    let mut sp = head.to_vec();
    for p in &pkts {
        sp.extend_from_slice(&p[h..]);
    }
    (hdr, sp)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trusted = match args.next().as_deref() {
        Some("trusted") => true,
        Some("verify") => false,
        _ => {
            eprintln!("usage: coalesce_cost <verify|trusted> [ITER]");
            std::process::exit(2);
        }
    };
    let iter: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let (hdr, sp) = super_packet();
    let mut bufs: Vec<Vec<u8>> = (0..SEGMENTS).map(|_| Vec::with_capacity(2048)).collect();
    let mut merged = 0usize;
    for _ in 0..iter {
        let mut seg = Segmenter::start(&sp, &hdr).expect("a valid super-packet");
        for b in bufs.iter_mut() {
            assert!(seg.next(&sp, b));
        }
        let mut r = Run::start_with(&bufs[0], trusted).expect("heads a run");
        for b in &bufs[1..] {
            if !r.push_with(b, trusted) {
                break;
            }
        }
        merged += r.count();
        std::hint::black_box(r.finish());
    }
    assert_eq!(merged, iter * SEGMENTS, "every segment merged");
    println!(
        "{} packets segmented and merged ({})",
        merged,
        if trusted { "trusted" } else { "verify" }
    );
}
