//! brisk's fuzz targets (issue 13 §3). Each target is a plain function of the input
//! bytes that panics when an invariant breaks, so the same code runs three ways:
//! under AFL++ (`src/bin/afl_*.rs`, built by `fuzz/campaign.sh`), as the smoke tests
//! of the workspace's test suite (`tests/smoke.rs`: the seed corpus, the saved
//! regressions and a few thousand deterministic random inputs per target), and on one
//! input by hand (`cargo run -p brisk-fuzz --bin seeds`, then any test).
//!
//! | target | drives | invariants |
//! | --- | --- | --- |
//! | [`wire`] | brisk-wire's parsers | no panic; every parsed packet re-emits and re-parses equal (bar the documented truncations); emit is a fixpoint; checksums we fix up verify |
//! | [`endpoint`] | a listening `Endpoint` fed packets from four peers (two of them MPTCP peers on a second, MPTCP listener: every subtype, valid — keys, tokens, HMACs, mappings — and mangled, `mp_peer`), with virtual time and application calls | no panic; every emitted packet parses and round-trips; bytes read (in order and unordered) equal what the peer sent at that sequence number; tables, queues and buffers within their limits |
//! | [`conn`] | one connection (plain or MPTCP) driven to a chosen state by a scripted prefix, then fed segments near its windows (with MPTCP options when MPTCP) | as `endpoint`, and the prefix reaches its state |
//! | [`minion`] | uCOBS framing, the record scanner (in order and out of order), msTCP's chunk header and demultiplexer, uTLS's record header | no panic; round trip; the scanner delivers exactly the records a reference split finds, each once; held bytes, streams and chunks within their limits |
//! | [`mptcp`] | brisk-wire's MPTCP option (kind 30) parser on one option's data, or on a whole option area through `ExtraOptions` and a packet; the DSS checksum; the MPTCP crypto | no panic; exact lengths; `parse(emit(x)) == x`; emit is a fixpoint; short buffers refused; a chunked DSS checksum equals the one-shot sum |
//! | [`mpctl`] | brisk-tcp's MPTCP control decisions: the MP_JOIN handshake on input options and forged HMACs, the ADD_ADDR gate over time, REMOVE_ADDR, MP_FASTCLOSE, MP_FAIL, MP_TCPRST, MP_PRIO, the token table against a map | no panic; only true HMACs verify (joins, ADD_ADDR); at most the burst plus one ADD_ADDR per 25 ms passes; REMOVE_ADDR closes only named subflows; the token table equals the map and stays within its limit |
//!
//! Inputs are read with [`Input`], which yields zeros once the bytes run out, so every
//! input is valid and a mutation changes a decision rather than ending the run.

mod input;
mod minion;
mod mp_peer;
mod mpctl;
mod mptcp;
mod tcp;
mod wire;

pub use input::Input;
pub use minion::minion;
pub use mpctl::mpctl;
pub use mptcp::mptcp;
pub use tcp::{conn, endpoint, endpoint_with};
pub use wire::wire;

/// A fuzz target: panics when an invariant breaks.
pub type Target = fn(&[u8]);

/// The targets by name, for the smoke tests and the seed writer.
pub const TARGETS: [(&str, Target); 6] = [
    ("wire", wire),
    ("endpoint", endpoint),
    ("conn", conn),
    ("minion", minion),
    ("mptcp", mptcp),
    ("mpctl", mpctl),
];

/// A starting corpus for `target`: inputs that reach deep states (valid packets,
/// complete handshakes, whole streams of records), built from brisk's own encoders so
/// no binary file needs to live in the repository.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "wire" => wire::seeds(),
        "endpoint" => tcp::endpoint_seeds(),
        "conn" => tcp::conn_seeds(),
        "minion" => minion::seeds(),
        "mptcp" => mptcp::seeds(),
        "mpctl" => mpctl::seeds(),
        _ => Vec::new(),
    }
}
