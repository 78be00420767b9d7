//! IPv4 (RFC 791) and IPv6 (RFC 8200) headers, with DSCP and ECN (RFC 2474, RFC 3168).

use std::net::IpAddr;

pub const IPPROTO_TCP: u8 = 6;

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    pub fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ipv4Repr {
    pub src: std::net::Ipv4Addr,
    pub dst: std::net::Ipv4Addr,
    pub protocol: u8,
    /// 6-bit DSCP (RFC 2474).
    pub dscp: u8,
    pub ecn: Ecn,
    pub ttl: u8,
    pub ident: u16,
    pub dont_frag: bool,
    /// Length of what follows the IP header.
    pub payload_len: usize,
}

/// Either IP version; what the TCP pseudo-header and the demultiplexer need.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IpRepr {
    V4(Ipv4Repr),
}

impl IpRepr {
    pub fn src(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.src),
        }
    }
    pub fn dst(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.dst),
        }
    }
    pub fn ecn(&self) -> Ecn {
        match self {
            IpRepr::V4(r) => r.ecn,
        }
    }
    pub fn dscp(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.dscp,
        }
    }
}
