//! `[flow.tcp]` knobs for `stack = "linux"` flows, applied where Linux keeps them:
//!
//! | knob | Linux | scope |
//! |---|---|---|
//! | `ecn` | `net.ipv4.tcp_ecn` = 1 / 0 | sender namespace |
//! | `sack`, `timestamps`, `window_scaling` | `net.ipv4.tcp_sack`, `tcp_timestamps`, `tcp_window_scaling` | sender namespace |
//! | `rack` | `net.ipv4.tcp_recovery` = 1 / 0 | sender namespace |
//! | `tlp` | `net.ipv4.tcp_early_retrans` = 3 / 0 | sender namespace |
//! | `max_retries` | `net.ipv4.tcp_retries2` | sender namespace |
//! | `initial_cwnd` | route `initcwnd` | the flow's /32 route |
//! | `min_rto` | route `rto_min` | the flow's /32 route |
//! | `mss` | route `mtu lock` mss + 40 (the MSS Linux derives from it) | the flow's /32 route |
//! | `nagle` | `TCP_NODELAY` | the sender's socket |
//! | `send_buffer` | `SO_SNDBUF` | the sender's socket |
//! | `recv_buffer` | `SO_RCVBUF` | the receiver's listening socket (inherited) |
//! | `user_timeout` | `TCP_USER_TIMEOUT` | the sender's socket |
//! | `dscp` | `IP_TOS` = DSCP << 2 (Linux keeps the ECN bits its own) | the sender's socket |
//! | `[mptcp]` | `IPPROTO_MPTCP` sockets; `ip mptcp limits`, `ip mptcp endpoint`, `net.mptcp.checksum_enabled`, `allow_join_initial_addr_port`, `add_addr_timeout` | both sockets; both namespaces (endpoints: the senders') |
//! | `mptcp.recv_buffer` | `SO_RCVBUF` (as `recv_buffer`) | the receiver's listening socket |
//!
//! All Linux senders share one namespace, so a namespace-wide knob must agree across
//! the Linux flows that set it; [`LinuxKnobs::namespace_conflict`] names the first that
//! does not. Knobs Linux has no per-connection equivalent for (`delayed_ack`,
//! `max_ack_delay`, `initial_rto`, `time_wait`, `keepalive`) and brisk-only mechanisms
//! (`unordered`, `delay_correlation`) are refused by name before the run (see
//! `brisk run --real`), never silently ignored.

use std::os::fd::AsRawFd;

use brisk_time::Duration;

use crate::error::{EmuError, Result};
use crate::os::netns::Netns;
use crate::os::tun::in_lab_range;
use crate::tools::lab::TUN_NAME;

/// What a Linux flow asks of the kernel; `None` leaves Linux's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinuxKnobs {
    pub ecn: Option<bool>,
    pub sack: Option<bool>,
    pub timestamps: Option<bool>,
    pub window_scaling: Option<bool>,
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub max_retries: Option<u32>,
    pub initial_cwnd: Option<u32>,
    pub min_rto: Option<Duration>,
    pub mss: Option<u16>,
    pub nagle: Option<bool>,
    pub send_buffer: Option<u64>,
    pub recv_buffer: Option<u64>,
    pub user_timeout: Option<Duration>,
    /// DSCP of the data the sender sends (0 to 63; RC3's priority, or any class an
    /// emulated `prio` queue should see). Set after the handshake, so the SYN is
    /// DSCP 0; the receiver's ACKs stay DSCP 0.
    pub dscp: Option<u8>,
    /// `[flow.tcp.mptcp]`: the flow's sockets (sender and the receiver's listener)
    /// are `IPPROTO_MPTCP`, with these namespace settings (see
    /// [`crate::stack::mptcp_kernel::KernelMptcp`]). For a brisk flow only the
    /// receiver's side applies.
    pub mptcp: Option<crate::stack::mptcp_kernel::KernelMptcp>,
}

impl LinuxKnobs {
    /// The namespace-wide sysctls this flow sets: (knob, sysctl, value).
    fn sysctls(&self) -> Vec<(&'static str, &'static str, String)> {
        let mut v = Vec::new();
        let mut b = |knob, key, val: Option<bool>, on: &str| {
            if let Some(x) = val {
                v.push((knob, key, if x { on.to_string() } else { "0".into() }));
            }
        };
        b("ecn", "net.ipv4.tcp_ecn", self.ecn, "1");
        b("sack", "net.ipv4.tcp_sack", self.sack, "1");
        b(
            "timestamps",
            "net.ipv4.tcp_timestamps",
            self.timestamps,
            "1",
        );
        b(
            "window_scaling",
            "net.ipv4.tcp_window_scaling",
            self.window_scaling,
            "1",
        );
        b("rack", "net.ipv4.tcp_recovery", self.rack, "1");
        b("tlp", "net.ipv4.tcp_early_retrans", self.tlp, "3");
        if let Some(n) = self.max_retries {
            v.push(("max_retries", "net.ipv4.tcp_retries2", n.to_string()));
        }
        v
    }

    /// The first namespace-wide knob that two of `flows` (index, knobs) set
    /// differently, as an error naming both flows.
    pub fn namespace_conflict<'a>(
        flows: impl IntoIterator<Item = (usize, &'a LinuxKnobs)>,
    ) -> Option<String> {
        let mut seen: Vec<(&'static str, String, usize)> = Vec::new();
        for (i, k) in flows {
            for (knob, _, val) in k.sysctls() {
                match seen.iter().find(|s| s.0 == knob) {
                    Some((_, v, j)) if *v != val => {
                        return Some(format!(
                            "flow[{i}].tcp.{knob}: Linux keeps {knob} per namespace and all Linux senders share one, so it must match flow[{j}]'s"
                        ))
                    }
                    Some(_) => {}
                    None => seen.push((knob, val, i)),
                }
            }
        }
        None
    }

    /// Writes the namespace-wide sysctls into the senders' namespace.
    pub fn apply_namespace(&self, ns: &Netns) -> Result<()> {
        for (knob, key, val) in self.sysctls() {
            ns.sysctl(key, &val)
                .map_err(|e| EmuError::Config(format!("tcp.{knob}: sysctl {key}={val}: {e}")))?;
        }
        Ok(())
    }

    /// Adds the flow's /32 route to `dst` with its route metrics, if it has any.
    pub fn apply_route(&self, ns: &Netns, dst: std::net::Ipv4Addr) -> Result<()> {
        if self.initial_cwnd.is_none() && self.min_rto.is_none() && self.mss.is_none() {
            return Ok(());
        }
        if !in_lab_range(dst) {
            return Err(EmuError::Config(format!("{dst} is outside the lab range")));
        }
        let mut args: Vec<String> = ["route", "replace", &format!("{dst}/32"), "dev", TUN_NAME]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Some(c) = self.initial_cwnd {
            args.extend(["initcwnd".into(), c.to_string()]);
        }
        if let Some(r) = self.min_rto {
            args.extend(["rto_min".into(), format!("{}ms", r.as_millis().max(1))]);
        }
        if let Some(m) = self.mss {
            args.extend(["mtu".into(), "lock".into(), (u32::from(m) + 40).to_string()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        ns.ip(&argv)
    }

    /// Sets the sender socket's options (after connect: none of them needs the
    /// handshake).
    pub fn apply_sender(&self, s: &std::net::TcpStream) -> Result<()> {
        if let Some(n) = self.nagle {
            s.set_nodelay(!n)
                .map_err(|e| EmuError::io("tcp.nagle: TCP_NODELAY", e))?;
        }
        if let Some(b) = self.send_buffer {
            setsockopt_int(
                s,
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                b,
                "tcp.send_buffer: SO_SNDBUF",
            )?;
        }
        if let Some(d) = self.dscp {
            if d > 63 {
                return Err(EmuError::Config(format!(
                    "tcp.dscp = {d}: must be between 0 and 63"
                )));
            }
            setsockopt_int(
                s,
                libc::IPPROTO_IP,
                libc::IP_TOS,
                u64::from(d) << 2,
                "tcp.dscp: IP_TOS",
            )?;
        }
        if let Some(t) = self.user_timeout {
            setsockopt_int(
                s,
                libc::IPPROTO_TCP,
                libc::TCP_USER_TIMEOUT,
                t.as_millis() as u64,
                "tcp.user_timeout: TCP_USER_TIMEOUT",
            )?;
        }
        Ok(())
    }

    /// Sets the receive buffer on the receiver's listening socket, which accepted
    /// connections inherit (and which sizes the window scale of the SYN-ACK).
    pub fn apply_listener(&self, l: &std::net::TcpListener) -> Result<()> {
        if let Some(b) = self.recv_buffer {
            setsockopt_int(
                l,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                b,
                "tcp.recv_buffer: SO_RCVBUF",
            )?;
        }
        Ok(())
    }
}

fn setsockopt_int(
    s: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: u64,
    what: &str,
) -> Result<()> {
    let v = libc::c_int::try_from(value)
        .map_err(|_| EmuError::Config(format!("{what}: {value} is too large")))?;
    // SAFETY: setsockopt reads one c_int from a live local.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(EmuError::io(
            what.to_string(),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_knobs_must_agree_across_linux_flows() {
        let a = LinuxKnobs {
            ecn: Some(true),
            initial_cwnd: Some(4),
            ..LinuxKnobs::default()
        };
        let b = LinuxKnobs {
            ecn: Some(true),
            initial_cwnd: Some(40),
            ..LinuxKnobs::default()
        };
        assert_eq!(LinuxKnobs::namespace_conflict([(0, &a), (1, &b)]), None);
        let c = LinuxKnobs {
            ecn: Some(false),
            ..LinuxKnobs::default()
        };
        let e = LinuxKnobs::namespace_conflict([(0, &a), (2, &LinuxKnobs::default()), (3, &c)])
            .unwrap();
        assert!(
            e.starts_with("flow[3].tcp.ecn") && e.contains("flow[0]"),
            "{e}"
        );
    }
}
