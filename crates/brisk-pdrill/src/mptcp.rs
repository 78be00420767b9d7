//! MPTCP options (TCP option kind 30, RFC 8684 v1) as packetdrill scripts write them.
//!
//! The spelling is the MPTCP fork of packetdrill's (multipath-tcp/packetdrill,
//! `gtests/net/mptcp/`, its `lexer.l`/`parser.y`), so its scripts read the same here:
//!
//! ```text
//! mpcapable v1 flags[flag_h] nokey                     MP_CAPABLE on a SYN
//! mpcapable v1 flags[flag_h] key[skey]                 ... on a SYN-ACK (binds skey)
//! mpcapable v1 flags[flag_h] key[ckey=2, skey]         ... on the third ACK
//! mpcapable v1 flags[flag_h] key[ckey, skey] mpcdatalen 100 [cksum=N|auto]
//! mp_join_syn [backup=0|1] [address_id=N] token=N|sha256_32(var)|auto [rand=N]
//! mp_join_syn_ack [backup=0|1] [address_id=N] sender_hmac=N|auto [rand=N]
//! mp_join_ack sender_hmac=auto|0x<40 hex digits>
//! dss [dack4=N|dack8=N|dack=N] [dsn4=N|dsn8=N|dsn=N] [ssn=N] [dll=N] [nocs|cksum=N|auto] [fin]
//! add_address [address_id=N] addr[198.51.100.2] [port=N] hmac=N|auto | addr_echo
//! remove_address address_id=[1,2]
//! mp_prio backup=0|1
//! mp_fail dsn8=N
//! mp_fastclose [key=N|var|auto]
//! mp_reset N [flags[flag_t]]                           MP_TCPRST, reason N
//! ```
//!
//! Values are numbers, `*` (any value: outbound only; a bare `dack4` is the same),
//! `auto` (the runner computes it from the keys and nonces: tokens, HMACs, the key
//! MP_FASTCLOSE carries, a checksum), a variable (`skey`: bound the first time an
//! outbound packet shows it, its value after), `name=N` (binds and uses N), or
//! `sha256_32(var)` (the token of the key in `var`). Data sequence numbers and data
//! ACKs are relative to the sending side's IDSN, as the fork writes them (the first
//! data byte is 1); `ssn` is relative on the wire already (RFC 8684 §3.3.1).
//!
//! Departures from the fork: `dack=N`/`dsn=N` accept either width on outbound
//! packets (brisk chooses 4 or 8 bytes as Linux does); `cksum=auto` and a checksum
//! after `mpcdatalen` are additions; `addr[...]` takes a literal address (or the
//! fork's `addr[name=inet_addr("a.b.c.d")]`), not the fork's address variables;
//! a field the option cannot carry (`ssn` or `dll` without a DSN, a v0 `mp_prio
//! address_id`) is a parse error where the fork ignores it.

use std::fmt;
use std::net::IpAddr;

/// An address as the MPTCP fork names it: `caddrN` is the client's Nth address,
/// `saddrN` the server's (which side is brisk depends on who connected: the runner
/// resolves them), or a literal. A bare `caddr`/`saddr` is N = 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrRef {
    Ip(IpAddr),
    Client(u8),
    Server(u8),
}

impl fmt::Display for AddrRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddrRef::Ip(a) => write!(f, "{a}"),
            AddrRef::Client(n) => write!(f, "caddr{n}"),
            AddrRef::Server(n) => write!(f, "saddr{n}"),
        }
    }
}

impl AddrRef {
    /// `caddrN`, `saddrN` (N 0-9, or none for 0) or a literal IP address.
    pub fn parse(s: &str) -> Option<AddrRef> {
        let num = |p: &str| {
            let n = s.strip_prefix(p)?;
            if n.is_empty() {
                return Some(0);
            }
            n.parse::<u8>().ok().filter(|n| *n <= 9)
        };
        if let Some(n) = num("caddr") {
            return Some(AddrRef::Client(n));
        }
        if let Some(n) = num("saddr") {
            return Some(AddrRef::Server(n));
        }
        s.parse().ok().map(AddrRef::Ip)
    }
}

/// A value in an MPTCP option, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Num(u64),
    /// `*`: any value (outbound packets only).
    Any,
    /// `auto`: the runner computes it.
    Auto,
    /// A variable: bound on first sight in an outbound packet, its value after.
    Var(String),
    /// `name=N`: binds `name` to N and uses N.
    Set(String, u64),
    /// `sha256_32(name)`: the token (RFC 8684 §3.1) of the key in `name`.
    Token(String),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Num(n) if *n > 0xffff => write!(f, "{n:#x}"),
            Val::Num(n) => write!(f, "{n}"),
            Val::Any => write!(f, "*"),
            Val::Auto => write!(f, "auto"),
            Val::Var(v) => write!(f, "{v}"),
            Val::Set(v, n) if *n > 0xffff => write!(f, "{v}={n:#x}"),
            Val::Set(v, n) => write!(f, "{v}={n}"),
            Val::Token(v) => write!(f, "sha256_32({v})"),
        }
    }
}

/// A DSS data ACK or DSN: its width (4 or 8 bytes; `None`: either, outbound only)
/// and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seq {
    pub width: Option<u8>,
    pub val: Val,
}

/// A checksum field: not written (outbound: not checked; inbound: none sent),
/// `nocs` (must be absent), or a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cksum {
    Unwritten,
    No,
    Val(Val),
}

/// MP_JOIN's third-ACK HMAC (160 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hmac160 {
    Any,
    Auto,
    Bytes([u8; 20]),
}

/// MP_CAPABLE as written: any version and flags (so that a script can send the
/// forms brisk must refuse), 0 to 2 keys, the data-level length of data on the ACK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capable {
    pub version: u8,
    pub flags: u8,
    pub keys: Vec<Val>,
    pub data_len: Option<u16>,
    pub cksum: Cksum,
}

/// DSS as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DssOpt {
    pub dack: Option<Seq>,
    pub dsn: Option<Seq>,
    /// Relative subflow sequence number of the mapping.
    pub ssn: Option<Val>,
    /// Data-level length of the mapping.
    pub dll: Option<Val>,
    pub cksum: Cksum,
    pub fin: bool,
}

/// One MPTCP option in a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MpOpt {
    Capable(Capable),
    JoinSyn {
        backup: bool,
        address_id: Option<u8>,
        token: Val,
        nonce: Val,
    },
    JoinSynAck {
        backup: bool,
        address_id: Option<u8>,
        hmac: Val,
        nonce: Val,
    },
    JoinAck {
        hmac: Hmac160,
    },
    Dss(DssOpt),
    AddAddr {
        address_id: Option<u8>,
        addr: AddrRef,
        port: Option<u16>,
        /// `None`: the echo (`addr_echo`), which carries no HMAC.
        hmac: Option<Val>,
    },
    RemoveAddr(Vec<u8>),
    /// `address_id` is RFC 6824's (v0) form, which a script may send to check that
    /// it is refused; RFC 8684 has none.
    Prio {
        backup: bool,
        address_id: Option<u8>,
    },
    Fail {
        dsn: Val,
    },
    Fastclose {
        key: Val,
    },
    TcpRst {
        reason: u8,
        transient: bool,
    },
}

// MP_CAPABLE flag bits A..H (RFC 8684 §3.1), most significant first.
const CAP_FLAGS: [(&str, u8); 8] = [
    ("flag_a", 0x80),
    ("flag_b", 0x40),
    ("flag_c", 0x20),
    ("flag_d", 0x10),
    ("flag_e", 0x08),
    ("flag_f", 0x04),
    ("flag_g", 0x02),
    ("flag_h", 0x01),
];

impl MpOpt {
    /// The RFC's name of the subtype, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            MpOpt::Capable(_) => "MP_CAPABLE",
            MpOpt::JoinSyn { .. } | MpOpt::JoinSynAck { .. } | MpOpt::JoinAck { .. } => "MP_JOIN",
            MpOpt::Dss(_) => "DSS",
            MpOpt::AddAddr { .. } => "ADD_ADDR",
            MpOpt::RemoveAddr(_) => "REMOVE_ADDR",
            MpOpt::Prio { .. } => "MP_PRIO",
            MpOpt::Fail { .. } => "MP_FAIL",
            MpOpt::Fastclose { .. } => "MP_FASTCLOSE",
            MpOpt::TcpRst { .. } => "MP_TCPRST",
        }
    }

    /// Whether a value is `*` somewhere (not allowed on inbound packets).
    pub fn has_wildcard(&self) -> bool {
        let any = |v: &Val| *v == Val::Any;
        let seq = |s: &Option<Seq>| s.as_ref().is_some_and(|s| s.width.is_none() || any(&s.val));
        let ck = |c: &Cksum| matches!(c, Cksum::Val(Val::Any));
        match self {
            MpOpt::Capable(c) => c.keys.iter().any(any) || ck(&c.cksum),
            // A nonce not written (`rand=`) is the runner's on an inbound packet.
            MpOpt::JoinSyn { token, .. } => any(token),
            MpOpt::JoinSynAck { hmac, .. } => any(hmac),
            MpOpt::JoinAck { hmac } => *hmac == Hmac160::Any,
            MpOpt::Dss(d) => {
                seq(&d.dack)
                    || seq(&d.dsn)
                    || d.ssn.as_ref().is_some_and(any)
                    || d.dll.as_ref().is_some_and(any)
                    || ck(&d.cksum)
            }
            MpOpt::AddAddr { hmac, .. } => hmac.as_ref().is_some_and(any),
            MpOpt::Fail { dsn } => any(dsn),
            MpOpt::Fastclose { key } => any(key),
            MpOpt::RemoveAddr(_) | MpOpt::Prio { .. } | MpOpt::TcpRst { .. } => false,
        }
    }
}

fn fmt_seq(f: &mut fmt::Formatter<'_>, name: &str, s: &Seq) -> fmt::Result {
    match (s.width, &s.val) {
        (Some(w), Val::Any) => write!(f, " {name}{w}"),
        (Some(w), v) => write!(f, " {name}{w}={v}"),
        (None, v) => write!(f, " {name}={v}"),
    }
}

fn fmt_cksum(f: &mut fmt::Formatter<'_>, c: &Cksum) -> fmt::Result {
    match c {
        Cksum::Unwritten => Ok(()),
        Cksum::No => write!(f, " nocs"),
        Cksum::Val(v) => write!(f, " cksum={v}"),
    }
}

impl fmt::Display for MpOpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MpOpt::Capable(c) => {
                write!(f, "mpcapable v{} flags", c.version)?;
                let named: Vec<&str> = CAP_FLAGS
                    .iter()
                    .filter(|(_, b)| c.flags & b != 0)
                    .map(|(n, _)| *n)
                    .collect();
                if c.flags == 0 {
                    write!(f, " 0x0")?;
                } else {
                    write!(f, "[{}]", named.join(", "))?;
                }
                match c.keys.as_slice() {
                    [] => write!(f, " nokey")?,
                    [a] => write!(f, " key[{a}]")?,
                    [a, b, ..] => write!(f, " key[{a}, {b}]")?,
                }
                if let Some(d) = c.data_len {
                    write!(f, " mpcdatalen {d}")?;
                }
                fmt_cksum(f, &c.cksum)
            }
            MpOpt::JoinSyn {
                backup,
                address_id,
                token,
                nonce,
            } => {
                write!(f, "mp_join_syn backup={}", u8::from(*backup))?;
                if let Some(a) = address_id {
                    write!(f, " address_id={a}")?;
                }
                write!(f, " token={token}")?;
                if *nonce != Val::Any {
                    write!(f, " rand={nonce}")?;
                }
                Ok(())
            }
            MpOpt::JoinSynAck {
                backup,
                address_id,
                hmac,
                nonce,
            } => {
                write!(f, "mp_join_syn_ack backup={}", u8::from(*backup))?;
                if let Some(a) = address_id {
                    write!(f, " address_id={a}")?;
                }
                write!(f, " sender_hmac={hmac}")?;
                if *nonce != Val::Any {
                    write!(f, " rand={nonce}")?;
                }
                Ok(())
            }
            MpOpt::JoinAck { hmac } => {
                write!(f, "mp_join_ack sender_hmac=")?;
                match hmac {
                    Hmac160::Any => write!(f, "*"),
                    Hmac160::Auto => write!(f, "auto"),
                    Hmac160::Bytes(b) => {
                        write!(f, "0x")?;
                        for x in b {
                            write!(f, "{x:02x}")?;
                        }
                        Ok(())
                    }
                }
            }
            MpOpt::Dss(d) => {
                write!(f, "dss")?;
                if let Some(s) = &d.dack {
                    fmt_seq(f, "dack", s)?;
                }
                if let Some(s) = &d.dsn {
                    fmt_seq(f, "dsn", s)?;
                }
                if let Some(v) = &d.ssn {
                    write!(f, " ssn={v}")?;
                }
                if let Some(v) = &d.dll {
                    write!(f, " dll={v}")?;
                }
                fmt_cksum(f, &d.cksum)?;
                if d.fin {
                    write!(f, " fin")?;
                }
                Ok(())
            }
            MpOpt::AddAddr {
                address_id,
                addr,
                port,
                hmac,
            } => {
                write!(f, "add_address")?;
                if let Some(a) = address_id {
                    write!(f, " address_id={a}")?;
                }
                write!(f, " addr[{addr}]")?;
                if let Some(p) = port {
                    write!(f, " port={p}")?;
                }
                match hmac {
                    None => write!(f, " addr_echo"),
                    Some(h) => write!(f, " hmac={h}"),
                }
            }
            MpOpt::RemoveAddr(ids) => {
                let ids: Vec<String> = ids.iter().map(u8::to_string).collect();
                write!(f, "remove_address address_id=[{}]", ids.join(","))
            }
            MpOpt::Prio { backup, address_id } => {
                write!(f, "mp_prio backup={}", u8::from(*backup))?;
                if let Some(a) = address_id {
                    write!(f, " address_id={a}")?;
                }
                Ok(())
            }
            MpOpt::Fail { dsn } => write!(f, "mp_fail dsn8={dsn}"),
            MpOpt::Fastclose { key } => write!(f, "mp_fastclose key={key}"),
            MpOpt::TcpRst { reason, transient } => {
                write!(f, "mp_reset {reason}")?;
                if *transient {
                    write!(f, " flags[flag_t]")?;
                }
                Ok(())
            }
        }
    }
}

/// An MP_CAPABLE flag's bit by its fork name (`flag_a` .. `flag_h`).
pub fn cap_flag_bit(name: &str) -> Option<u8> {
    CAP_FLAGS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// The keywords that start an MPTCP option in an option list.
pub fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "mpcapable"
            | "mp_join_syn"
            | "mp_join_syn_ack"
            | "mp_join_ack"
            | "dss"
            | "add_address"
            | "remove_address"
            | "mp_prio"
            | "mp_fail"
            | "mp_fastclose"
            | "mp_reset"
            | "mp_tcprst"
    )
}
