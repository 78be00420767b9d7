//! brisk-net: sans-IO network elements. A link, its queue, loss and impairment models
//! are written once against [`Element`], with absolute wake times, so the simulator's
//! event queue and the real-time emulator drive the very same code.
//!
//! Nothing here reads a clock or a global RNG: `now` comes in as an argument, and every
//! element that needs randomness owns a ChaCha stream seeded at construction.
//!
//! A path is built from two kinds of element: a [`Link`] (outage → loss → queue →
//! serialiser → propagation delay) and, optionally after it, an [`Impairment`] (extra
//! delay, jitter, duplication, corruption). Both keep [`Counters`] and an opt-in,
//! bounded [`NetEvent`] log that the owner drains. [`Chain`] joins two elements into
//! one. [`meter`] turns a link's event log into bottleneck measurements ([`metrics`]
//! holds the bounded sample sets and series it fills). [`LinkConfig`] is one link's
//! parameters and the one function that builds its elements, shared by the simulator
//! and the emulator.
//!
//! brisk-net knows no scenario file and reads no file: the words a link is written in
//! (and their units, defaults and range checks) are brisk-scenario's `link::LinkSpec`,
//! which converts itself into a [`LinkConfig`].

pub mod chain;
pub mod element;
pub mod error;
pub mod impair;
pub mod link;
pub mod link_config;
pub mod loss;
pub mod mahimahi;
pub mod meter;
pub mod metrics;
pub mod mmlog;
pub mod outage;
pub mod queue;
mod rate;
pub mod stats;
/// A driver for element tests (also brisk-scenario's link tests).
#[doc(hidden)]
pub mod testutil;
pub mod trace;

pub use chain::Chain;
pub use element::{Element, Packet};
pub use error::NetError;
pub use impair::{ImpairParams, Impairment};
pub use link::{Link, LinkParams};
pub use link_config::{LinkBuildError, LinkConfig, LinkElements, LinkSeeds, QueueConfig};
pub use loss::{Loss, LossModel};
pub use outage::Outage;
pub use queue::{AnyQueue, Dequeued, DropTail, Queue, QueueDrop, QueueLimit};
pub use stats::{Counters, DropReason, PktBytes};
pub use trace::{EventLog, NetEvent};
