//! brisk-emu: the real-packet lab. Network namespaces with TUN devices ([`netns`],
//! [`tun`]), and a real-time link emulator ([`Emulator`]) that drives brisk-net's
//! sans-IO elements — the very `Link`/`Impairment` code the simulator runs — from
//! CLOCK_MONOTONIC, between two [`Side`]s. On top: a kernel↔emulator↔kernel baseline
//! ([`lab`], [`bulk`]) and the capacity benchmark ([`bench`]); brisk as a real
//! endpoint ([`stack`]: the sans-IO endpoint as an emulator side, [`socket`]: a
//! blocking `std::net`-like API) in a brisk↔emulator↔kernel lab ([`brisklab`]); and
//! the simulator's dumbbell over real packets ([`dumbbell`]: per-flow access delays and
//! one shared bottleneck, [`route`]; brisk and Linux senders behind one side, [`mux`])
//! running scenarios with per-flow stacks ([`realrun`], `brisk run --real`).
//!
//! Everything the lab creates is named `brisk-<pid>-<n>-...`, lives only in namespaces
//! it made itself, uses addresses in 198.18.0.0/15 (and, in a dual-stack lab,
//! 2001:db8::/32) only, and is removed by RAII guards
//! (also while a panic unwinds) or, on SIGINT/SIGTERM/SIGHUP, by [`cleanup`].
//! See docs/emulator.md.

pub mod emu;
pub mod error;
pub mod os;
pub mod realrun;
pub mod stack;
pub mod tools;

// The modules grouped by job above, at their old top-level paths too
// (`brisk_emu::netns`, `brisk_emu::path`, ...), which other crates use.
pub use emu::{dumbbell, emulator, inject, mux, path, route, side, threaded};
pub use os::{cleanup, clock, netns, poll, tun, wake};
pub use stack::{bulk, kernel_stream, serve, socket};
pub use tools::{bench, brisklab, ecn_audit, hist, http, lab, pcapread};

pub use bench::{
    baseline, bench_capacity, bench_capacity_opts, bench_capacity_with, BaselineReport,
};
pub use brisklab::{BriskLab, BRISK_ADDR, BRISK_ADDR6, KERNEL_ADDR, KERNEL_ADDR6};
pub use bulk::{run_bulk, Amount, BulkConfig, BulkReport};
pub use clock::{Clock, TimerFd};
pub use dumbbell::{Dumbbell, DumbbellConfig};
pub use emulator::{Delivery, DirReport, EmuReport, Emulator, EmulatorHandle, EmulatorOptions};
pub use error::{EmuError, Result};
pub use hist::{Histogram, LatencySummary};
pub use lab::TwoHosts;
pub use netns::{clean_leftovers, Lab, Netns};
pub use path::{EmuConfig, PathChain, PathSpec};
pub use side::Side;
pub use socket::{TcpListener, TcpStream};
pub use stack::kernel_stream::KernelStream;
pub use stack::{BriskStack, StackConfig, StackSide};
pub use threaded::{ThreadedOptions, ThreadedReport, ThreadedSide};
pub use tun::Tun;
