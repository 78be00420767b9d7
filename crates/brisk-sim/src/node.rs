//! The simulator's node type: a host or a brisk-net element, as a closed enum so the
//! per-packet path has no vtable. A link may carry a [`LinkMeter`] (brisk-net's) that
//! drains the link's event log after every call and turns it into bottleneck metrics.

use brisk_net::{Element, Impairment, Link, Packet};
use brisk_time::Instant;

use crate::engine::{Ctx, Node};
use crate::host::Host;

// The meter is brisk-net's so the real-time emulator meters its links with the same
// code; these re-exports keep the simulator's old paths working.
pub use brisk_net::meter::{DropRecord, LinkMeter, QueueRow, MAX_DROP_RECORDS};

/// Event-log capacity between drains (drained after every call, so this is ample).
const LOG_CAPACITY: usize = 1 << 16;

/// A link with optional metering.
pub struct LinkNode {
    pub link: Link,
    pub meter: Option<LinkMeter>,
}

impl LinkNode {
    pub fn new(link: Link) -> Self {
        LinkNode { link, meter: None }
    }
    pub fn metered(mut link: Link, meter: LinkMeter) -> Self {
        link.enable_event_log(LOG_CAPACITY);
        LinkNode {
            link,
            meter: Some(meter),
        }
    }
    fn absorb(&mut self) {
        if let Some(m) = &mut self.meter {
            m.absorb(&mut self.link);
        }
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
