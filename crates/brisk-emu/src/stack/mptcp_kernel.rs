//! Linux's MPTCP (RFC 8684 v1) as a lab endpoint: `IPPROTO_MPTCP` sockets made in a
//! lab namespace, the in-kernel path manager's limits and endpoints (`ip mptcp`), the
//! namespace's MPTCP counters (what `nstat` shows as `MPTcpExt*`), and a bulk
//! transfer whose both ends hash the stream with SHA-256 — the reference brisk's MPTCP
//! will be checked against. Set-up mirrors Linux's `tools/testing/selftests/net/
//! mptcp/mptcp_join.sh` (`net.mptcp.enabled=1`, `ip mptcp limits set subflows N
//! add_addr_accepted M`, `ip mptcp endpoint add ADDR dev DEV signal|subflow`, the
//! counters read per namespace). The sockets are plain stream sockets to the
//! application, so they are handed out as `std::net` types.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, RawFd};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{cvt, EmuError, Result};
use crate::os::netns::Netns;
use crate::tools::{source, timed_sink, StreamDigest};

/// `IPPROTO_MPTCP` (include/uapi/linux/in.h).
pub const IPPROTO_MPTCP: libc::c_int = 262;

/// Why Linux MPTCP cannot be used here, or `None` when it can (the namespaces this
/// process creates inherit the kernel's support).
pub fn unsupported_reason() -> Option<String> {
    if !std::path::Path::new("/proc/sys/net/mptcp/enabled").exists() {
        return Some("the kernel has no MPTCP (/proc/sys/net/mptcp/enabled is missing)".into());
    }
    None
}

/// Turns MPTCP on in `ns`. (The congestion control is set per socket, by
/// [`listen`] and [`connect`]: a namespace may not make a controller its default
/// unless the host allows it, and new namespaces default to the host's, often bbr.)
pub fn enable(ns: &Netns) -> Result<()> {
    ns.sysctl("net.mptcp.enabled", "1")
}

/// A flow's `[flow.tcp.mptcp]` as a namespace's kernel takes it (what
/// `brisk_scenario::knobs::MptcpKnobs::linux_refusal` lets through): `ip mptcp limits`,
/// `ip mptcp endpoint`s and the `net.mptcp` sysctls. These are per namespace, so the
/// flows sharing one must agree (see `realrun`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMptcp {
    pub subflows: u8,
    pub add_addr_accepted: u8,
    /// `net.mptcp.checksum_enabled`.
    pub checksum: bool,
    /// `net.mptcp.allow_join_initial_addr_port`.
    pub allow_join_initial_addr_port: bool,
    /// `net.mptcp.add_addr_timeout`, whole seconds.
    pub add_addr_timeout_s: u64,
    /// The senders' endpoints (the receivers' namespace gets none).
    pub endpoints: Vec<KernelEndpoint>,
}

/// `ip mptcp endpoint add ADDR id ID [port P] dev DEV [signal] [subflow] [backup]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelEndpoint {
    pub addr: Ipv4Addr,
    pub id: u8,
    pub port: u16,
    pub signal: bool,
    pub subflow: bool,
    pub backup: bool,
}

impl KernelMptcp {
    /// From brisk's configuration (already validated); `Err(why)` for what the
    /// kernel cannot take: an IPv6 endpoint in an IPv4 lab, a sub-second
    /// ADD_ADDR timeout, a port on an endpoint that does not signal it.
    pub fn from_config(c: &brisk_tcp::mptcp::MptcpConfig) -> std::result::Result<Self, String> {
        let t = c.pm.add_addr_timeout;
        if !t.as_nanos().is_multiple_of(1_000_000_000) {
            return Err(format!(
                "add_addr_timeout {t:?}: net.mptcp.add_addr_timeout is whole seconds"
            ));
        }
        let mut endpoints = Vec::new();
        for e in &c.pm.endpoints {
            let std::net::IpAddr::V4(addr) = e.addr.ip else {
                return Err(format!(
                    "endpoint {}: real runs are IPv4 only (yet)",
                    e.addr.ip
                ));
            };
            if e.addr.port != 0 && !e.signal {
                return Err(format!(
                    "endpoint {addr} port {}: Linux takes a port only on a signal endpoint",
                    e.addr.port
                ));
            }
            endpoints.push(KernelEndpoint {
                addr,
                id: e.addr.id,
                port: e.addr.port,
                signal: e.signal,
                subflow: e.subflow,
                backup: e.backup,
            });
        }
        Ok(KernelMptcp {
            subflows: c.pm.limits.subflows,
            add_addr_accepted: c.pm.limits.add_addr_accepted,
            checksum: c.checksum,
            allow_join_initial_addr_port: c.allow_join_initial_addr_port,
            add_addr_timeout_s: (t.as_nanos() / 1_000_000_000) as u64,
            endpoints,
        })
    }

    /// `self` without endpoints (what a receivers' namespace takes).
    pub fn without_endpoints(&self) -> KernelMptcp {
        KernelMptcp {
            endpoints: Vec::new(),
            ..self.clone()
        }
    }

    /// Turns MPTCP on in `ns` and writes the sysctls, the limits and (on device
    /// `dev`) the endpoints. A fresh namespace has no endpoints, so none is flushed.
    pub fn apply(&self, ns: &Netns, dev: &str) -> Result<()> {
        enable(ns)?;
        let b = |v: bool| if v { "1" } else { "0" };
        ns.sysctl("net.mptcp.checksum_enabled", b(self.checksum))?;
        ns.sysctl(
            "net.mptcp.allow_join_initial_addr_port",
            b(self.allow_join_initial_addr_port),
        )?;
        ns.sysctl(
            "net.mptcp.add_addr_timeout",
            &self.add_addr_timeout_s.to_string(),
        )?;
        set_limits(
            ns,
            u32::from(self.subflows),
            u32::from(self.add_addr_accepted),
        )?;
        for e in &self.endpoints {
            let (a, id, port) = (e.addr.to_string(), e.id.to_string(), e.port.to_string());
            let mut args = vec!["mptcp", "endpoint", "add", &a, "id", &id];
            if e.port != 0 {
                args.extend(["port", &port]);
            }
            args.extend(["dev", dev]);
            for (on, flag) in [
                (e.signal, "signal"),
                (e.subflow, "subflow"),
                (e.backup, "backup"),
            ] {
                if on {
                    args.push(flag);
                }
            }
            ns.ip(&args)?;
        }
        Ok(())
    }
}

/// `SOL_MPTCP` (include/linux/socket.h).
const SOL_MPTCP: libc::c_int = 284;
/// `MPTCP_TCPINFO` (include/uapi/linux/mptcp.h): each subflow's `tcp_info`.
const MPTCP_TCPINFO: libc::c_int = 2;

/// One subflow of an MPTCP socket, from its `tcp_info`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SubflowInfo {
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub srtt_us: u32,
    pub cwnd: u32,
    pub total_retrans: u32,
}

/// Most subflows read per call (Linux's limits allow 8 additional ones).
const MAX_SUBFLOW_INFO: usize = 16;

/// The subflows of MPTCP socket `fd` now (`getsockopt(SOL_MPTCP, MPTCP_TCPINFO)`,
/// struct `mptcp_subflow_data` then one `tcp_info` per subflow).
pub fn subflow_info(fd: RawFd) -> std::io::Result<Vec<SubflowInfo>> {
    const HDR: usize = 16;
    let item = std::mem::size_of::<libc::tcp_info>();
    let mut buf = vec![0u8; HDR + MAX_SUBFLOW_INFO * item];
    // struct mptcp_subflow_data { size_subflow_data, num_subflows, size_kernel,
    // size_user }: the caller fills the first and the last.
    buf[0..4].copy_from_slice(&(HDR as u32).to_ne_bytes());
    buf[12..16].copy_from_slice(&(item as u32).to_ne_bytes());
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `buf`.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            SOL_MPTCP,
            MPTCP_TCPINFO,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    let word = |at: usize| u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
    let n = (word(4) as usize).min(MAX_SUBFLOW_INFO);
    let size_user = (word(12) as usize).min(item);
    let got = (len as usize).saturating_sub(HDR) / size_user.max(1);
    let mut out = Vec::new();
    for k in 0..n.min(got) {
        // SAFETY: all-zero tcp_info is valid; we copy at most its size.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let at = HDR + k * size_user;
        // SAFETY: `size_user <= size_of::<tcp_info>()` bytes from inside `buf`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                buf[at..at + size_user].as_ptr(),
                (&mut info as *mut libc::tcp_info).cast::<u8>(),
                size_user,
            )
        };
        out.push(SubflowInfo {
            bytes_acked: info.tcpi_bytes_acked,
            bytes_received: info.tcpi_bytes_received,
            srtt_us: info.tcpi_rtt,
            cwnd: info.tcpi_snd_cwnd,
            total_retrans: info.tcpi_total_retrans,
        });
    }
    Ok(out)
}

/// Only the `MPTcpExt*` counters of `m`.
pub fn mptcp_only(m: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    m.into_iter()
        .filter(|(k, _)| k.starts_with("MPTcpExt"))
        .collect()
}

/// `TCP_CONGESTION` on an MPTCP socket: Linux applies it to every subflow, the
/// joins included (`mptcp_setsockopt_sol_tcp_congestion`).
fn set_cc(fd: RawFd, cc: &str) -> std::io::Result<()> {
    // SAFETY: setsockopt reads `cc.len()` bytes from a live str.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr().cast(),
            cc.len() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// `ip mptcp limits set subflows S add_addr_accepted A` in `ns`.
pub fn set_limits(ns: &Netns, subflows: u32, add_addr_accepted: u32) -> Result<()> {
    let (s, a) = (subflows.to_string(), add_addr_accepted.to_string());
    ns.ip(&[
        "mptcp",
        "limits",
        "set",
        "subflows",
        &s,
        "add_addr_accepted",
        &a,
    ])
}

/// `ip mptcp endpoint add ADDR dev DEV FLAGS...` in `ns` (flags: `signal`,
/// `subflow`, `backup`, `fullmesh`).
pub fn add_endpoint(ns: &Netns, addr: std::net::Ipv4Addr, dev: &str, flags: &[&str]) -> Result<()> {
    for f in flags {
        if !["signal", "subflow", "backup", "fullmesh"].contains(f) {
            return Err(EmuError::Config(format!(
                "MPTCP endpoint flag {f:?}: one of signal, subflow, backup, fullmesh"
            )));
        }
    }
    let a = addr.to_string();
    let mut args = vec!["mptcp", "endpoint", "add", &a, "dev", dev];
    args.extend_from_slice(flags);
    ns.ip(&args)
}

/// The namespace's `TcpExt` and `MPTcpExt` counters from `/proc/net/netstat`, named
/// as `nstat` names them (`MPTcpExtMPJoinAckRx`, `TcpExtTCPTimeouts`, ...).
pub fn counters(ns: &Netns) -> Result<BTreeMap<String, u64>> {
    // /proc/thread-self/net is the calling thread's namespace (/proc/net would be the
    // thread group leader's).
    let text = ns
        .run_in(|| std::fs::read_to_string("/proc/thread-self/net/netstat"))?
        .map_err(|e| EmuError::io("reading /proc/thread-self/net/netstat", e))?;
    Ok(parse_netstat(&text))
}

/// Pairs of `Prefix: names...` / `Prefix: values...` lines into `PrefixName → value`.
pub fn parse_netstat(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((p1, names)), Some((p2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if p1 != p2 {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse() {
                out.insert(format!("{p1}{n}"), v);
            }
        }
    }
    out
}

/// `after − before` for every counter that changed.
pub fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(k, v)| {
            let d = v.saturating_sub(before.get(k).copied().unwrap_or(0));
            (d > 0).then(|| (k.clone(), d))
        })
        .collect()
}

fn mptcp_socket(addr: &SocketAddr) -> std::io::Result<RawFd> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain socket(2) call.
    cvt(unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            IPPROTO_MPTCP,
        )
    })
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero sockaddr_storage is valid; we fill the family's fields.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above, for sockaddr_in6.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// An MPTCP listener on `addr` in `ns` with congestion control `cc` (`SO_REUSEADDR`,
/// backlog 16).
pub fn listen(ns: &Netns, addr: SocketAddr, cc: &str) -> Result<TcpListener> {
    listen_with(ns, addr, Some(cc))
}

/// An MPTCP listener on `addr` in `ns`, with congestion control `cc` if given (a
/// receiver that only ACKs may leave it to the namespace).
pub fn listen_with(ns: &Netns, addr: SocketAddr, cc: Option<&str>) -> Result<TcpListener> {
    let cc = cc.map(str::to_string);
    ns.run_in(move || -> std::io::Result<TcpListener> {
        let fd = mptcp_socket(&addr)?;
        // SAFETY: fd is a fresh socket we own; TcpListener closes it.
        let l = unsafe { TcpListener::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads one c_int.
        cvt(unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })?;
        if let Some(cc) = &cc {
            set_cc(fd, cc)?;
        }
        let (ss, len) = sockaddr(&addr);
        // SAFETY: ss holds a valid address of `len` bytes.
        cvt(unsafe { libc::bind(fd, (&ss as *const libc::sockaddr_storage).cast(), len) })?;
        // SAFETY: listen on our socket.
        cvt(unsafe { libc::listen(fd, 16) })?;
        Ok(l)
    })?
    .map_err(|e| EmuError::io(format!("MPTCP listen on {addr}"), e))
}

/// An MPTCP connection from `ns` to `addr` with congestion control `cc`; the
/// connect gives up after `timeout` (`SO_SNDTIMEO`, which Linux's connect honours).
pub fn connect(ns: &Netns, addr: SocketAddr, cc: &str, timeout: Duration) -> Result<TcpStream> {
    let cc = cc.to_string();
    ns.run_in(move || -> std::io::Result<TcpStream> {
        let fd = mptcp_socket(&addr)?;
        // SAFETY: fd is a fresh socket we own; TcpStream closes it.
        let s = unsafe { TcpStream::from_raw_fd(fd) };
        s.set_write_timeout(Some(timeout))?;
        set_cc(fd, &cc)?;
        let (ss, len) = sockaddr(&addr);
        // SAFETY: ss holds a valid address of `len` bytes.
        cvt(unsafe { libc::connect(fd, (&ss as *const libc::sockaddr_storage).cast(), len) })?;
        Ok(s)
    })?
    .map_err(|e| EmuError::io(format!("MPTCP connect to {addr}"), e))
}

/// What an MPTCP bulk transfer measured.
#[derive(Clone, Debug, Serialize)]
pub struct MptcpTransfer {
    pub sent: StreamDigest,
    pub received: StreamDigest,
    /// From accept to the receiver's last byte.
    pub seconds: f64,
    pub goodput_bps: f64,
    /// Same length and SHA-256 at both ends.
    pub intact: bool,
}

/// What [`transfer`] sends, where, and how long it may take.
#[derive(Clone, Debug)]
pub struct TransferSpec {
    /// The server's listening address (`0.0.0.0:port` accepts joins to any address).
    pub listen_on: SocketAddr,
    /// Where the client connects (the initial subflow's destination).
    pub connect_to: SocketAddr,
    /// Congestion control of both sockets (and so of every subflow).
    pub cc: String,
    pub bytes: u64,
    /// Seed of the ChaCha8 stream (`tools::source`).
    pub seed: u64,
    /// Bound on every blocking call and on the whole run.
    pub timeout: Duration,
}

/// Sends `spec.bytes` of the seeded ChaCha8 stream (`tools::source`) from
/// `client_ns` over a fresh MPTCP connection to a listener in `server_ns`; both ends
/// hash what they wrote and read. The client half-closes after the last byte and
/// waits for the server's close. Every blocking call, and the whole run, is bounded
/// by `spec.timeout`.
pub fn transfer(
    client_ns: &Netns,
    server_ns: &Netns,
    spec: &TransferSpec,
) -> Result<MptcpTransfer> {
    let TransferSpec {
        listen_on,
        connect_to,
        ref cc,
        bytes,
        seed,
        timeout,
    } = *spec;
    let listener = listen(server_ns, listen_on, cc)?;
    let server = std::thread::Builder::new()
        .name("brisk-mptcp-rx".into())
        .spawn(move || -> Result<(StreamDigest, f64)> {
            let mut s = accept(&listener, timeout)?;
            let r = timed_sink(&mut s, bytes).map_err(|e| EmuError::io("MPTCP receiver", e))?;
            Ok((r.digest, r.seconds))
        })
        .map_err(|e| EmuError::io("spawning the MPTCP receiver", e))?;
    let sent = connect(
        client_ns,
        connect_to,
        cc,
        timeout.min(Duration::from_secs(10)),
    )
    .and_then(|mut s| {
        s.set_read_timeout(Some(timeout))
            .map_err(|e| EmuError::io("MPTCP sender timeouts", e))?;
        let d = source(&mut s, bytes, seed).map_err(|e| EmuError::io("MPTCP sender", e))?;
        s.shutdown(Shutdown::Write)
            .map_err(|e| EmuError::io("MPTCP half-close", e))?;
        let mut one = [0u8; 1];
        loop {
            match s.read(&mut one) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                Err(e) => return Err(EmuError::io("waiting for the MPTCP receiver to close", e)),
            }
        }
        s.flush().ok();
        Ok(d)
    });
    let received = server
        .join()
        .map_err(|p| EmuError::Panicked(crate::error::panic_message(&*p)))?;
    let (sent, (received, seconds)) = (sent?, received?);
    Ok(MptcpTransfer {
        intact: sent == received,
        goodput_bps: if seconds > 0.0 {
            received.bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        sent,
        received,
        seconds,
    })
}

fn accept(listener: &TcpListener, timeout: Duration) -> Result<TcpStream> {
    listener
        .set_nonblocking(true)
        .map_err(|e| EmuError::io("listener nonblocking", e))?;
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)
                    .and_then(|()| s.set_read_timeout(Some(timeout)))
                    .and_then(|()| s.set_write_timeout(Some(timeout)))
                    .map_err(|e| EmuError::io("receiver socket options", e))?;
                return Ok(s);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if start.elapsed() > timeout {
                    return Err(EmuError::io("MPTCP accept", ErrorKind::TimedOut.into()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(EmuError::io("MPTCP accept", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netstat_pairs_become_nstat_names() {
        let text = "TcpExt: SyncookiesSent TCPTimeouts\nTcpExt: 0 3\n\
                    MPTcpExt: MPCapableSYNRX MPJoinAckRx\nMPTcpExt: 1 2\n";
        let m = parse_netstat(text);
        assert_eq!(m["TcpExtTCPTimeouts"], 3);
        assert_eq!(m["MPTcpExtMPCapableSYNRX"], 1);
        assert_eq!(m["MPTcpExtMPJoinAckRx"], 2);
        let mut after = m.clone();
        *after.get_mut("MPTcpExtMPJoinAckRx").unwrap() += 5;
        let d = delta(&m, &after);
        assert_eq!(d.len(), 1);
        assert_eq!(d["MPTcpExtMPJoinAckRx"], 5);
        // Garbage lines are skipped, not a panic.
        assert!(parse_netstat("x\ny: 1\nz:\n").is_empty());
    }
}
