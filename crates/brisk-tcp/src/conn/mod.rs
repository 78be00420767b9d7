//! One TCP connection: a dispatcher over `state`, `send`, `recv`, `timer` and `recovery`.

use crate::event::TraceEvent;
use crate::stats::TcpInfo;

/// RFC 9293 §3.3.2 states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

pub struct Connection {
    _todo: (),
}

impl Connection {
    pub fn state(&self) -> State {
        todo!()
    }
    /// Queues bytes for sending; returns how many fit in the send buffer.
    pub fn write(&mut self, _data: &[u8]) -> usize {
        todo!()
    }
    /// Reads in-order bytes; returns how many were copied.
    pub fn read(&mut self, _buf: &mut [u8]) -> usize {
        todo!()
    }
    /// Bytes ready to read.
    pub fn readable(&self) -> usize {
        todo!()
    }
    /// Free space in the send buffer.
    pub fn send_capacity(&self) -> usize {
        todo!()
    }
    /// Graceful close of both directions (FIN after queued data).
    pub fn close(&mut self) {
        todo!()
    }
    /// Half-close: no more writes, FIN after queued data; reading continues.
    pub fn shutdown_write(&mut self) {
        todo!()
    }
    /// Abort: send RST, drop everything.
    pub fn abort(&mut self) {
        todo!()
    }
    pub fn info(&self) -> TcpInfo {
        todo!()
    }
    /// Turns recording of `TraceEvent`s on or off (bounded buffer, drained by `drain_trace`).
    pub fn set_trace(&mut self, _on: bool) {
        todo!()
    }
    pub fn drain_trace(&mut self, _out: &mut Vec<TraceEvent>) {
        todo!()
    }
}
