//! The two-host lab: namespaces `A` and `B`, each with one TUN device holding a /32
//! address and a /32 route to the other host through it. Nothing connects the two
//! TUNs but the emulator, which reads A's device and writes B's and vice versa:
//!
//! ```text
//!  netns brisk-<pid>-<n>-a            (emulator thread)            netns brisk-<pid>-<n>-b
//!  198.18.0.1 ── brisk-tun ◀══ fd ══▶ [fwd/rev PathChain] ◀══ fd ══▶ brisk-tun ── 198.18.0.2
//! ```
//! IPv6 is switched off in both namespaces so no router solicitations or MLD reports
//! wander through the path. Where a lab needs IPv6 (the brisk lab's dual stack,
//! [`host`] with addresses), it is switched on quietly instead: no router
//! advertisements accepted and no solicitations sent, no link-local address
//! (`addr_gen_mode = 1`), no duplicate address detection; a TUN device is `NOARP`, so
//! the kernel joins no solicited-node group either, and the only IPv6 packets on the
//! path are the lab's own.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::Result;
use crate::os::netns::{Lab, Netns};
use crate::os::tun::{Tun, DEFAULT_MTU};

/// Host A's address (the bulk sender in the baselines).
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Host B's address.
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Host A's IPv6 address in a dual-stack two-host lab (2001:db8::/32, RFC 3849; the
/// brisk lab's `BRISK_ADDR6`).
pub const ADDR_A6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 1);
/// Host B's IPv6 address in a dual-stack two-host lab.
pub const ADDR_B6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 2);
/// Name of the TUN device inside each namespace (names are per namespace).
pub const TUN_NAME: &str = "brisk-tun";

/// Two namespaces joined only through their TUN devices. Keep it alive while the
/// emulator runs; dropping it deletes both namespaces.
#[derive(Debug)]
pub struct TwoHosts {
    lab: Lab,
}

impl TwoHosts {
    /// Builds the lab; the two TUN devices (A's, B's) are returned for the emulator.
    pub fn new(mtu: u32) -> Result<(TwoHosts, Tun, Tun)> {
        Self::build(mtu, false)
    }

    /// As [`TwoHosts::new`], dual-stack: [`ADDR_A6`] and [`ADDR_B6`] as well, IPv6
    /// switched on quietly (module docs).
    pub fn dual_stack(mtu: u32) -> Result<(TwoHosts, Tun, Tun)> {
        Self::build(mtu, true)
    }

    fn build(mtu: u32, ipv6: bool) -> Result<(TwoHosts, Tun, Tun)> {
        let mut lab = Lab::new()?;
        let a = lab.add_netns("a")?;
        let b = lab.add_netns("b")?;
        let v6 = |l, p| ipv6.then_some((l, p));
        let tun_a = host(lab.netns(a), ADDR_A, ADDR_B, v6(ADDR_A6, ADDR_B6), mtu)?;
        let tun_b = host(lab.netns(b), ADDR_B, ADDR_A, v6(ADDR_B6, ADDR_A6), mtu)?;
        Ok((TwoHosts { lab }, tun_a, tun_b))
    }

    /// With the default MTU (1500).
    pub fn with_default_mtu() -> Result<(TwoHosts, Tun, Tun)> {
        Self::new(DEFAULT_MTU)
    }

    pub fn ns_a(&self) -> &Netns {
        self.lab.netns(0)
    }

    pub fn ns_b(&self) -> &Netns {
        self.lab.netns(1)
    }

    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// The same two hosts and addresses joined by a veth pair instead of TUN devices
    /// and the emulator: the kernels' own path, the peer `bench emu` measures beside
    /// the emulator. IPv6 is off; the veth pair goes with the namespaces.
    pub fn veth(mtu: u32) -> Result<TwoHosts> {
        let mut lab = Lab::new()?;
        let a = lab.add_netns("a")?;
        let b = lab.add_netns("b")?;
        let (na, nb) = (lab.netns(a), lab.netns(b));
        for ns in [na, nb] {
            disable_ipv6(ns);
        }
        let mtu = mtu.to_string();
        na.ip(&[
            "link",
            "add",
            "veth-a",
            "mtu",
            &mtu,
            "type",
            "veth",
            "peer",
            "name",
            "veth-b",
            "mtu",
            &mtu,
            "netns",
            nb.name(),
        ])?;
        for (ns, dev, local, peer) in [
            (na, "veth-a", ADDR_A, ADDR_B),
            (nb, "veth-b", ADDR_B, ADDR_A),
        ] {
            ns.ip(&["link", "set", "lo", "up"])?;
            ns.ip(&[
                "addr",
                "add",
                &format!("{local}/32"),
                "peer",
                &format!("{peer}/32"),
                "dev",
                dev,
            ])?;
            ns.ip(&["link", "set", dev, "up"])?;
        }
        Ok(TwoHosts { lab })
    }

    /// Deletes both namespaces now, reporting failures.
    pub fn teardown(self) -> Result<()> {
        self.lab.teardown()
    }
}

/// Sysctls that keep an IPv6-enabled namespace silent (module doc), set on `default`
/// before the device exists so that it inherits them, and on `all`.
const QUIET_IPV6: [(&str, &str); 5] = [
    ("accept_ra", "0"),
    ("router_solicitations", "0"),
    ("addr_gen_mode", "1"),
    ("accept_dad", "0"),
    ("disable_ipv6", "0"),
];

/// Switches IPv6 off in `ns`, so no router solicitations or MLD reports wander
/// through the path. Kernels without IPv6 have no such sysctl; that is as good as
/// disabled.
pub(crate) fn disable_ipv6(ns: &Netns) {
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
}

/// The TUN device of a lab host: `local` with a route to `peer`, and with `v6 =
/// Some((local6, peer6))` the same over IPv6 (quiet, module doc); without, IPv6 is
/// off in the namespace.
pub(crate) fn host(
    ns: &Netns,
    local: Ipv4Addr,
    peer: Ipv4Addr,
    v6: Option<(Ipv6Addr, Ipv6Addr)>,
    mtu: u32,
) -> Result<Tun> {
    match v6 {
        None => disable_ipv6(ns),
        Some(_) => {
            for (key, value) in QUIET_IPV6 {
                // The device inherits `default`; `all` is belt and braces (older
                // kernels lack some `all` keys).
                ns.sysctl(&format!("net.ipv6.conf.default.{key}"), value)?;
                let _ = ns.sysctl(&format!("net.ipv6.conf.all.{key}"), value);
            }
        }
    }
    let tun = Tun::open(ns, TUN_NAME)?;
    tun.configure(ns, local, peer, mtu)?;
    if let Some((local6, peer6)) = v6 {
        tun.configure6(ns, local6, peer6)?;
    }
    Ok(tun)
}
