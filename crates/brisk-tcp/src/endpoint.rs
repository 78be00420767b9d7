//! The endpoint: one local address, its listeners and a bounded connection table.
//! It parses incoming packets, drops and counts bad ones, demultiplexes by 4-tuple,
//! answers segments for no socket with RST (RFC 9293 §3.10.7.1), and emits wire bytes.

use crate::config::Config;
use crate::conn::Connection;
use crate::event::Event;
use crate::stats::EndpointStats;
use brisk_time::Instant;
use brisk_wire::Ecn;
use std::net::{IpAddr, SocketAddr};

/// Endpoint-wide settings.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// RFC 6528 secret key for ISN generation (inject a random one in production).
    pub isn_secret: [u8; 16],
    /// Seed for the endpoint's ChaCha RNG (ephemeral ports, jitter).
    pub rng_seed: u64,
    /// Connection-table limit; beyond it new connections are refused and counted.
    pub max_connections: usize,
    /// Defaults for connections accepted by listeners.
    pub default_config: Config,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            isn_secret: [0x5a; 16],
            rng_seed: 0,
            max_connections: 65_536,
            default_config: Config::default(),
        }
    }
}

/// A stable handle to a connection in the endpoint's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnHandle(pub u32);

/// Metadata of an emitted packet (the bytes are in the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub conn: Option<ConnHandle>,
    pub len: usize,
    pub ecn: Ecn,
    pub dscp: u8,
}

/// See the module doc.
pub struct Endpoint {
    _todo: (),
}

impl Endpoint {
    pub fn new(_local: IpAddr, _config: EndpointConfig) -> Self {
        todo!("tcp helper")
    }
    /// Starts listening on `port` with an accept backlog of `backlog` connections.
    pub fn listen(
        &mut self,
        _port: u16,
        _backlog: usize,
        _config: Config,
    ) -> Result<(), crate::event::ConnError> {
        todo!()
    }
    /// Active open. `local_port` 0 picks an ephemeral port.
    pub fn connect(
        &mut self,
        _now: Instant,
        _local_port: u16,
        _remote: SocketAddr,
        _config: Config,
    ) -> Result<ConnHandle, crate::event::ConnError> {
        todo!()
    }
    /// Takes the next established connection from `port`'s accept queue.
    pub fn accept(&mut self, _port: u16) -> Option<ConnHandle> {
        todo!()
    }
    /// One IP packet from the network.
    pub fn handle_packet(&mut self, _now: Instant, _packet: &[u8]) {
        todo!()
    }
    /// Writes the next packet to send into `out` (cleared first).
    #[must_use]
    pub fn poll_transmit(&mut self, _now: Instant, _out: &mut Vec<u8>) -> Option<Transmit> {
        todo!()
    }
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        todo!()
    }
    pub fn handle_timeout(&mut self, _now: Instant) {
        todo!()
    }
    #[must_use]
    pub fn poll_event(&mut self) -> Option<(ConnHandle, Event)> {
        todo!()
    }
    pub fn conn(&self, _h: ConnHandle) -> Option<&Connection> {
        todo!()
    }
    pub fn conn_mut(&mut self, _h: ConnHandle) -> Option<&mut Connection> {
        todo!()
    }
    pub fn stats(&self) -> &EndpointStats {
        todo!()
    }
}
