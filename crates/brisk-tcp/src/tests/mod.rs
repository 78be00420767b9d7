//! Connection and endpoint behaviour, driven through real packets in a `Pair`.

mod acks;
mod cc_diag;
mod cc_host;
mod close;
mod early_retransmit;
mod ecn;
mod fidelity;
mod handshake;
pub(crate) use crate::testkit as harness;
mod hostile;
mod idle;
mod ipv6;
mod listener;
mod loss;
mod overlap;
mod prio_send;
mod rc3;
mod rdb;
mod records;
mod renege;
mod restart;
mod send_mem;
mod syncookie;
mod timers;
mod transfer;
mod undo;
mod unordered;
