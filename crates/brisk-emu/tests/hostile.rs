//! Hostile input written straight onto the lab device (a packet socket on the TUN in
//! the Linux host's namespace, so the bytes reach brisk through the emulator with no
//! kernel processing) while brisk sends a stream to Linux: random bytes, bad IP and
//! TCP checksums, truncated options, SACK blocks outside the window, out-of-window
//! data, an ACK of unsent data, and spoofed in-window RST and SYN (RFC 5961). Each is
//! dropped and counted, or answered with a challenge ACK; the connection survives and
//! the stream arrives byte-exact.

mod common;

use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::inject::Injector;
use brisk_emu::os::vnet::complete_checksum;
use brisk_emu::path::{Dur, PathSpec, Rate};
use brisk_emu::tools::{sink, source};
use brisk_emu::{EmuConfig, BRISK_ADDR, KERNEL_ADDR};
use brisk_wire::checksum::pseudo_header_v4;
use brisk_wire::tcp::{SackBlock, SackBlocks, Timestamps};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet, Flags, IpRepr, Ipv4Repr, SeqNum, TcpRepr};
use common::*;
use rand::{Rng, RngCore, SeedableRng};

const T: Duration = Duration::from_secs(30);

/// What a sniffed Linux → brisk segment told us about the live connection.
#[derive(Clone, Copy, Debug)]
struct Live {
    linux_port: u16,
    brisk_port: u16,
    /// Linux's SND.NXT = brisk's RCV.NXT (Linux only ACKs here).
    seq: u32,
    /// About brisk's SND.UNA.
    ack: u32,
    tsval: u32,
    tsecr: u32,
}

fn sniff(inj: &Injector, brisk_port: u16) -> Live {
    let mut buf = Vec::new();
    let end = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < end {
        if inj.recv(&mut buf).unwrap().is_none() {
            continue;
        }
        // With TUN offloads (os/vnet.rs) Linux leaves its checksums to the "device":
        // a packet socket sees them partial (the field holds the pseudo-header sum).
        // Complete it as `skb_checksum_help` does, the way the emulator's reader
        // does, before parsing. A packet that already verifies is left alone.
        if parse_tcp_packet(&buf).is_err() && buf.first().is_some_and(|b| b >> 4 == 4) {
            let ihl = usize::from(buf[0] & 0x0f) * 4;
            let _ = complete_checksum(&mut buf, ihl, 16);
        }
        let Ok((IpRepr::V4(ip), t)) = parse_tcp_packet(&buf) else {
            continue;
        };
        if ip.src == KERNEL_ADDR && t.dst_port == brisk_port && t.flags.ack() && !t.flags.syn() {
            let ts = t.timestamps.expect("timestamps negotiated");
            return Live {
                linux_port: t.src_port,
                brisk_port,
                seq: t.seq.0,
                ack: t.ack.0,
                tsval: ts.tsval,
                tsecr: ts.tsecr,
            };
        }
    }
    panic!("no Linux segment seen on the device");
}

fn segment(live: &Live, f: impl FnOnce(&mut TcpRepr<'_>)) -> Vec<u8> {
    let mut t = TcpRepr {
        src_port: live.linux_port,
        dst_port: live.brisk_port,
        seq: SeqNum(live.seq),
        ack: SeqNum(live.ack),
        flags: Flags::ACK,
        window: 1000,
        timestamps: Some(Timestamps {
            tsval: live.tsval,
            tsecr: live.tsecr,
        }),
        ..TcpRepr::default()
    };
    f(&mut t);
    let ip = IpRepr::V4(Ipv4Repr {
        src: KERNEL_ADDR,
        dst: BRISK_ADDR,
        protocol: 6,
        dscp: 0,
        ecn: brisk_wire::Ecn::NotEct,
        ttl: 64,
        ident: 1,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &t, &mut out);
    out
}

/// Recomputes the TCP checksum of an IPv4 packet with a 20-byte IP header.
fn fix_tcp_checksum(p: &mut [u8]) {
    p[36] = 0;
    p[37] = 0;
    let mut acc = pseudo_header_v4(KERNEL_ADDR, BRISK_ADDR, 6, (p.len() - 20) as u16);
    acc.add_bytes(&p[20..]);
    let c = acc.checksum();
    p[36..38].copy_from_slice(&c.to_be_bytes());
}

#[test]
fn hostile_input_is_dropped_or_answered_and_the_stream_survives() {
    if !lab_available("hostile_input") {
        return;
    }
    let fwd = PathSpec {
        rate: Some(Rate(20_000_000)),
        ..PathSpec::default()
    };
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(4))),
        bottleneck: fwd,
        reverse: None,
        seed: 1,
    };
    let lab = lab_with(&path, None);
    let inj = Injector::open(lab.kernel(), lab.device()).expect("packet socket");
    let l = kernel_listen(lab.kernel(), 7001);
    let mut b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 7001)))
        .unwrap();
    brisk_timeouts(&mut b, T);
    let brisk_port = b.local_addr().unwrap().port();
    let mut k = kernel_accept(&l, T);
    let n = 5_000_000; // ~2 s at 20 Mbit/s
    let before = lab.stack().stats();
    let (sent, got, junk) = std::thread::scope(|s| {
        let rx = s.spawn(move || sink(&mut k, u64::MAX).unwrap());
        let tx = s.spawn(move || {
            let d = source(&mut b, n, 11).unwrap();
            b.shutdown(Shutdown::Write).unwrap();
            d
        });
        std::thread::sleep(Duration::from_millis(300));
        let live = sniff(&inj, brisk_port);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut junk = 0u64;
        // 1. Random bytes.
        for _ in 0..200 {
            let len = rng.gen_range(1..=1500);
            let mut p = vec![0u8; len];
            rng.fill_bytes(&mut p);
            inj.send(&p).unwrap();
            junk += 1;
        }
        // 2. Bad TCP checksums and bad IP checksums on otherwise valid segments.
        for i in 0..20u32 {
            let mut p = segment(&live, |t| t.payload = b"corrupted data!!");
            let at = if i % 2 == 0 {
                40 + (i as usize % 16)
            } else {
                10
            };
            p[at] ^= 0x20;
            inj.send(&p).unwrap();
            junk += 1;
        }
        // 3. Truncated options: an option length running past the header, with a
        //    valid checksum; and a data offset beyond the packet.
        let mut p = segment(&live, |_| {});
        assert!(p.len() >= 52, "segment has the timestamp option");
        for i in 40..52 {
            if p[i] == 8 {
                p[i + 1] = 30; // TS option claims 30 bytes
                break;
            }
        }
        fix_tcp_checksum(&mut p);
        inj.send(&p).unwrap();
        let mut p = segment(&live, |_| {});
        p[32] = 0xf0 | (p[32] & 0x0f); // data offset 60 bytes > segment
        fix_tcp_checksum(&mut p);
        inj.send(&p).unwrap();
        junk += 2;
        std::thread::sleep(Duration::from_millis(50));
        let mid = lab.stack().stats();
        // Fresh sequence and timestamp values for the segments that must get past
        // PAWS (RFC 7323 section 5) to reach the checks under test. Unacceptable
        // segments never update TS.Recent, so a future TSval is safe for them; the
        // acceptable-looking ones carry the sniffed TSval.
        let live = sniff(&inj, brisk_port);
        let future = Live {
            tsval: live.tsval.wrapping_add(1000),
            ..live
        };
        // 4. SACK blocks outside the window (above SND.NXT, below SND.UNA).
        let p = segment(&live, |t| {
            t.sack = SackBlocks::from_slice(&[
                SackBlock {
                    left: SeqNum(live.ack.wrapping_add(100_000_000)),
                    right: SeqNum(live.ack.wrapping_add(100_001_448)),
                },
                SackBlock {
                    left: SeqNum(live.ack.wrapping_sub(1_000_000)),
                    right: SeqNum(live.ack.wrapping_sub(500_000)),
                },
            ]);
        });
        inj.send(&p).unwrap();
        // 5. Out-of-window data.
        let p = segment(&future, |t| {
            t.seq = SeqNum(live.seq.wrapping_add(50_000_000));
            t.payload = b"far beyond the receive window";
        });
        inj.send(&p).unwrap();
        // 6. Data acknowledging bytes brisk never sent (RFC 5961 section 5).
        let p = segment(&live, |t| {
            t.ack = SeqNum(live.ack.wrapping_add(200_000_000));
            t.payload = b"bogus ack";
        });
        inj.send(&p).unwrap();
        // Replies to out-of-window segments share a per-connection limit of one per
        // 500 ms (Config::invalid_ratelimit, Linux's tcp_invalid_ratelimit), which a
        // challenge ACK checks first as Linux's tcp_send_challenge_ack does: wait it
        // out so that each spoofed segment below draws its own challenge ACK.
        let pause = std::time::Duration::from_millis(600);
        std::thread::sleep(pause);
        // 7. Spoofed in-window RST (not exactly RCV.NXT): challenge ACK (section 3).
        let p = segment(&future, |t| {
            t.seq = SeqNum(live.seq.wrapping_add(1000));
            t.flags = Flags::RST;
            t.ack = SeqNum(0);
        });
        inj.send(&p).unwrap();
        std::thread::sleep(pause);
        // 8. Spoofed SYN on the established connection: challenge ACK (section 4).
        let p = segment(&future, |t| {
            t.seq = SeqNum(live.seq.wrapping_add(5000));
            t.flags = Flags::SYN;
            t.ack = SeqNum(0);
        });
        inj.send(&p).unwrap();
        let sent = tx.join().unwrap();
        let got = rx.join().unwrap();
        (sent, got, (junk, mid))
    });
    let (junk, mid) = junk;
    assert_eq!(got, sent, "the stream arrived byte-exact");
    let after = lab.stack().stats();
    eprintln!("before {before:?}\nmid {mid:?}\nafter {after:?}");
    let dropped = |s: &brisk_tcp::EndpointStats| s.drop_parse + s.drop_checksum + s.drop_not_local;
    assert_eq!(
        dropped(&mid) - dropped(&before),
        junk,
        "every malformed packet dropped and counted once"
    );
    assert!(
        after.challenge_acks >= before.challenge_acks + 2,
        "spoofed RST and SYN answered with challenge ACKs"
    );
    assert!(
        after.drop_out_of_window > before.drop_out_of_window,
        "out-of-window data dropped and counted"
    );
    let rep = lab.stop().unwrap();
    assert_eq!(rep.reverse.read_errors, 0);
}
