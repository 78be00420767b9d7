//! SYN cookies on real packets (issue 13; brisk-tcp's `syncookie`, RFC 4987 §3.6):
//! brisk listens in the lab while a packet socket on the TUN device in the Linux host's
//! namespace floods it with SYNs from spoofed sources in 198.19.0.0/16 (inside the
//! lab's 198.18.0.0/15; brisk's cookie SYN-ACKs to them die in that namespace, which
//! forwards nothing). Meanwhile Linux clients connect, send a request on the handshake
//! and read brisk's reply. With cookies (the default) at least 99 % of them must
//! succeed; the review saw a 2000 SYN/s flood lock every client out for its whole 20 s
//! and 41 s after. Bounded: `FLOOD_RATE` × `FLOOD` packets, one namespace, removed at
//! the end (`BriskLab` drop). `syncookies_off_locks_clients_out` (ignored: a
//! measurement) runs the same with cookies off.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use brisk_emu::inject::Injector;
use brisk_emu::path::EmuConfig;
use brisk_emu::{BriskLab, EmulatorOptions, StackConfig, BRISK_ADDR};
use brisk_wire::tcp::Timestamps;
use brisk_wire::{emit_tcp_packet, Flags, IpRepr, Ipv4Repr, SeqNum, TcpRepr};
use common::*;
use rand::{Rng, SeedableRng};

const PORT: u16 = 7100;
/// Spoofed SYNs per second (`BRISK_SYNFLOOD_RATE` overrides it, 1000 to 20 000,
/// for measurements), and for how long.
const FLOOD_RATE: u64 = 5_000;
const FLOOD: Duration = Duration::from_secs(8);
/// Linux client threads; each connects, then pauses `PAUSE`, until the flood ends.
const CLIENTS: usize = 4;
const PAUSE: Duration = Duration::from_millis(60);
/// A try fails if it has not got its reply within this long (Linux's first SYN
/// retransmission comes after 1 s, so a dropped SYN costs at least that).
const TRY_LIMIT: Duration = Duration::from_secs(3);

/// A SYN from spoofed source `i` in 198.19.0.0/16, with the options Linux sends.
fn spoofed_syn(i: u32, rng: &mut impl Rng) -> Vec<u8> {
    let src = Ipv4Addr::new(198, 19, (i >> 8) as u8, i as u8);
    let tcp = TcpRepr {
        src_port: rng.gen_range(1024..65_535),
        dst_port: PORT,
        seq: SeqNum(rng.gen()),
        flags: Flags::SYN,
        window: 64_240,
        mss: Some(1460),
        window_scale: brisk_wire::WindowScale::new(7),
        sack_permitted: true,
        timestamps: Some(Timestamps {
            tsval: rng.gen(),
            tsecr: 0,
        }),
        ..TcpRepr::default()
    };
    let ip = IpRepr::V4(Ipv4Repr {
        src,
        dst: BRISK_ADDR,
        protocol: 6,
        dscp: 0,
        ecn: brisk_wire::Ecn::NotEct,
        ttl: 64,
        ident: i as u16,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &tcp, &mut out);
    out
}

fn flood_rate() -> u64 {
    std::env::var("BRISK_SYNFLOOD_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(FLOOD_RATE, |r: u64| r.clamp(1_000, 20_000))
}

/// One Linux client: connect, send the request, half-close, read the reply; in time.
fn linux_try(lab: &BriskLab, n: u64) -> bool {
    let to = SocketAddr::from((BRISK_ADDR, PORT));
    let ask = format!("request {n}\n");
    let r = lab.kernel().run_in(move || -> std::io::Result<bool> {
        let start = Instant::now();
        let mut s = TcpStream::connect_timeout(&to, TRY_LIMIT)?;
        let left = TRY_LIMIT
            .saturating_sub(start.elapsed())
            .max(Duration::from_millis(1));
        s.set_read_timeout(Some(left))?;
        s.write_all(ask.as_bytes())?;
        s.shutdown(Shutdown::Write)?;
        let mut got = Vec::new();
        s.read_to_end(&mut got)?;
        Ok(got == reply_to(ask.as_bytes()) && start.elapsed() <= TRY_LIMIT)
    });
    matches!(r, Ok(Ok(true)))
}

fn reply_to(ask: &[u8]) -> Vec<u8> {
    let mut r = b"reply to ".to_vec();
    r.extend_from_slice(ask);
    r
}

/// Runs the flood and the clients; returns (succeeded, tried, brisk's stats).
fn flood_with_clients(syncookies: bool) -> (u64, u64, brisk_tcp::EndpointStats) {
    let rate = flood_rate();
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.endpoint.syncookies = syncookies;
    stack.backlog = 64;
    let lab = BriskLab::new(
        &EmuConfig::default(),
        stack,
        EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(60)),
    )
    .expect("brisk lab");
    let inj = Injector::open(lab.kernel(), lab.device()).expect("packet socket");
    let mut listener = lab.stack().listen(PORT).expect("brisk listens");
    listener.set_accept_timeout(Some(Duration::from_millis(100)));
    let done = AtomicBool::new(false);
    let (ok, tried) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        // brisk's application: accept, read the request, answer, close.
        s.spawn(|| {
            std::thread::scope(|conns| {
                while !done.load(Ordering::Relaxed) {
                    let Ok((mut c, _)) = listener.accept() else {
                        continue;
                    };
                    conns.spawn(move || {
                        brisk_timeouts(&mut c, TRY_LIMIT);
                        let mut ask = Vec::new();
                        if c.read_to_end(&mut ask).is_ok() {
                            let _ = c.write_all(&reply_to(&ask));
                            let _ = c.shutdown(Shutdown::Write);
                        }
                    });
                }
            });
        });
        // The flood, paced per millisecond.
        let flood = s.spawn(|| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
            let start = Instant::now();
            let mut sent = 0u64;
            while start.elapsed() < FLOOD {
                let due = (start.elapsed().as_micros() as u64 * rate / 1_000_000)
                    .min(rate * FLOOD.as_secs());
                while sent < due {
                    inj.send(&spoofed_syn(sent as u32, &mut rng))
                        .expect("inject");
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            sent
        });
        // Clients start once the flood has filled the SYN queue.
        std::thread::sleep(Duration::from_millis(300));
        let start = Instant::now();
        for k in 0..CLIENTS {
            let (lab, ok, tried) = (&lab, &ok, &tried);
            s.spawn(move || {
                let mut n = k as u64 * 1_000_000;
                while start.elapsed() + TRY_LIMIT < FLOOD {
                    tried.fetch_add(1, Ordering::Relaxed);
                    if linux_try(lab, n) {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                    n += 1;
                    std::thread::sleep(PAUSE);
                }
            });
        }
        let sent = flood.join().unwrap();
        assert!(sent >= rate * FLOOD.as_secs() * 9 / 10, "flood sent {sent}");
        // Let the last tries finish (bounded by TRY_LIMIT), then stop the server.
        std::thread::sleep(TRY_LIMIT);
        done.store(true, Ordering::Relaxed);
    });
    let stats = lab.stack().stats();
    lab.stop().unwrap();
    (ok.into_inner(), tried.into_inner(), stats)
}

#[test]
fn linux_clients_connect_through_a_spoofed_syn_flood_with_cookies() {
    if !lab_available("syncookie_flood") {
        return;
    }
    let (ok, tried, st) = flood_with_clients(true);
    let rate = flood_rate();
    println!(
        "cookies on: {ok} of {tried} Linux clients served during {FLOOD:?} of {rate} \
         spoofed SYN/s; sent {} cookies, {} validated, {} failed, {} SYNs dropped",
        st.syncookies_sent, st.syncookies_validated, st.syncookies_failed, st.drop_backlog_full
    );
    assert!(tried >= 50, "only {tried} tries");
    assert!(ok * 100 >= tried * 99, "{ok} of {tried} clients served");
    // The flood was answered with cookies, and the clients came in through them.
    assert!(st.syncookies_sent >= rate * FLOOD.as_secs() / 2, "{st:?}");
    assert!(st.syncookies_validated >= ok * 9 / 10, "{st:?}");
    // Only the clients send ACKs, so a failed cookie is a bug, short of a late
    // retransmission (say a FIN) reaching a listener after its connection is gone.
    assert!(st.syncookies_failed <= tried / 100, "{st:?}");
}

#[test]
#[ignore = "measurement: the lockout without cookies (about 11 s)"]
fn syncookies_off_locks_clients_out() {
    if !lab_available("syncookie_flood_off") {
        return;
    }
    let (ok, tried, st) = flood_with_clients(false);
    println!(
        "cookies off: {ok} of {tried} Linux clients served; {} SYNs dropped",
        st.drop_backlog_full
    );
    assert_eq!(st.syncookies_sent, 0);
    assert!(ok * 10 < tried, "{ok} of {tried} served without cookies");
}
