//! sat-web: the web over a GEO satellite path with and without a split-TCP PEP (seed
//! 004 App. D.1; spec `rite-satellite-web-innerspace-abe.md` §1; claims WEB-1 to
//! WEB-6; docs/mechanisms/satellite-web.md).
//!
//! The path is `brisk_sim::sat_web`'s: RTT 750 ms (the seed's emulator reference),
//! forward link 8 Mbit/s (and 2.048 Mbit/s, AMB-D1-2), return link 512 kbit/s,
//! drop-tail queues of one BDP each. The 9 pages ({500, 1500, 2500} kB × {5, 20,
//! 100} kB objects) load with HTTP/1.1 (6 persistent connections), HTTPS (the same
//! over TLS 1.2, full handshake then resumed), HTTPS with one object per connection,
//! and HTTP/2 (TLS 1.2 + ALPN, 100 streams, 128 kB client receive buffer), through
//! the PEP and end to end. A repetition's seed sets the ISNs and the page's start
//! (0–100 ms); the path has no loss, so repetitions differ little, as the seed's
//! emulator runs would have.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREEN, GREY, ORANGE, RED};
use brisk_sim::sat_web::{self, Proto, SatWebConfig, SatWebResult, Tls, BIN};
use brisk_time::Duration;
use std::fmt::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub const ID: &str = "sat-web";
pub const TITLE: &str =
    "Web pages over a GEO satellite path: HTTP/1.1, HTTPS, HTTP/2, split-TCP PEP vs end to end (D1.3 App. D.1)";
pub const CLAIMS: &[&str] = &[
    "WEB-1a", "WEB-1b", "WEB-1c", "WEB-2a", "WEB-2b", "WEB-3a", "WEB-3b", "WEB-4a", "WEB-4b",
    "WEB-5a", "WEB-5b", "WEB-5c", "WEB-6a", "WEB-6b",
];

const RTT_S: f64 = 0.75;
/// Page sizes and object sizes, kB (1 kB = 1000 B).
const PAGES_KB: [u64; 3] = [500, 1500, 2500];
const OBJECTS_KB: [u64; 3] = [5, 20, 100];

/// The protocols of Figs 4–5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    Http,
    Https,
    HttpsNonPersistent,
    H2,
}
const ARMS: [Arm; 4] = [Arm::Http, Arm::Https, Arm::HttpsNonPersistent, Arm::H2];

impl Arm {
    fn name(self) -> &'static str {
        match self {
            Arm::Http => "HTTP/1.1",
            Arm::Https => "HTTPS",
            Arm::HttpsNonPersistent => "HTTPS, 1 object/conn",
            Arm::H2 => "HTTP/2 (TLS, ALPN)",
        }
    }
    fn colour(self) -> &'static str {
        match self {
            Arm::Http => GREY,
            Arm::Https => BLUE,
            Arm::HttpsNonPersistent => ORANGE,
            Arm::H2 => RED,
        }
    }
    fn apply(self, c: &mut SatWebConfig) {
        let (proto, tls) = match self {
            Arm::Http => (Proto::Http1 { persistent: true }, Tls::None),
            Arm::Https => (Proto::Http1 { persistent: true }, Tls::Full12),
            Arm::HttpsNonPersistent => (Proto::Http1 { persistent: false }, Tls::Full12),
            Arm::H2 => (Proto::Http2, Tls::Full12),
        };
        c.proto = proto;
        c.tls = tls;
        // HTTPS is rustls over the connections (brisk_sim::sat_tls), not the model.
        c.rustls = tls != Tls::None;
    }
}

#[derive(Clone, Copy, Debug)]
struct Setup {
    reps: u64,
    /// Also the 2.048 Mbit/s forward link (AMB-D1-2).
    slow_fl: bool,
}

fn setup(quick: bool) -> Setup {
    if quick {
        Setup {
            reps: 1,
            slow_fl: false,
        }
    } else {
        Setup {
            reps: 10,
            slow_fl: true,
        }
    }
}

/// One page load to run.
#[derive(Clone, Debug)]
struct Job {
    what: What,
    cfg: SatWebConfig,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum What {
    /// Figs 4–5: page (kB), object (kB), arm, PEP, forward rate.
    Page {
        page: u64,
        obj: u64,
        arm: Arm,
        pep: bool,
        fl: u64,
    },
    /// WEB-5: HTTP/2 end to end and through the PEP, a receive buffer and stream cap.
    Tune {
        rcvbuf: usize,
        cap: usize,
        pep: bool,
    },
    /// WEB-5: the retry timer, PEP or not.
    Retry { pep: bool, retry_ms: u64 },
    /// WEB-6: set-up of a protocol and TLS mode end to end, with or without Fast Open
    /// (a cookie from a priming visit), TLS by rustls or by the round-trip model.
    Setup {
        proto: Proto,
        tls: Tls,
        tfo: bool,
        rustls: bool,
    },
    /// WEB-6: IW (segments), one 14 kB object end to end.
    Iw { iw: u32 },
}

fn page_objects(page: u64, obj: u64) -> Vec<u64> {
    vec![obj * 1000; (page / obj) as usize]
}

const TUNE_RCVBUF: [usize; 2] = [128 * 1024, 1 << 20];
const TUNE_CAP: [usize; 3] = [100, 150, 300];
const SETUPS: [(Proto, Tls, &str, f64); 10] = [
    (
        Proto::Http1 { persistent: true },
        Tls::None,
        "HTTP/1.1",
        1.0,
    ),
    (
        Proto::Http1 { persistent: true },
        Tls::Full12,
        "HTTPS, TLS 1.2 full",
        3.0,
    ),
    (
        Proto::Http1 { persistent: true },
        Tls::Resumed12,
        "HTTPS, TLS 1.2 resumed",
        2.0,
    ),
    (
        Proto::Http1 { persistent: true },
        Tls::Full13,
        "HTTPS, TLS 1.3",
        2.0,
    ),
    (
        Proto::Http1 { persistent: true },
        Tls::ZeroRtt13,
        "HTTPS, TLS 1.3 0-RTT",
        1.0,
    ),
    (Proto::Http2, Tls::None, "HTTP/2 by Upgrade (h2c)", 2.0),
    (
        Proto::Http2,
        Tls::Full12,
        "HTTP/2, TLS 1.2 full + ALPN",
        3.0,
    ),
    (
        Proto::Http2,
        Tls::Resumed12,
        "HTTP/2, TLS 1.2 resumed + ALPN",
        2.0,
    ),
    (Proto::Http2, Tls::Full13, "HTTP/2, TLS 1.3 + ALPN", 2.0),
    (
        Proto::Http2,
        Tls::ZeroRtt13,
        "HTTP/2, TLS 1.3 0-RTT + ALPN",
        1.0,
    ),
];
const IW_OBJECT: u64 = 14_000;

fn jobs(s: &Setup) -> Vec<Job> {
    let mut v = Vec::new();
    let fls: &[u64] = if s.slow_fl {
        &[8_000_000, 2_048_000]
    } else {
        &[8_000_000]
    };
    for &fl in fls {
        for pep in [true, false] {
            for &page in &PAGES_KB {
                for &obj in &OBJECTS_KB {
                    for arm in ARMS {
                        // The slow forward link only for the reps it needs (its figure).
                        let reps = if fl == 8_000_000 {
                            s.reps
                        } else {
                            s.reps.min(3)
                        };
                        for seed in 1..=reps {
                            let mut cfg = SatWebConfig {
                                pep,
                                objects: page_objects(page, obj),
                                seed,
                                ..SatWebConfig::default()
                            };
                            cfg.path.forward_bps = fl;
                            arm.apply(&mut cfg);
                            v.push(Job {
                                what: What::Page {
                                    page,
                                    obj,
                                    arm,
                                    pep,
                                    fl,
                                },
                                cfg,
                            });
                        }
                    }
                }
            }
        }
    }
    for pep in [false, true] {
        for &rcvbuf in &TUNE_RCVBUF {
            for &cap in &TUNE_CAP {
                for seed in 1..=s.reps.min(3) {
                    let mut cfg = SatWebConfig {
                        pep,
                        objects: page_objects(2500, 5),
                        client_rcvbuf: rcvbuf,
                        stream_cap: cap,
                        seed,
                        ..SatWebConfig::default()
                    };
                    Arm::H2.apply(&mut cfg);
                    v.push(Job {
                        what: What::Tune { rcvbuf, cap, pep },
                        cfg,
                    });
                }
            }
        }
        for retry_ms in [250, 1000] {
            let mut cfg = SatWebConfig {
                pep,
                objects: page_objects(500, 20),
                retry: Some(Duration::from_millis(retry_ms)),
                ..SatWebConfig::default()
            };
            Arm::H2.apply(&mut cfg);
            v.push(Job {
                what: What::Retry { pep, retry_ms },
                cfg: cfg.clone(),
            });
            // HTTP/1.1's six connections each race a backup too.
            Arm::Https.apply(&mut cfg);
            v.push(Job {
                what: What::Retry { pep, retry_ms },
                cfg,
            });
        }
    }
    for (proto, tls, _, _) in SETUPS {
        // rustls with and without Fast Open; the model beside it (without).
        for (tfo, rustls) in [(false, true), (true, true), (false, false)] {
            v.push(Job {
                what: What::Setup {
                    proto,
                    tls,
                    tfo,
                    rustls,
                },
                cfg: SatWebConfig {
                    pep: false,
                    proto,
                    tls,
                    objects: vec![5_000; 5],
                    start_jitter: Duration::ZERO,
                    fastopen: tfo,
                    rustls: rustls && tls != Tls::None,
                    ..SatWebConfig::default()
                },
            });
        }
    }
    for iw in [3, 10] {
        v.push(Job {
            what: What::Iw { iw },
            cfg: SatWebConfig {
                pep: false,
                objects: vec![IW_OBJECT],
                iw,
                start_jitter: Duration::ZERO,
                ..SatWebConfig::default()
            },
        });
    }
    v
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let s = setup(quick);
    for j in jobs(&s) {
        j.cfg.validate().map_err(|e| e.to_string())?;
    }
    // Its own driver (brisk_sim::sat_web: four nodes, PEP relays), run in the analysis.
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&s)),
    })
}

/// Runs every job on up to 4 threads; results in job order.
fn run_all(jobs: &[Job]) -> Vec<Result<SatWebResult, String>> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<SatWebResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = sat_web::run(&j.cfg).map_err(|e| e.to_string());
                if let Ok(mut o) = out.lock() {
                    o[i] = Some(r);
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

struct Done<'a> {
    jobs: &'a [Job],
    res: &'a [SatWebResult],
}

impl Done<'_> {
    fn select(&self, f: impl Fn(&What) -> bool) -> Vec<&SatWebResult> {
        self.jobs
            .iter()
            .zip(self.res)
            .filter(|(j, _)| f(&j.what))
            .map(|(_, r)| r)
            .collect()
    }
    /// Mean PLT (s) of a page cell; NaN if a load did not finish.
    fn plt(&self, page: u64, obj: u64, arm: Arm, pep: bool, fl: u64) -> f64 {
        let v = self.select(|w| {
            *w == What::Page {
                page,
                obj,
                arm,
                pep,
                fl,
            }
        });
        let p: Vec<f64> = v.iter().filter_map(|r| r.plt_ns.map(secs)).collect();
        if p.len() < v.len() || p.is_empty() {
            f64::NAN
        } else {
            mean(&p)
        }
    }
    fn plt_range(&self, page: u64, obj: u64, arm: Arm, pep: bool, fl: u64) -> (f64, f64) {
        let v = self.select(|w| {
            *w == What::Page {
                page,
                obj,
                arm,
                pep,
                fl,
            }
        });
        let p: Vec<f64> = v.iter().filter_map(|r| r.plt_ns.map(secs)).collect();
        (
            p.iter().copied().fold(f64::INFINITY, f64::min),
            p.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

fn analyse(s: &Setup) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let jobs = jobs(s);
    let results = run_all(&jobs);
    if let Some((j, Err(e))) = jobs.iter().zip(&results).find(|(_, r)| r.is_err()) {
        for id in CLAIMS {
            r.claims.push(
                Claim::new(id, "page loads run")
                    .ours_text("error")
                    .note(format!("{:?}: {e}", j.what))
                    .check(false),
            );
        }
        return r;
    }
    let res: Vec<SatWebResult> = results.into_iter().flatten().collect();
    let d = Done {
        jobs: &jobs,
        res: &res,
    };
    let bad: u64 = res.iter().map(|x| x.bad).sum();
    let unfinished = res.iter().filter(|x| x.plt_ns.is_none()).count();
    r.notes.push(format!(
        "Path (brisk_sim::sat_web): client —LAN (100 Mbit/s, 0.5 ms)— satellite terminal ═ GEO hop ═ gateway —terrestrial (100 Mbit/s, 5 ms)— server; RTT 750 ms in all; forward link (gateway → terminal) 8 Mbit/s, return link 512 kbit/s, drop-tail queues of one BDP each (500 and 32 packets at 8 Mbit/s). PEP: the terminal and the gateway each terminate TCP (three connections per page connection), the client leg without window scaling, 1 MB relay pipes and PEP socket buffers. End to end (the seed's IPsec tunnel): they only forward. Client: 128 kB receive buffer, IW 10 everywhere (Linux 3.8). {} repetitions per cell (seed: ISNs and a 0–100 ms start); {} page loads in all, {unfinished} unfinished, {bad} bad bytes or frames.",
        s.reps,
        res.len()
    ));
    r.notes.push("TLS is rustls over brisk's byte stream (brisk_sim::sat_tls): TLS 1.2 (ECDHE-Ed25519, AES-GCM) full then resumed by session ID, TLS 1.3 with tickets and 0-RTT, ALPN h2; deterministic (a seeded random stream, an X25519 share drawn from it, Ed25519 certificates, the virtual clock), so a seed gives the same bytes. A leaf + intermediate Ed25519 chain makes the server's first flight ≈ 0.9 kB (a 2015 RSA chain: ≈ 3–4 kB; both fit IW 10). WEB-6a shows the earlier round-trip model's counts beside rustls's. HTTP/2 frames are HTTP/2's 9-byte frames with stream and connection windows (stream 256 kB, connection 12 MB, WINDOW_UPDATE at half a window); HTTP/1.1 objects carry a 300-byte response header. WEB-6 measures Fast Open too (a priming visit leaves the cookie; the page's connections then carry their first flight on the SYN).".into());

    page_claims(&mut r, &d, s);
    tune_claims(&mut r, &d);
    setup_claims(&mut r, &d);
    r
}

fn page_claims(r: &mut ExperimentResult, d: &Done<'_>, s: &Setup) {
    const FL: u64 = 8_000_000;
    let objects = |page: u64, obj: u64| (page / obj) as f64;
    // The table of every cell.
    let mut html = String::from("<table><tr><th>FL</th><th>path</th><th>page</th><th>objects</th>");
    for a in ARMS {
        let _ = write!(html, "<th>{} PLT (s)</th>", a.name());
    }
    html.push_str("</tr>");
    let fls: &[u64] = if s.slow_fl { &[FL, 2_048_000] } else { &[FL] };
    for &fl in fls {
        for pep in [true, false] {
            for &page in &PAGES_KB {
                for &obj in &OBJECTS_KB {
                    let _ = write!(
                        html,
                        "<tr><td>{:.3} Mbit/s</td><td>{}</td><td>{page} kB</td><td>{}</td>",
                        fl as f64 / 1e6,
                        if pep { "PEP" } else { "end to end" },
                        page / obj
                    );
                    for a in ARMS {
                        let (lo, hi) = d.plt_range(page, obj, a, pep, fl);
                        let _ = write!(
                            html,
                            "<td>{:.1} ({lo:.1}–{hi:.1})</td>",
                            d.plt(page, obj, a, pep, fl)
                        );
                    }
                    html.push_str("</tr>");
                }
            }
        }
    }
    html.push_str("</table>");
    r.html = html;

    // WEB-1a: HTTP/1 throughput of the 500 × 5 kB page end to end vs N_c·S/RTT.
    let model_kbps = 6.0 * 5000.0 * 8.0 / RTT_S / 1000.0;
    let plt_h1 = d.plt(2500, 5, Arm::Http, false, FL);
    let rate_h1 = 2_500_000.0 * 8.0 / plt_h1 / 1000.0;
    let plt_h1_pep = d.plt(2500, 5, Arm::Http, true, FL);
    r.claims.push(
        Claim::new("WEB-1a", "HTTP/1.1, 6 connections, 500 × 5 kB, end to end: page throughput vs N_c·S/RTT")
            .paper(230.0)
            .ours(rate_h1)
            .unit("kbit/s")
            .tolerance("within ±30 % of the model's 320 kbit/s")
            .note(format!(
                "Model 6 × 5 kB / 0.75 s = {model_kbps:.0} kbit/s; the paper measured 230 kbit/s through the PEP. Ours: PLT {plt_h1:.1} s end to end, {plt_h1_pep:.1} s through the PEP ({:.0} kbit/s): the PEP cannot help objects smaller than the IW, as the paper says.",
                2_500_000.0 * 8.0 / plt_h1_pep / 1000.0
            ))
            .check((rate_h1 / model_kbps - 1.0).abs() <= 0.30),
    );
    // WEB-1b: HTTP/2 PLT of the same page, end to end (the claims file's DES row).
    let plt_h2 = d.plt(2500, 5, Arm::H2, false, FL);
    let plt_h2_pep = d.plt(2500, 5, Arm::H2, true, FL);
    r.claims.push(
        Claim::new("WEB-1b", "HTTP/2 (TLS, 100 streams, 128 kB rcvbuf), 500 × 5 kB, end to end: PLT")
            .paper(12.0)
            .ours(plt_h2)
            .unit("s")
            .tolerance("12 s ±30 % (8.4–15.6 s)")
            .note(format!(
                "Through the PEP: {plt_h2_pep:.1} s (the paper's Fig. 3 was through the PEP). End to end the 128 kB receive buffer allows 128 kB per 750 ms (1.4 Mbit/s): 2500 kB need ≈ 20 RTT after the 3-RTT set-up."
            ))
            .check((plt_h2 / 12.0 - 1.0).abs() <= 0.30),
    );
    // WEB-1c: set-up = TCP 1 RTT + TLS 2 RTT.
    let setup_rtt: Vec<f64> = d
        .select(|w| {
            matches!(
                w,
                What::Page {
                    arm: Arm::H2,
                    pep: false,
                    ..
                }
            )
        })
        .iter()
        .filter_map(|x| x.setup_ns.map(|n| secs(n) / RTT_S))
        .collect();
    let worst = setup_rtt
        .iter()
        .map(|x| (x - 3.0).abs())
        .fold(0.0, f64::max);
    r.claims.push(
        Claim::new("WEB-1c", "HTTP/2 over TLS end to end: set-up before the first request")
            .paper(3.0)
            .ours(mean(&setup_rtt))
            .unit("RTT")
            .tolerance("3 RTT exactly (every load within ±0.1 RTT)")
            .note(format!("Paper ≈ 3 s measured (2.25 s by the RTT count); worst deviation {worst:.3} RTT over {} loads.", setup_rtt.len()))
            .check(!setup_rtt.is_empty() && worst <= 0.1),
    );

    // WEB-2 (PEP): HTTP(S) PLT grows ∝ objects/6 × RTT; HTTP/2 flat.
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for &page in &PAGES_KB {
        for &obj in &OBJECTS_KB {
            pts.push((objects(page, obj), d.plt(page, obj, Arm::Https, true, FL)));
        }
    }
    let slope = fit_slope(&pts);
    let want = RTT_S / 6.0;
    let https_100 = d.plt(500, 5, Arm::Https, true, FL);
    let https_15 = d.plt(1500, 100, Arm::Https, true, FL);
    r.claims.push(
        Claim::new("WEB-2a", "Through the PEP: HTTPS PLT against object count (least-squares slope)")
            .paper_text("grows with object count: 100 × 5 kB ≈ 35 s, 15 × 100 kB ≈ 12 s")
            .ours(slope)
            .unit("s/object")
            .tolerance(&format!("RTT/6 = {want:.3} s/object ±30 %"))
            .note(format!("HTTPS 100 × 5 kB: {https_100:.1} s (paper ≈ 35 s); 15 × 100 kB: {https_15:.1} s (paper ≈ 12 s). Object count matters more than page size: 500 kB at 5 kB/object {https_100:.1} s vs 2500 kB at 100 kB/object {:.1} s.", d.plt(2500, 100, Arm::Https, true, FL)))
            .check((slope / want - 1.0).abs() <= 0.30),
    );
    let h2_pep: Vec<f64> = PAGES_KB
        .iter()
        .flat_map(|&p| OBJECTS_KB.iter().map(move |&o| (p, o)))
        .map(|(p, o)| d.plt(p, o, Arm::H2, true, FL))
        .collect();
    let spread = spread(&h2_pep);
    r.claims.push(
        Claim::new("WEB-2b", "Through the PEP: HTTP/2 PLT across the 9 pages, (max − min) / mean")
            .paper_text("≈ 10–12 s, nearly flat in object count")
            .ours(spread * 100.0)
            .unit("%")
            .tolerance("≤ 30 %")
            .note(format!(
                "HTTP/2 PLTs through the PEP: {:.1}–{:.1} s. It grows with page size (slow start on the satellite leg: IW 10 doubling per 750 ms), not with object count.",
                h2_pep.iter().copied().fold(f64::INFINITY, f64::min),
                h2_pep.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            ))
            .check(spread <= 0.30),
    );

    // WEB-3 (end to end).
    let h2_e2e: Vec<f64> = PAGES_KB
        .iter()
        .flat_map(|&p| OBJECTS_KB.iter().map(move |&o| (p, o)))
        .map(|(p, o)| d.plt(p, o, Arm::H2, false, FL))
        .collect();
    let m = mean(&h2_e2e);
    r.claims.push(
        Claim::new("WEB-3a", "End to end: mean HTTP/2 PLT over the 9 pages")
            .paper_text("11–15 s")
            .ours(m)
            .unit("s")
            .tolerance("within 11 s − 30 % to 15 s + 30 % (7.7–19.5 s)")
            .note(format!("Per page {:.1}–{:.1} s. No DAMA jitter is modelled (beyond the seed's emulator), so the RTT does not vary by seconds as on Hylas-II.", h2_e2e.iter().copied().fold(f64::INFINITY, f64::min), h2_e2e.iter().copied().fold(f64::NEG_INFINITY, f64::max)))
            .check((7.7..=19.5).contains(&m)),
    );
    let big: Vec<(u64, u64)> = PAGES_KB
        .iter()
        .flat_map(|&p| OBJECTS_KB.iter().map(move |&o| (p, o)))
        .filter(|&(p, o)| p / o > 100)
        .collect();
    let ratios = |pep: bool| -> Vec<(u64, f64, f64)> {
        big.iter()
            .map(|&(p, o)| {
                (
                    p / o,
                    d.plt(p, o, Arm::Https, pep, FL) / d.plt(p, o, Arm::H2, pep, FL),
                    d.plt(p, o, Arm::HttpsNonPersistent, pep, FL) / d.plt(p, o, Arm::H2, pep, FL),
                )
            })
            .collect()
    };
    let e2e = ratios(false);
    let min_e2e = e2e.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let show = |v: &[(u64, f64, f64)]| {
        v.iter()
            .map(|(n, a, b)| format!("{n} objects: {a:.1}× (1 object/conn: {b:.1}×)"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    r.claims.push(
        Claim::new(
            "WEB-3b",
            "End to end, pages of > 100 objects: HTTPS PLT / HTTP/2 PLT (smallest)",
        )
        .paper_text("HTTPS up to a few minutes, HTTP/2 11–15 s")
        .ours(min_e2e)
        .unit("×")
        .tolerance(
            "≥ 5 on every page with > 100 objects (HTTPS = persistent, fixed before the run)",
        )
        .note(show(&e2e))
        .check(min_e2e >= 5.0),
    );
    // WEB-4: both paths.
    let pep = ratios(true);
    let min_all = e2e
        .iter()
        .chain(&pep)
        .map(|x| x.1)
        .fold(f64::INFINITY, f64::min);
    r.claims.push(
        Claim::new(
            "WEB-4a",
            "Pages of > 100 objects, PEP and end to end: HTTPS / HTTP/2 PLT (smallest)",
        )
        .paper_text("HTTP/2 ≈ 10 s vs several tens of seconds")
        .ours(min_all)
        .unit("×")
        .tolerance("≥ 3 on every such page and path")
        .note(format!("PEP: {}. End to end: {}.", show(&pep), show(&e2e)))
        .check(min_all >= 3.0),
    );
    let few: Vec<String> = [true, false]
        .iter()
        .map(|&pep| {
            format!(
                "{}: HTTP/1.1 {:.1} s vs HTTP/2 {:.1} s",
                if pep { "PEP" } else { "end to end" },
                d.plt(500, 100, Arm::Http, pep, FL),
                d.plt(500, 100, Arm::H2, pep, FL)
            )
        })
        .collect();
    let faster = [true, false]
        .iter()
        .all(|&pep| d.plt(500, 100, Arm::Http, pep, FL) < d.plt(500, 100, Arm::H2, pep, FL));
    let ratio_few = d.plt(500, 100, Arm::H2, true, FL) / d.plt(500, 100, Arm::Http, true, FL);
    r.claims.push(
        Claim::new(
            "WEB-4b",
            "5 objects (500 kB / 100 kB): HTTP/1.1 (no TLS) vs HTTP/2, PLT ratio through the PEP",
        )
        .paper_text("with < 10 objects HTTP/1.1 beats HTTP/2")
        .ours(ratio_few)
        .unit("HTTP/2 ÷ HTTP/1.1")
        .tolerance("HTTP/1.1 faster on both paths (ratio > 1)")
        .note(few.join("; "))
        .check(faster),
    );

    // Figures: PLT against objects (Figs 4 and 5), and the 2.048 Mbit/s variant.
    let fls: &[u64] = if s.slow_fl { &[FL, 2_048_000] } else { &[FL] };
    for &fl in fls {
        for pep in [true, false] {
            let series = ARMS
                .iter()
                .map(|&a| {
                    let mut p: Vec<(f64, f64)> = PAGES_KB
                        .iter()
                        .flat_map(|&pg| OBJECTS_KB.iter().map(move |&o| (pg, o)))
                        .map(|(pg, o)| (objects(pg, o), d.plt(pg, o, a, pep, fl)))
                        .collect();
                    p.sort_by(|x, y| x.0.total_cmp(&y.0));
                    Series::new(a.name(), a.colour(), Style::Line, p)
                })
                .collect();
            let fig = if pep { "Fig. 4" } else { "Fig. 5" };
            r.plots.push(Plot {
                figure: Figure::Chart(Chart {
                    title: format!(
                        "PLT against objects, {}, FL {:.3} Mbit/s ({fig}; mean of {} loads per point)",
                        if pep { "split-TCP PEP" } else { "end to end" },
                        fl as f64 / 1e6,
                        if fl == FL { s.reps } else { s.reps.min(3) }
                    ),
                    x_label: "objects on the page (9 pages; log scale)".into(),
                    y_label: "page load time (s)".into(),
                    x_log: true,
                    series,
                    ..Chart::default()
                }),
                paper: if pep {
                    "Fig. 4 (through the PEP, FL 8 Mbit/s): HTTP and HTTPS PLT rise with object count (HTTPS 100 × 5 kB ≈ 35 s, 15 × 100 kB ≈ 12 s); HTTP/2 ≈ 10–12 s, nearly flat; non-persistent HTTPS is the worst case.".into()
                } else {
                    "Fig. 5 (IPsec tunnel, no PEP): HTTP/2 11–15 s; HTTPS up to a few minutes above 100 objects.".into()
                },
                ours: "HTTP/1.1 and HTTPS rise by about one RTT per object per connection; HTTPS pays its 2-RTT handshake once per connection; one object per connection costs TCP + resumed TLS + request ≈ 3 RTT per object. HTTP/2 is nearly flat in object count and grows with page size. The min–max over repetitions is in the table."
                    .into(),
            });
        }
    }
    // WEB-1's throughput series.
    let series_of = |arm: Arm, pep: bool| -> Vec<(f64, f64)> {
        let v = d.select(|w| {
            *w == What::Page {
                page: 2500,
                obj: 5,
                arm,
                pep,
                fl: FL,
            }
        });
        let Some(x) = v.first() else {
            return Vec::new();
        };
        // 100 ms bins (the paper's sampling), shown as a moving mean over two RTTs
        // (1.5 s): single bins swing between 0 and the link rate as each RTT's
        // flight arrives, and a window that is not a whole number of RTTs beats.
        let bin_s = brisk_time::dur_nanos(BIN) as f64 / 1e9;
        let w = 15usize;
        (0..x.series.len())
            .map(|i| {
                let lo = i.saturating_sub(w - 1);
                let sum: u64 = x.series[lo..=i].iter().sum();
                let span = (i - lo + 1) as f64 * bin_s;
                ((i + 1) as f64 * bin_s, sum as f64 * 8.0 / span / 1e6)
            })
            .collect()
    };
    for pep in [true, false] {
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!(
                    "Throughput, 500 × 5 kB page, {} (Figs 2–3)",
                    if pep { "PEP" } else { "end to end" }
                ),
                x_label: "time since the page started (s); 100 ms bins, 1.5 s (2 RTT) moving mean, repetition 1".into(),
                y_label: "object bytes read (Mbit/s)".into(),
                series: vec![
                    Series::new("HTTP/1.1, 6 connections", GREY, Style::Line, series_of(Arm::Http, pep)),
                    Series::new("HTTP/2 (TLS, 100 streams)", RED, Style::Line, series_of(Arm::H2, pep)),
                ],
                h_lines: vec![(model_kbps / 1000.0, "N_c·S/RTT = 0.32 Mbit/s".into())],
                ..Chart::default()
            }),
            paper: "Fig. 2: HTTP/1 at ≈ 230 kbit/s of 8 Mbit/s, one object per RTT per connection. Fig. 3: HTTP/2 done in ≈ 12 s at ≈ 1.7 Mbit/s average, a SYN_STREAM burst at ≈ 4 s peaking at 2 Mbit/s, ≈ 3 s of set-up.".into(),
            ours: format!(
                "HTTP/1.1: {:.0} kbit/s average end to end, in bursts of 6 objects per RTT. HTTP/2: {plt_h2:.1} s end to end, {plt_h2_pep:.1} s through the PEP; its first data after the 3-RTT set-up and the HTML's RTT, then growing with slow start (PEP) or capped at 128 kB per RTT by the receive buffer (end to end).",
                rate_h1
            ),
        });
    }
}

fn tune_claims(r: &mut ExperimentResult, d: &Done<'_>) {
    let plt = |rcvbuf: usize, cap: usize, pep: bool| -> f64 {
        let v = d.select(|w| *w == What::Tune { rcvbuf, cap, pep });
        mean(
            &v.iter()
                .filter_map(|x| x.plt_ns.map(secs))
                .collect::<Vec<_>>(),
        )
    };
    let base = plt(TUNE_RCVBUF[0], 100, false);
    let tuned = plt(TUNE_RCVBUF[1], 150, false);
    let grid: Vec<String> = [false, true]
        .iter()
        .flat_map(|&pep| {
            TUNE_RCVBUF
                .iter()
                .flat_map(move |&b| TUNE_CAP.iter().map(move |&c| (pep, b, c)))
        })
        .map(|(pep, b, c)| {
            let v = d.select(|w| {
                *w == What::Tune {
                    rcvbuf: b,
                    cap: c,
                    pep,
                }
            });
            let drops: u64 = v.iter().map(|x| x.forward_drops).sum();
            format!(
                "{} rcvbuf {} kB cap {c}: {:.1} s ({drops} forward-link drops)",
                if pep { "PEP" } else { "e2e" },
                b / 1024,
                plt(b, c, pep)
            )
        })
        .collect();
    r.claims.push(
        Claim::new("WEB-5a", "HTTP/2, 500 × 5 kB end to end: PLT with rcvbuf ≥ BDP and 150 streams vs defaults (128 kB, 100)")
            .paper_text("the 128 kB buffer and the 100-stream cap limit HTTP/2 (no numbers)")
            .ours(tuned / base)
            .unit("tuned ÷ default PLT")
            .tolerance("< 1")
            .note(format!("Default {base:.1} s, tuned {tuned:.1} s (rcvbuf 1 MiB ≥ BDP 750 kB). Grid: {}.", grid.join("; ")))
            .check(tuned < base),
    );
    let cap_gain = plt(TUNE_RCVBUF[1], 100, false) / plt(TUNE_RCVBUF[1], 300, false);
    r.claims.push(
        Claim::new("WEB-5b", "HTTP/2 end to end, rcvbuf 1 MiB: PLT with 100 streams ÷ with 300")
            .paper_text("the path could sustain ≈ 150 streams, several hundred of a few kB")
            .ours(cap_gain)
            .unit("×")
            .tolerance("> 1 (a higher cap helps once the buffer does not bind)")
            .note("The stream cap binds only while the requests outnumber it: a 500-object page opens 100 streams, then refills as each finishes.")
            .check(cap_gain > 1.0),
    );
    let retry = |pep: bool, ms: u64| -> (u64, u64) {
        let v = d.select(|w| *w == What::Retry { pep, retry_ms: ms });
        (
            v.iter().map(|x| x.backups).sum(),
            v.iter().map(|x| x.client_syns).sum(),
        )
    };
    let (b250, s250) = retry(false, 250);
    let (b1000, _) = retry(false, 1000);
    let (bpep, _) = retry(true, 250);
    r.claims.push(
        Claim::new("WEB-5c", "Connection retry timer 250 ms < RTT end to end: extra connection opens (HTTP/2 + HTTPS page)")
            .paper_text("the 250 ms retry causes duplicate connection opens")
            .ours(b250 as f64)
            .unit("backup connections")
            .tolerance("> 0 at 250 ms; 0 at 1 s and through the PEP")
            .note(format!("End to end, 250 ms: {b250} backups, {s250} client SYNs for the two loads; 1 s: {b1000} backups; PEP at 250 ms: {bpep} (the terminal answers the SYN in ≈ 1 ms). The browser's idle reset was not built (no idle gaps of seconds arise without DAMA jitter or loss)."))
            .check(b250 > 0 && b1000 == 0 && bpep == 0),
    );
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "HTTP/2 PLT of the 500 × 5 kB page against the stream cap (WEB-5; mean of up to 3 loads)".into(),
            x_label: "concurrent-stream cap".into(),
            y_label: "page load time (s)".into(),
            y_range: Some((0.0, 25.0)),
            series: [(false, TUNE_RCVBUF[0], GREY, "e2e, rcvbuf 128 kB"), (false, TUNE_RCVBUF[1], RED, "e2e, rcvbuf 1 MiB"), (true, TUNE_RCVBUF[0], BLUE, "PEP, rcvbuf 128 kB"), (true, TUNE_RCVBUF[1], GREEN, "PEP, rcvbuf 1 MiB")]
                .iter()
                .map(|&(pep, b, c, n)| {
                    // Dashed where lines may lie on top of each other (the PEP's two).
                    let style = if b == TUNE_RCVBUF[1] { Style::Dashed } else { Style::Line };
                    Series::new(n, c, style, TUNE_CAP.iter().map(|&k| (k as f64, plt(b, k, pep))).collect())
                })
                .collect(),
            ..Chart::default()
        }),
        paper: "§4.3 and §5: 100 streams and ≈ 128 kB buffers hold HTTP/2 back on the 750 ms path; no figure.".into(),
        ours: format!("End to end the receive buffer is the binding limit ({base:.1} s at 128 kB, 100 streams; {tuned:.1} s at 1 MiB, 150 streams); through the PEP the client's buffer only spans the LAN leg and does not matter (the two PEP lines coincide; 1 MiB dashed). Through the PEP the cap's effect is erratic, not monotonic, with no drops: CUBIC's HyStart ends the satellite leg's slow start at a window that depends on when the request bursts cross the thin return link (docs/mechanisms/satellite-web.md, the stream-cap section)."),
    });
}

fn setup_claims(r: &mut ExperimentResult, d: &Done<'_>) {
    let mut rows = Vec::new();
    let mut worst: f64 = 0.0;
    let mut missing = false;
    let mut tls_rows = Vec::new();
    for (proto, tls, name, want) in SETUPS {
        let load = |tfo: bool, rustls: bool| {
            d.select(|w| {
                *w == What::Setup {
                    proto,
                    tls,
                    tfo,
                    rustls,
                }
            })
            .first()
            .copied()
        };
        let setup = |tfo: bool, rustls: bool| {
            load(tfo, rustls)
                .and_then(|x| x.setup_ns)
                .map_or(f64::NAN, |n| secs(n) / RTT_S)
        };
        // Fast Open (measured, `SatWebConfig::fastopen`): with a cookie cached the SYN
        // carries the first flight, 1 RTT less.
        let (got, tfo, model) = (setup(false, true), setup(true, true), setup(false, false));
        missing |= got.is_nan() || tfo.is_nan();
        worst = worst
            .max((got - want).abs())
            .max((tfo - (want - 1.0)).abs());
        let m = if tls == Tls::None {
            String::new()
        } else {
            format!(", model {model:.2}")
        };
        rows.push(format!(
            "{name}: {got:.2} RTT (expected {want}{m}); with TFO {tfo:.2} (expected {})",
            want - 1.0
        ));
        if let Some(x) = load(false, true).filter(|_| tls != Tls::None) {
            let t = &x.tls;
            tls_rows.push(format!(
                "{name}: {} full + {} resumed handshakes, {} with 0-RTT data ({} refused), {} h2 by ALPN, server's first flight {} B, TLS bytes in {} for {} of plaintext",
                t.full,
                t.resumed,
                t.early_sent,
                t.early_refused,
                t.alpn_h2,
                t.server_first_flight.unwrap_or(0),
                t.wire.received,
                t.wire.plain_received
            ));
        }
    }
    r.claims.push(
        Claim::new(
            "WEB-6a",
            "Round trips to the first request byte, end to end, per combination (measured)",
        )
        .paper_text("TCP 1 RTT; TLS full +2, resumed +1; Upgrade +1, ALPN +0; TFO −1")
        .ours(worst)
        .unit("RTT, largest deviation")
        .tolerance("every combination exact (≤ 0.1 RTT off)")
        .note(format!(
            "{}. TLS is rustls (brisk_sim::sat_tls); the model's count beside it. TFO measured: a priming visit leaves the cookie, then the page's connections carry their first flight on the SYN. What rustls did per page (5 × 5 kB, end to end): {}.",
            rows.join("; "),
            tls_rows.join("; ")
        ))
        .check(!missing && worst <= 0.1),
    );
    let iw = |iw: u32| -> f64 {
        let v = d.select(|w| *w == What::Iw { iw });
        v.first()
            .and_then(|x| Some((x.plt_ns? - x.setup_ns?) as f64 / 1e9 / RTT_S))
            .unwrap_or(f64::NAN)
    };
    let (i3, i10) = (iw(3), iw(10));
    r.claims.push(
        Claim::new(
            "WEB-6b",
            "One 14 kB object end to end: round trips from request to last byte, IW 3 vs IW 10",
        )
        .paper_text("IW 10 ≈ 15 kB in the first flight vs IW 3")
        .ours(i3 - i10)
        .unit("RTT saved by IW 10")
        .tolerance("IW 10 in 1 RTT (±0.1), IW 3 in 3 RTT (±0.1)")
        .note(format!(
            "IW 3: {i3:.2} RTT; IW 10: {i10:.2} RTT (4 344, 8 688, … bytes per round with IW 3)."
        ))
        .check((i10 - 1.0).abs() <= 0.1 && (i3 - 3.0).abs() <= 0.1),
    );
}

/// Least-squares slope of y on x.
fn fit_slope(p: &[(f64, f64)]) -> f64 {
    let n = p.len() as f64;
    let mx = p.iter().map(|x| x.0).sum::<f64>() / n;
    let my = p.iter().map(|x| x.1).sum::<f64>() / n;
    let sxy: f64 = p.iter().map(|x| (x.0 - mx) * (x.1 - my)).sum();
    let sxx: f64 = p.iter().map(|x| (x.0 - mx).powi(2)).sum();
    sxy / sxx
}

/// (max − min) / mean.
fn spread(v: &[f64]) -> f64 {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (hi - lo) / mean(v)
}
