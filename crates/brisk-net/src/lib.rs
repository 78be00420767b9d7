//! brisk-net: sans-IO network elements. A link, its queue, loss and impairment models
//! are written once against [`Element`], with absolute wake times, so the simulator's
//! event queue and the real-time emulator drive the very same code.
//!
//! Nothing here reads a clock or a global RNG: `now` comes in as an argument, and every
//! element that needs randomness owns a ChaCha stream seeded at construction.

pub mod element;
pub use element::{Element, Packet};
