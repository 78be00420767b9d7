//! `brisk lab send --json`: iperf3's `-J` report layout, so scripts written for iperf3
//! read brisk's transfers unchanged. The keys are iperf 3.12's (`tests/data/iperf3-J.json`
//! is its output for one TCP stream over loopback; a unit test below compares the key
//! sets), with brisk's values:
//! - `intervals[]` are timed at the receiver (Linux, reading from its socket), so their
//!   bytes are goodput; their `retransmits`, `snd_cwnd`, `rtt` and `rttvar` are brisk's
//!   sender counters sampled at the interval boundaries on the sender's clock
//!   ([`Sampler`]), as iperf3 reads `TCP_INFO` at each interval.
//! - `cpu_utilization_percent`: `host_*` is the brisk process (its TCP stack, the
//!   emulator and the receiver's thread: one process runs all three), `remote_*` the
//!   receiving thread alone, both from `getrusage` over the transfer.
//! - `socket` is the stream's number (1): brisk's connection has no file descriptor.
//! - brisk adds `end.intact` and `end.sha256`.

use brisk_tcp::TcpInfo;
use serde_json::{json, Value};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// CPU time of the process or of the calling thread, (user, system) seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cpu {
    pub user: f64,
    pub system: f64,
}

impl Cpu {
    fn of(who: libc::c_int) -> Cpu {
        // SAFETY: getrusage writes one `rusage` into the zeroed struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return Cpu::default();
        }
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Cpu {
            user: s(ru.ru_utime),
            system: s(ru.ru_stime),
        }
    }
    /// The whole process.
    pub fn process() -> Cpu {
        Cpu::of(libc::RUSAGE_SELF)
    }
    /// The calling thread.
    pub fn thread() -> Cpu {
        Cpu::of(libc::RUSAGE_THREAD)
    }
    /// CPU used since `earlier`.
    pub fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            user: (self.user - earlier.user).max(0.0),
            system: (self.system - earlier.system).max(0.0),
        }
    }
}

/// The congestion control of a Linux socket (`TCP_CONGESTION`), e.g. "cubic".
pub fn tcp_congestion(s: &impl std::os::fd::AsRawFd) -> Option<String> {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `buf`, which we own.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let b = &buf[..(len as usize).min(buf.len())];
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Some(String::from_utf8_lossy(&b[..end]).into_owned())
}

/// One reading of the sender's counters.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Seconds since the first write.
    pub at: f64,
    pub info: TcpInfo,
}

/// A writer around brisk's connection that reads its `TcpInfo` at every interval
/// boundary passed while writing (and once more at the end, [`Sampler::sample`]).
pub struct Sampler<'a, W: Write> {
    inner: &'a mut W,
    info: &'a dyn Fn(&W) -> Option<TcpInfo>,
    t0: Instant,
    every: Duration,
    next: Duration,
    pub samples: Vec<Sample>,
}

impl<'a, W: Write> Sampler<'a, W> {
    pub fn new(inner: &'a mut W, info: &'a dyn Fn(&W) -> Option<TcpInfo>, every: Duration) -> Self {
        Sampler {
            inner,
            info,
            t0: Instant::now(),
            every: every.max(Duration::from_millis(1)),
            next: every.max(Duration::from_millis(1)),
            samples: Vec::new(),
        }
    }

    /// Reads the counters now.
    pub fn sample(&mut self) {
        if let Some(info) = (self.info)(self.inner) {
            self.samples.push(Sample {
                at: self.t0.elapsed().as_secs_f64(),
                info,
            });
        }
    }

    /// A sampler that goes on from `t0` with `samples` (after the writer's shutdown).
    pub fn resume(
        inner: &'a mut W,
        info: &'a dyn Fn(&W) -> Option<TcpInfo>,
        every: Duration,
        t0: Instant,
        samples: Vec<Sample>,
    ) -> Self {
        let every = every.max(Duration::from_millis(1));
        let mut next = every;
        while next <= t0.elapsed() {
            next += every;
        }
        Sampler {
            inner,
            info,
            t0,
            every,
            next,
            samples,
        }
    }

    /// Goes on reading the counters at each interval boundary after the last write,
    /// while the data drains, until `done()` (bounded by `limit`).
    pub fn sample_until(&mut self, done: impl Fn() -> bool, limit: Duration) {
        while !done() && self.t0.elapsed() < limit && self.samples.len() < 100_000 {
            let now = self.t0.elapsed();
            if now >= self.next {
                self.sample();
                while self.next <= self.t0.elapsed() {
                    self.next += self.every;
                }
            }
            std::thread::sleep((self.next.saturating_sub(now)).min(Duration::from_millis(20)));
        }
    }

    /// The clock's start and the samples.
    pub fn into_parts(self) -> (Instant, Vec<Sample>) {
        (self.t0, self.samples)
    }

    /// Seconds since the first write.
    pub fn elapsed(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }
}

impl<W: Write> Write for Sampler<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        // Bounded: at most one sample per interval, and the report keeps only as many
        // intervals as the receiver's (`tools::MAX_INTERVALS`).
        if self.t0.elapsed() >= self.next && self.samples.len() < 100_000 {
            self.sample();
            while self.next <= self.t0.elapsed() {
                self.next += self.every;
            }
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// What `lab send --json` reports.
pub struct IperfRun<'a> {
    pub local: Option<SocketAddr>,
    pub remote: SocketAddr,
    pub cc: &'a str,
    /// The receiver's (the Linux socket's) congestion control.
    pub receiver_cc: String,
    pub bytes: u64,
    pub interval: f64,
    pub send_s: f64,
    /// The sender's counters during the transfer; the last is read at its end.
    pub samples: &'a [Sample],
    pub got: &'a brisk_emu::tools::TransferReport,
    pub intervals: &'a [brisk_emu::tools::Interval],
    pub intact: bool,
    /// CPU over the transfer: the process, and the receiving thread.
    pub host_cpu: Cpu,
    pub remote_cpu: Cpu,
    /// Wall seconds the CPU figures are over.
    pub wall_s: f64,
    /// brisk's default MSS.
    pub mss: u32,
}

/// The `uname -a`-like line iperf3 reports as `system_info`.
pub fn system_info() -> String {
    let r = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    format!(
        "{} {} {} {} {}",
        if r("ostype").is_empty() {
            std::env::consts::OS.to_string()
        } else {
            r("ostype")
        },
        r("hostname"),
        r("osrelease"),
        r("version"),
        std::env::consts::ARCH
    )
}

/// RFC 7231 date, as iperf3's `timestamp.time`: "Sun, 06 Dec 2026 04:12:19 GMT".
pub fn http_date(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The last sample at or before `t` (else the first).
fn sample_at(samples: &[Sample], t: f64) -> Option<&Sample> {
    samples
        .iter()
        .rev()
        .find(|s| s.at <= t + 1e-9)
        .or(samples.first())
}

fn pct(c: Cpu, wall: f64) -> (f64, f64, f64) {
    if wall <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let (u, s) = (c.user / wall * 100.0, c.system / wall * 100.0);
    (u + s, u, s)
}

/// The report.
pub fn report(r: &IperfRun) -> Value {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let bps = |b: u64, s: f64| if s > 0.0 { b as f64 * 8.0 / s } else { 0.0 };
    let us = |d: brisk_tcp::Duration| u64::try_from(d.as_nanos() / 1000).unwrap_or(u64::MAX);
    let retx_at = |t: f64| sample_at(r.samples, t).map_or(0, |s| s.info.retransmits);
    let mut prev_retx = 0;
    let n = r.intervals.len();
    let intervals: Vec<Value> = r
        .intervals
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let s = i.end - i.start;
            // The last interval takes every retransmission up to the final reading.
            let now = if k + 1 == n {
                r.samples.last().map_or(0, |s| s.info.retransmits)
            } else {
                retx_at(i.end)
            };
            let retx = now.saturating_sub(prev_retx);
            prev_retx = prev_retx.max(now);
            let at = sample_at(r.samples, i.end);
            let stream = json!({
                "socket": 1, "start": i.start, "end": i.end, "seconds": s, "bytes": i.bytes,
                "bits_per_second": bps(i.bytes, s), "retransmits": retx,
                "snd_cwnd": at.map_or(0, |a| u64::from(a.info.cwnd) * u64::from(a.info.mss)),
                "snd_wnd": at.map_or(0, |a| a.info.snd_wnd),
                "rtt": at.map_or(0, |a| us(a.info.srtt)),
                "rttvar": at.map_or(0, |a| us(a.info.rttvar)),
                "pmtu": at.map_or(0, |a| a.info.mss + 40),
                "omitted": false, "sender": false,
            });
            json!({
                "streams": [stream],
                "sum": {
                    "start": i.start, "end": i.end, "seconds": s, "bytes": i.bytes,
                    "bits_per_second": bps(i.bytes, s), "retransmits": retx,
                    "omitted": false, "sender": false,
                },
            })
        })
        .collect();
    let last = r.samples.last();
    let retransmits = last.map_or(0, |s| s.info.retransmits);
    let rtts: Vec<u64> = r
        .samples
        .iter()
        .map(|s| us(s.info.srtt))
        .filter(|&v| v > 0)
        .collect();
    let max_of = |f: &dyn Fn(&Sample) -> u64| r.samples.iter().map(f).max().unwrap_or(0);
    let sum_sent = json!({
        "start": 0, "end": r.send_s, "seconds": r.send_s, "bytes": r.bytes,
        "bits_per_second": bps(r.bytes, r.send_s), "retransmits": retransmits,
        "sender": true,
    });
    let sum_received = json!({
        "start": 0, "end": r.got.seconds, "seconds": r.got.seconds,
        "bytes": r.got.digest.bytes, "bits_per_second": r.got.goodput_bps,
        "sender": true,
    });
    let mut sender = sum_sent.clone();
    if let Some(o) = sender.as_object_mut() {
        o.insert("socket".into(), json!(1));
        o.insert(
            "max_snd_cwnd".into(),
            json!(max_of(&|s| u64::from(s.info.cwnd) * u64::from(s.info.mss))),
        );
        o.insert(
            "max_snd_wnd".into(),
            json!(max_of(&|s| u64::from(s.info.snd_wnd))),
        );
        o.insert(
            "max_rtt".into(),
            json!(rtts.iter().max().copied().unwrap_or(0)),
        );
        o.insert(
            "min_rtt".into(),
            json!(rtts.iter().min().copied().unwrap_or(0)),
        );
        o.insert(
            "mean_rtt".into(),
            json!(if rtts.is_empty() {
                0
            } else {
                rtts.iter().sum::<u64>() / rtts.len() as u64
            }),
        );
    }
    let mut receiver = sum_received.clone();
    if let Some(o) = receiver.as_object_mut() {
        o.insert("socket".into(), json!(1));
    }
    let (ht, hu, hs) = pct(r.host_cpu, r.wall_s);
    let (rt, ru, rs) = pct(r.remote_cpu, r.wall_s);
    json!({
        "start": {
            "connected": [{
                "socket": 1,
                "local_host": r.local.map(|a| a.ip().to_string()),
                "local_port": r.local.map(|a| a.port()),
                "remote_host": r.remote.ip().to_string(),
                "remote_port": r.remote.port(),
            }],
            "version": format!("brisk {}", env!("CARGO_PKG_VERSION")),
            "system_info": system_info(),
            "timestamp": {"time": http_date(secs), "timesecs": secs},
            "connecting_to": {"host": r.remote.ip().to_string(), "port": r.remote.port()},
            "tcp_mss_default": r.mss,
            "target_bitrate": 0,
            "test_start": {
                "protocol": "TCP", "num_streams": 1, "blksize": brisk_emu::tools::CHUNK,
                "omit": 0, "duration": 0, "bytes": r.bytes, "blocks": 0,
                "reverse": 0, "tos": 0, "target_bitrate": 0,
                "congestion": r.cc, "interval": r.interval,
            },
        },
        "intervals": intervals,
        "end": {
            "streams": [{"sender": sender, "receiver": receiver}],
            "sum_sent": sum_sent,
            "sum_received": sum_received,
            "cpu_utilization_percent": {
                "host_total": ht, "host_user": hu, "host_system": hs,
                "remote_total": rt, "remote_user": ru, "remote_system": rs,
            },
            "sender_tcp_congestion": r.cc,
            "receiver_tcp_congestion": r.receiver_cc,
            "intact": r.intact,
            "sha256": r.got.digest.sha256,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every key path of a JSON value (`a.b[].c`), arrays by their first element.
    fn paths(v: &Value, p: &str, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let q = format!("{p}.{k}");
                    out.insert(q.clone());
                    paths(x, &q, out);
                }
            }
            Value::Array(a) => {
                if let Some(x) = a.first() {
                    paths(x, &format!("{p}[]"), out);
                }
            }
            _ => {}
        }
    }

    fn info(retx: u64, cwnd: u32) -> TcpInfo {
        TcpInfo {
            retransmits: retx,
            cwnd,
            mss: 1448,
            srtt: brisk_tcp::Duration::from_millis(20),
            ..TcpInfo::default()
        }
    }

    fn run_report() -> Value {
        let got = brisk_emu::tools::TransferReport {
            digest: brisk_emu::tools::expected_digest(3000, 1),
            seconds: 3.0,
            goodput_bps: 8000.0,
        };
        let iv = |k: u64| brisk_emu::tools::Interval {
            start: k as f64,
            end: k as f64 + 1.0,
            bytes: 1000,
        };
        let intervals = [iv(0), iv(1), iv(2)];
        let samples = [
            Sample {
                at: 1.0,
                info: info(2, 10),
            },
            Sample {
                at: 2.0,
                info: info(5, 20),
            },
            Sample {
                at: 2.5,
                info: info(6, 15),
            },
        ];
        report(&IperfRun {
            local: Some("198.18.0.1:40000".parse().unwrap()),
            remote: "198.18.0.2:5001".parse().unwrap(),
            cc: "cubic",
            receiver_cc: "cubic".into(),
            bytes: 3000,
            interval: 1.0,
            send_s: 2.5,
            samples: &samples,
            got: &got,
            intervals: &intervals,
            intact: true,
            host_cpu: Cpu {
                user: 1.0,
                system: 0.5,
            },
            remote_cpu: Cpu {
                user: 0.1,
                system: 0.2,
            },
            wall_s: 3.0,
            mss: 1460,
        })
    }

    #[test]
    fn has_every_key_of_iperf3_dash_j_except_iperf_internals() {
        let reference: Value = serde_json::from_str(include_str!("../tests/data/iperf3-J.json"))
            .expect("iperf3 -J reference parses");
        let (mut want, mut got) = (BTreeSet::new(), BTreeSet::new());
        paths(&reference, "", &mut want);
        paths(&run_report(), "", &mut got);
        // iperf3's own bookkeeping, with no meaning for brisk's transfer.
        let internal = [
            ".start.cookie",
            ".start.sock_bufsize",
            ".start.sndbuf_actual",
            ".start.rcvbuf_actual",
        ];
        let missing: Vec<&String> = want
            .iter()
            .filter(|k| !got.contains(*k) && !internal.contains(&k.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "keys iperf3 -J has and brisk lacks: {missing:?}"
        );
    }

    #[test]
    fn interval_retransmits_are_the_sender_counter_differences() {
        let v = run_report();
        let retx: Vec<u64> = v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["sum"]["retransmits"].as_u64().unwrap())
            .collect();
        // Cumulative 2 at 1 s, 5 at 2 s, 6 at the end.
        assert_eq!(retx, [2, 3, 1]);
        assert_eq!(v["end"]["sum_sent"]["retransmits"], 6);
        assert_eq!(v["end"]["streams"][0]["sender"]["max_snd_cwnd"], 20 * 1448);
        assert_eq!(v["intervals"][1]["streams"][0]["snd_cwnd"], 20 * 1448);
        let cpu = &v["end"]["cpu_utilization_percent"];
        assert!((cpu["host_total"].as_f64().unwrap() - 50.0).abs() < 1e-9);
        assert!((cpu["remote_system"].as_f64().unwrap() - 100.0 * 0.2 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn http_date_matches_iperf3s_format() {
        // iperf3 printed "Sun, 06 Dec 2026 04:12:19 GMT" for 1796530339.
        assert_eq!(http_date(1_796_530_339), "Sun, 06 Dec 2026 04:12:19 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
