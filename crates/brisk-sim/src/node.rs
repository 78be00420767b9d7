//! The simulator's node type: a host or a brisk-net element, as a closed enum so the
//! per-packet path has no vtable. A link may carry a [`LinkMeter`] (brisk-net's) that
//! drains the link's event log after every call and turns it into bottleneck metrics.

use std::fs::File;
use std::io::BufWriter;

use brisk_net::mmlog::MahimahiLog;
use brisk_net::{Element, Impairment, Link, NetEvent, Packet};
use brisk_time::Instant;

use crate::engine::{Ctx, Node};
use crate::host::Host;

// The meter is brisk-net's so the real-time emulator meters its links with the same
// code; these re-exports keep the simulator's old paths working.
pub use brisk_net::meter::{DropRecord, LinkMeter, QueueRow, MAX_DROP_RECORDS};

/// Event-log capacity between drains (drained after every call, so this is ample).
const LOG_CAPACITY: usize = 1 << 16;

/// A Mahimahi-format log of a link, written as the run goes.
pub type LinkLog = MahimahiLog<BufWriter<File>>;

/// A link with optional metering and an optional Mahimahi-format log.
pub struct LinkNode {
    pub link: Link,
    pub meter: Option<LinkMeter>,
    pub log: Option<LinkLog>,
    events: Vec<NetEvent>,
}

impl LinkNode {
    pub fn new(link: Link) -> Self {
        LinkNode {
            link,
            meter: None,
            log: None,
            events: Vec::new(),
        }
    }
    pub fn metered(mut link: Link, meter: LinkMeter) -> Self {
        link.enable_event_log(LOG_CAPACITY);
        LinkNode {
            meter: Some(meter),
            ..LinkNode::new(link)
        }
    }
    /// Also logs the link in Mahimahi's format.
    pub fn set_log(&mut self, log: LinkLog) {
        self.link.enable_event_log(LOG_CAPACITY);
        self.log = Some(log);
    }
    fn absorb(&mut self) {
        if self.meter.is_none() && self.log.is_none() {
            return;
        }
        self.link.drain_events(&mut self.events);
        if let Some(m) = &mut self.meter {
            m.absorb_events(&self.events, self.link.events_lost());
        }
        if let Some(l) = &mut self.log {
            l.absorb(&self.events);
        }
        self.events.clear();
    }
}

pub enum SimNode {
    Host(Box<Host>),
    Link(Box<LinkNode>),
    Impair(Box<Impairment>),
}

impl SimNode {
    pub fn as_host(&self) -> Option<&Host> {
        match self {
            SimNode::Host(h) => Some(h),
            _ => None,
        }
    }
    pub fn as_host_mut(&mut self) -> Option<&mut Host> {
        match self {
            SimNode::Host(h) => Some(h),
            _ => None,
        }
    }
    pub fn as_link(&self) -> Option<&LinkNode> {
        match self {
            SimNode::Link(l) => Some(l),
            _ => None,
        }
    }
    pub fn as_link_mut(&mut self) -> Option<&mut LinkNode> {
        match self {
            SimNode::Link(l) => Some(l),
            _ => None,
        }
    }
    pub fn as_impair(&self) -> Option<&Impairment> {
        match self {
            SimNode::Impair(i) => Some(i),
            _ => None,
        }
    }
}

impl Node for SimNode {
    fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_packet(now, pkt, ctx),
            SimNode::Link(l) => {
                l.link.handle_packet(now, pkt);
                l.absorb();
            }
            SimNode::Impair(i) => i.handle_packet(now, pkt),
        }
    }

    fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
        match self {
            SimNode::Host(h) => h.poll_packet(now, ctx),
            SimNode::Link(l) => {
                let p = l.link.poll_packet(now);
                l.absorb();
                p
            }
            SimNode::Impair(i) => i.poll_packet(now),
        }
    }

    fn handle_timeout(&mut self, now: Instant, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_timeout(now, ctx),
            // Elements do their timed work inside `poll_packet`.
            SimNode::Link(_) | SimNode::Impair(_) => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            SimNode::Host(h) => h.poll_timeout(),
            SimNode::Link(l) => l.link.poll_timeout(),
            SimNode::Impair(i) => i.poll_timeout(),
        }
    }
}
