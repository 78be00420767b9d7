//! The real-time link emulator: the loop ([`emulator`]) moving packets between two
//! [`side`]s through brisk-net's elements ([`path`]), the dumbbell of real runs
//! ([`dumbbell`], [`route`], [`mux`]), and crafted-packet injection ([`inject`]).

pub mod ack_tap;
pub mod dumbbell;
pub mod emulator;
pub mod health;
pub mod inject;
pub mod mptcp_strip;
pub mod mux;
pub mod path;
pub mod relay;
pub mod route;
pub mod side;
pub mod split;
pub mod threaded;
