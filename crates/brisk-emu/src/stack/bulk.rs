//! An iperf-like bulk transfer between two lab namespaces with the kernel's TCP, the
//! baseline brisk is compared against. Sockets are created on threads that entered
//! the namespace ([`Netns::run_in`]), so they stay in it; the transfer itself runs on
//! ordinary threads of this process (no subprocesses to clean up).
//!
//! The payload is keyed by `seed` and by each byte's stream offset, and the receiver
//! compares every byte it reads with it (`stack/pattern.rs`, which says why not a
//! hash), so a corrupted, lost, duplicated or reordered byte shows, with its offset.
//! The sender sets
//! `TCP_CONGESTION`, half-closes after the last byte, waits for the receiver to close
//! (everything acknowledged), then reads `TCP_INFO` for RTT and retransmissions.
//! Every blocking call has a timeout, so a broken path ends the run with an error.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;

use serde::Serialize;
use std::time::Duration;

use crate::error::{cvt, EmuError, Result};
use crate::os::netns::Netns;
use crate::stack::pattern::{Pattern, PatternCheck};

const CHUNK: usize = 64 * 1024;

/// How much to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    Bytes(u64),
    /// Send for this long.
    Time(Duration),
}

#[derive(Clone, Debug)]
pub struct BulkConfig {
    pub amount: Amount,
    /// Congestion control of the sender (`reno`, `cubic`, `bbr`, ...).
    pub cc: String,
    pub port: u16,
    pub seed: u64,
    /// Bound on the whole transfer (and on each blocking call).
    pub timeout: Duration,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            amount: Amount::Bytes(1 << 20),
            cc: "cubic".into(),
            port: 5201,
            seed: 1,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The sender's `TCP_INFO` at the end of the transfer.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct TcpStats {
    pub srtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub snd_cwnd: u32,
    pub snd_mss: u32,
    pub total_retrans: u32,
    pub segs_out: u32,
    pub bytes_acked: u64,
    /// The socket's pacing rate, bytes/s (`tcpi_pacing_rate`; `u64::MAX` when the
    /// kernel paces nothing).
    pub pacing_rate: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BulkReport {
    pub cc: String,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// From accept to the receiver's last byte.
    pub seconds: f64,
    pub goodput_bps: f64,
    /// Stream offset of the first received byte that differed from the pattern.
    pub mismatch_at: Option<u64>,
    /// Same length and every byte as sent.
    pub intact: bool,
    pub sender: TcpStats,
}

/// Congestion controls the kernel offers.
pub fn available_congestion_controls() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Sets `TCP_CONGESTION` on a kernel socket (before it has sent data). Name it for
/// every Linux flow: new namespaces default to the host's controller (often bbr).
pub fn set_cc(s: &TcpStream, cc: &str) -> Result<()> {
    // SAFETY: setsockopt reads `cc.len()` bytes from a live str.
    cvt(unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        )
    })
    .map(drop)
    .map_err(|e| {
        EmuError::io(
            format!(
                "TCP_CONGESTION {cc} (available: {})",
                available_congestion_controls().join(" ")
            ),
            e,
        )
    })
}

/// Reads `TCP_INFO` of a connected socket.
pub fn tcp_stats(s: &TcpStream) -> Result<TcpStats> {
    // SAFETY: an all-zero tcp_info is valid; the kernel fills at most `len` bytes.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    cvt(unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    })
    .map_err(|e| EmuError::io("getsockopt(TCP_INFO)", e))?;
    Ok(TcpStats {
        srtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        min_rtt_us: info.tcpi_min_rtt,
        snd_cwnd: info.tcpi_snd_cwnd,
        snd_mss: info.tcpi_snd_mss,
        total_retrans: info.tcpi_total_retrans,
        segs_out: info.tcpi_segs_out,
        bytes_acked: info.tcpi_bytes_acked,
        pacing_rate: info.tcpi_pacing_rate,
    })
}

struct Received {
    bytes: u64,
    seconds: f64,
    mismatch_at: Option<u64>,
}

fn receive(listener: TcpListener, seed: u64, timeout: Duration) -> Result<Received> {
    listener
        .set_nonblocking(true)
        .map_err(|e| EmuError::io("listener nonblocking", e))?;
    let start = std::time::Instant::now();
    let (mut s, _) = loop {
        match listener.accept() {
            Ok(c) => break c,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if start.elapsed() > timeout {
                    return Err(EmuError::io("accept", ErrorKind::TimedOut.into()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(EmuError::io("accept", e)),
        }
    };
    let _pin = crate::os::sched::cpus_from_env(crate::os::sched::BULK_CPU_ENV)
        .and_then(|(_, r)| crate::os::sched::AffinityGuard::restrict(|c| c == r));
    let t0 = std::time::Instant::now();
    s.set_nonblocking(false)
        .and_then(|()| s.set_read_timeout(Some(timeout)))
        .map_err(|e| EmuError::io("receiver socket options", e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut check = PatternCheck::new(seed);
    let mut bytes = 0u64;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                check.update(bytes, &buf[..n]);
                bytes += n as u64;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(EmuError::io(format!("receiving after {bytes} bytes"), e)),
        }
        if t0.elapsed() > timeout {
            return Err(EmuError::io("receiving", ErrorKind::TimedOut.into()));
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    drop(s); // closing tells the sender everything arrived
    Ok(Received {
        bytes,
        seconds,
        mismatch_at: check.mismatch_at(),
    })
}

struct Sent {
    bytes: u64,
    stats: TcpStats,
}

fn send(mut s: TcpStream, cfg: &BulkConfig) -> Result<Sent> {
    s.set_write_timeout(Some(cfg.timeout))
        .and_then(|()| s.set_read_timeout(Some(cfg.timeout)))
        .map_err(|e| EmuError::io("sender socket options", e))?;
    let _pin = crate::os::sched::cpus_from_env(crate::os::sched::BULK_CPU_ENV)
        .and_then(|(t, _)| crate::os::sched::AffinityGuard::restrict(|c| c == t));
    let mut buf = vec![0u8; CHUNK];
    let mut sent = 0u64;
    let pattern = Pattern::new(cfg.seed);
    let start = std::time::Instant::now();
    loop {
        let n = match cfg.amount {
            Amount::Bytes(total) => (total - sent).min(CHUNK as u64) as usize,
            Amount::Time(d) if start.elapsed() < d => CHUNK,
            Amount::Time(_) => 0,
        };
        if n == 0 {
            break;
        }
        if start.elapsed() > cfg.timeout {
            return Err(EmuError::io("sending", ErrorKind::TimedOut.into()));
        }
        pattern.fill(sent, &mut buf[..n]);
        s.write_all(&buf[..n])
            .map_err(|e| EmuError::io(format!("sending after {sent} bytes"), e))?;
        sent += n as u64;
    }
    s.shutdown(Shutdown::Write)
        .map_err(|e| EmuError::io("half-close", e))?;
    // The receiver closes once it has read everything; then all data is acknowledged.
    let mut one = [0u8; 1];
    loop {
        match s.read(&mut one) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // A reset after the receiver's close still means it is done.
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => return Err(EmuError::io("waiting for the receiver to close", e)),
        }
    }
    Ok(Sent {
        bytes: sent,
        stats: tcp_stats(&s)?,
    })
}

/// Sends from a client in `client_ns` to a server at `server_addr` in `server_ns`.
pub fn run_bulk(
    client_ns: &Netns,
    server_ns: &Netns,
    server_addr: Ipv4Addr,
    cfg: &BulkConfig,
) -> Result<BulkReport> {
    let addr = SocketAddr::from((server_addr, cfg.port));
    let listener = server_ns.run_in(move || {
        TcpListener::bind(addr).map_err(|e| EmuError::io(format!("bind {addr}"), e))
    })??;
    let (timeout, seed) = (cfg.timeout, cfg.seed);
    let receiver = std::thread::Builder::new()
        .name("brisk-bulk-rx".into())
        .spawn(move || receive(listener, seed, timeout))
        .map_err(|e| EmuError::io("spawning the receiver", e))?;
    let connect_timeout = timeout.min(Duration::from_secs(5));
    let stream = client_ns.run_in(move || {
        TcpStream::connect_timeout(&addr, connect_timeout)
            .map_err(|e| EmuError::io(format!("connect {addr}"), e))
    })?;
    let sent = stream.and_then(|s| {
        set_cc(&s, &cfg.cc)?;
        send(s, cfg)
    });
    let received = receiver
        .join()
        .map_err(|p| EmuError::Panicked(crate::error::panic_message(&*p)))?;
    let (sent, received) = (sent?, received?);
    let seconds = received.seconds;
    Ok(BulkReport {
        cc: cfg.cc.clone(),
        bytes_sent: sent.bytes,
        bytes_received: received.bytes,
        seconds,
        goodput_bps: if seconds > 0.0 {
            received.bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        intact: sent.bytes == received.bytes && received.mismatch_at.is_none(),
        mismatch_at: received.mismatch_at,
        sender: sent.stats,
    })
}
