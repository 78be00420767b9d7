//! The brisk↔emulator↔kernel lab: one namespace holding a Linux TCP host behind a TUN
//! device, and brisk in this process as the emulator's other side.
//!
//! ```text
//!  this process                                  emulator thread                     netns brisk-<pid>-<n>-k
//!  app threads ── BriskStack ══ StackSide ◀══▶ fwd: Link [→ Impairment] ═▶ ◀═ fd ═▶ brisk-tun ── 198.18.0.2/32
//!  (198.18.0.1, no kernel interface owns it)    rev: Link [→ Impairment] ◀═          route 198.18.0.1/32 dev brisk-tun
//! ```
//! With `StackConfig::local6` set, the lab is dual-stack: brisk has [`BRISK_ADDR6`]
//! as well, the kernel [`KERNEL_ADDR6`] with a /128 route to brisk's, both in
//! 2001:db8::/32 and only inside the namespace (IPv6 switched on quietly there, see
//! `tools::lab`).
//!
//! brisk's address is one that no kernel owns, so no kernel answers brisk's segments
//! with RSTs; the kernel reaches it by its /32 route through the TUN device. The
//! forward direction (`bottleneck`) is brisk → kernel, `reverse` kernel → brisk. With
//! an empty [`EmuConfig`] this is simply "brisk on a TUN device", the mode the tools
//! and the socket API use; with a path it is the emulated testbed.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use brisk_time::Duration;

use crate::emu::emulator::{EmuReport, Emulator, EmulatorHandle, EmulatorOptions};
use crate::emu::path::EmuConfig;
use crate::error::Result;
use crate::os::netns::{Lab, Netns};
use crate::os::tun::DEFAULT_MTU;
use crate::stack::{BriskStack, StackConfig};
use crate::tools::lab::{host, ADDR_A, ADDR_B, TUN_NAME};

/// brisk's address in the lab.
pub const BRISK_ADDR: Ipv4Addr = ADDR_A;
/// The Linux host's address in the lab.
pub const KERNEL_ADDR: Ipv4Addr = ADDR_B;
/// brisk's IPv6 address in a dual-stack lab (2001:db8::/32, RFC 3849).
pub const BRISK_ADDR6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 1);
/// The Linux host's IPv6 address in a dual-stack lab.
pub const KERNEL_ADDR6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 2);

/// See the module docs. Dropping it stops the emulator and deletes the namespace.
pub struct BriskLab {
    // Field order is drop order: the loop stops before the namespace goes.
    emu: Option<EmulatorHandle>,
    stack: BriskStack,
    lab: Lab,
}

impl BriskLab {
    /// Builds the namespace and TUN, creates the stack (its `local` is replaced by
    /// [`BRISK_ADDR`], and a `local6` by [`BRISK_ADDR6`]) and starts the emulator between them, bounded by `limit`.
    pub fn new(
        path: &EmuConfig,
        stack: StackConfig,
        mut opts: EmulatorOptions,
        limit: Option<Duration>,
    ) -> Result<BriskLab> {
        let mut lab = Lab::new()?;
        let k = lab.add_netns("k")?;
        let v6 = stack.local6.map(|_| (KERNEL_ADDR6, BRISK_ADDR6));
        let tun = host(lab.netns(k), KERNEL_ADDR, BRISK_ADDR, v6, DEFAULT_MTU)?;
        let (stack, side) = BriskStack::new(StackConfig {
            local: BRISK_ADDR,
            local6: stack.local6.map(|_| BRISK_ADDR6),
            ..stack
        })?;
        opts.clock = Some(stack.clock());
        let emu = Emulator::new(side, tun, path, opts)?.spawn(limit)?;
        Ok(BriskLab {
            emu: Some(emu),
            stack,
            lab,
        })
    }

    /// A plain lab: no impairments, a 60 s limit, pcaps at the given paths.
    pub fn plain(pcap_brisk: Option<PathBuf>, pcap_kernel: Option<PathBuf>) -> Result<BriskLab> {
        let opts = EmulatorOptions {
            pcap_a: pcap_brisk,
            pcap_b: pcap_kernel,
            ..EmulatorOptions::default()
        };
        Self::new(
            &EmuConfig::default(),
            StackConfig::new(BRISK_ADDR),
            opts,
            Some(Duration::from_secs(60)),
        )
    }

    /// The Linux host's namespace (run sockets or programs in it).
    pub fn kernel(&self) -> &Netns {
        self.lab.netns(0)
    }

    pub fn stack(&self) -> &BriskStack {
        &self.stack
    }

    /// The TUN device's name inside the kernel's namespace.
    pub fn device(&self) -> &'static str {
        TUN_NAME
    }

    /// Stops the emulator, returns its report and deletes the namespace.
    pub fn stop(mut self) -> Result<EmuReport> {
        let report = match self.emu.take() {
            Some(h) => h.stop(),
            None => Err(crate::error::EmuError::Config(
                "emulator already stopped".into(),
            )),
        };
        let lab = std::mem::take(&mut self.lab);
        lab.teardown()?;
        report
    }
}
