//! The runner's MPTCP side: building inbound MPTCP options from script values,
//! showing the endpoint's options in script space, and matching them against a
//! script's expectation while binding variables (the fork's `mp_state` variables).
//!
//! The runner learns the two keys from the MP_CAPABLE exchange: the first key of the
//! first keyed outbound MP_CAPABLE is brisk's, the first key of the first keyed
//! inbound one is the script's (later ones do not change them). From them come the tokens (`token=auto`), the IDSNs that script DSNs and
//! data ACKs are relative to, and the HMACs (`sender_hmac=auto`, `hmac=auto`); the
//! MP_JOIN nonces are the script's `rand=` (or [`SCRIPT_NONCE`]) and the one brisk's
//! MP_JOIN shows.

use crate::mptcp::{AddrRef, Capable, Cksum, DssOpt, Hmac160, MpOpt, Seq, Val};
use brisk_wire::mptcp::{
    checksum::dss_checksum, crypto, AddAddr, DataSeq, Dss, Mapping, MpCapableForm, MpJoin,
    MpTcpRst, MptcpOption, RemoveAddr, ResetReason,
};
use std::collections::HashMap;

/// The script's MP_JOIN nonce when its line gives no `rand=`.
pub const SCRIPT_NONCE: u32 = 0x5eed_0001;

/// What the runner knows of a connection's MPTCP state.
#[derive(Default)]
pub(crate) struct MpState {
    pub vars: HashMap<String, u64>,
    /// brisk's key and the script's key, once seen.
    pub local_key: Option<u64>,
    pub remote_key: Option<u64>,
    /// The latest MP_JOIN nonces: the script's and brisk's.
    pub script_nonce: u32,
    pub local_nonce: Option<u32>,
    /// brisk connected: `caddrN` names its addresses, `saddrN` the script's.
    pub brisk_client: bool,
}

fn width_val(s: &Seq, v: u64) -> DataSeq {
    if s.width == Some(4) {
        DataSeq::Bits32(v as u32)
    } else {
        DataSeq::Bits64(v)
    }
}

impl MpState {
    pub fn new() -> Self {
        MpState {
            script_nonce: SCRIPT_NONCE,
            ..MpState::default()
        }
    }

    fn local_idsn(&self) -> u64 {
        self.local_key.map_or(0, crypto::idsn)
    }
    fn remote_idsn(&self) -> u64 {
        self.remote_key.map_or(0, crypto::idsn)
    }

    fn need(&self, what: &str, v: Option<u64>) -> Result<u64, String> {
        v.ok_or_else(|| {
            format!("{what}: auto needs the MPTCP keys, and the MP_CAPABLE exchange has not shown them yet")
        })
    }

    /// A script value for an inbound packet.
    fn resolve(&mut self, field: &str, v: &Val, auto: Option<u64>) -> Result<u64, String> {
        match v {
            Val::Num(n) => Ok(*n),
            Val::Set(name, n) => {
                self.vars.insert(name.clone(), *n);
                Ok(*n)
            }
            Val::Var(name) => self.vars.get(name).copied().ok_or_else(|| {
                format!("{field}: variable {name} is not bound yet (an outbound packet binds it, or write {name}=N)")
            }),
            Val::Token(name) => match self.vars.get(name) {
                Some(k) => Ok(u64::from(crypto::token(*k))),
                None => Err(format!("{field}: variable {name} in sha256_32({name}) is not bound yet")),
            },
            Val::Auto => self.need(field, auto),
            Val::Any => Err(format!("{field}: * is only allowed on outbound packets")),
        }
    }

    /// Matches an actual value (in script space) against the script's; binds
    /// variables on first sight.
    fn check(
        &mut self,
        field: &str,
        want: &Val,
        got: u64,
        auto: Option<u64>,
    ) -> Result<(), String> {
        let expected = match want {
            Val::Any => return Ok(()),
            Val::Num(n) => *n,
            Val::Set(name, n) => {
                self.vars.insert(name.clone(), *n);
                *n
            }
            Val::Var(name) => match self.vars.get(name) {
                Some(v) => *v,
                None => {
                    self.vars.insert(name.clone(), got);
                    return Ok(());
                }
            },
            Val::Token(name) => match self.vars.get(name) {
                Some(k) => u64::from(crypto::token(*k)),
                None => {
                    return Err(format!(
                        "{field}: variable {name} in sha256_32({name}) is not bound yet"
                    ))
                }
            },
            Val::Auto => self.need(field, auto)?,
        };
        if expected != got {
            return Err(format!(
                "{field}: expected {} actual {}",
                Val::Num(expected),
                Val::Num(got)
            ));
        }
        Ok(())
    }

    /// The script's MP_JOIN nonce: `rand=` as written, else [`SCRIPT_NONCE`].
    fn script_nonce_of(&mut self, field: &str, v: &Val) -> Result<u32, String> {
        match v {
            Val::Any | Val::Auto => Ok(SCRIPT_NONCE),
            v => Ok(self.resolve(field, v, None)? as u32),
        }
    }

    /// The bytes of an inbound MPTCP option (kind, length, data).
    pub fn inbound_bytes(&mut self, o: &MpOpt) -> Result<Vec<u8>, String> {
        let opt = match o {
            MpOpt::Capable(c) => return self.capable_bytes(c),
            MpOpt::JoinSyn {
                backup,
                address_id,
                token,
                nonce,
            } => {
                let token = self.resolve(
                    "mp_join_syn token",
                    token,
                    self.local_key.map(|k| u64::from(crypto::token(k))),
                )? as u32;
                let nonce = self.script_nonce_of("mp_join_syn rand", nonce)?;
                self.script_nonce = nonce;
                MptcpOption::MpJoin(MpJoin::Syn {
                    backup: *backup,
                    address_id: address_id.unwrap_or(0),
                    token,
                    nonce,
                })
            }
            MpOpt::JoinSynAck {
                backup,
                address_id,
                hmac,
                nonce,
            } => {
                let nonce = self.script_nonce_of("mp_join_syn_ack rand", nonce)?;
                self.script_nonce = nonce;
                let auto = self.join_synack_auto(false);
                let truncated_hmac = self.resolve("mp_join_syn_ack sender_hmac", hmac, auto)?;
                MptcpOption::MpJoin(MpJoin::SynAck {
                    backup: *backup,
                    address_id: address_id.unwrap_or(0),
                    truncated_hmac,
                    nonce,
                })
            }
            MpOpt::JoinAck { hmac } => {
                let hmac = match hmac {
                    Hmac160::Bytes(b) => *b,
                    Hmac160::Auto => self
                        .join_ack_auto(false)
                        .ok_or_else(|| "mp_join_ack sender_hmac: auto needs both keys and brisk's MP_JOIN nonce, not seen yet".to_string())?,
                    Hmac160::Any => return Err("mp_join_ack sender_hmac: * is only allowed on outbound packets".into()),
                };
                MptcpOption::MpJoin(MpJoin::Ack { hmac })
            }
            MpOpt::Dss(d) => MptcpOption::Dss(self.dss_inbound(d)?),
            MpOpt::AddAddr {
                address_id,
                addr,
                port,
                hmac,
            } => {
                let id = address_id.unwrap_or(0);
                let addr = &crate::run::resolve_addr(*addr, self.brisk_client);
                let hmac = match hmac {
                    None => None,
                    Some(h) => {
                        let auto = match (self.remote_key, self.local_key) {
                            (Some(s), Some(r)) => {
                                Some(crypto::add_addr_hmac(s, r, id, *addr, *port))
                            }
                            _ => None,
                        };
                        Some(self.resolve("add_address hmac", h, auto)?)
                    }
                };
                MptcpOption::AddAddr(AddAddr {
                    address_id: id,
                    addr: *addr,
                    port: *port,
                    hmac,
                })
            }
            MpOpt::RemoveAddr(ids) => MptcpOption::RemoveAddr(
                RemoveAddr::new(ids).map_err(|e| format!("remove_address: {e}"))?,
            ),
            MpOpt::Prio {
                backup,
                address_id: Some(id),
            } => {
                // RFC 6824's MP_PRIO with an address id (length 4), which brisk-wire
                // does not build: a script sends it to check that it is ignored.
                return Ok(vec![
                    brisk_wire::mptcp::KIND,
                    4,
                    0x50 | u8::from(*backup),
                    *id,
                ]);
            }
            MpOpt::Prio {
                backup,
                address_id: None,
            } => MptcpOption::MpPrio { backup: *backup },
            MpOpt::Fail { dsn } => {
                let rel = self.resolve("mp_fail dsn8", dsn, None)?;
                MptcpOption::MpFail {
                    dsn: self.remote_idsn().wrapping_add(rel),
                }
            }
            MpOpt::Fastclose { key } => MptcpOption::MpFastclose {
                receiver_key: self.resolve("mp_fastclose key", key, self.local_key)?,
            },
            MpOpt::TcpRst { reason, transient } => MptcpOption::MpTcpRst(MpTcpRst {
                transient: *transient,
                reason: ResetReason::from_code(*reason),
            }),
        };
        let mut buf = [0u8; 2 + brisk_wire::mptcp::MAX_DATA_LEN];
        let n = opt
            .emit(&mut buf)
            .map_err(|e| format!("{}: {e}", o.name()))?;
        Ok(buf[..n].to_vec())
    }

    /// MP_CAPABLE written by hand: a script may send versions and flags brisk-wire
    /// refuses to build (to test that brisk falls back).
    fn capable_bytes(&mut self, c: &Capable) -> Result<Vec<u8>, String> {
        let mut keys = Vec::new();
        for (i, k) in c.keys.iter().enumerate() {
            let field = if i == 0 {
                "mpcapable sender key"
            } else {
                "mpcapable receiver key"
            };
            // auto: the sender is the script, the receiver brisk.
            let auto = if i == 0 {
                self.remote_key
            } else {
                self.local_key
            };
            keys.push(self.resolve(field, k, auto)?);
        }
        // The script's key is the first it sends (as the fork's `mptcp_gen_key`): its
        // scripts repeat the keys in either order on the data MP_CAPABLE.
        if self.remote_key.is_none() {
            self.remote_key = keys.first().copied();
        }
        let mut b = vec![brisk_wire::mptcp::KIND, 0, c.version, c.flags];
        for k in &keys {
            b.extend_from_slice(&k.to_be_bytes());
        }
        if let Some(dl) = c.data_len {
            b.extend_from_slice(&dl.to_be_bytes());
            if let Cksum::Val(v) = &c.cksum {
                // The first data byte: DSN IDSN+1, subflow sequence 1.
                let dsn = self.remote_idsn().wrapping_add(1);
                let auto = dss_checksum(dsn, 1, dl, &vec![0u8; usize::from(dl)]);
                let ck = self.resolve("mpcapable cksum", v, Some(u64::from(auto)))? as u16;
                b.extend_from_slice(&ck.to_be_bytes());
            }
        }
        b[1] = b.len() as u8;
        Ok(b)
    }

    fn dss_inbound(&mut self, d: &DssOpt) -> Result<Dss, String> {
        let data_ack = match &d.dack {
            None => None,
            Some(s) => {
                let rel = self.resolve("dss dack", &s.val, None)?;
                Some(width_val(s, self.local_idsn().wrapping_add(rel)))
            }
        };
        let mapping = match &d.dsn {
            None => None,
            Some(s) => {
                let rel = self.resolve("dss dsn", &s.val, None)?;
                let dsn64 = self.remote_idsn().wrapping_add(rel);
                let ssn = match &d.ssn {
                    Some(v) => self.resolve("dss ssn", v, None)? as u32,
                    None => 0,
                };
                let dll = match &d.dll {
                    Some(v) => self.resolve("dss dll", v, None)? as u16,
                    None => 0,
                };
                let checksum = match &d.cksum {
                    Cksum::Val(v) => {
                        let auto = mapping_checksum(dsn64, ssn, dll, d.fin);
                        Some(self.resolve("dss cksum", v, Some(u64::from(auto)))? as u16)
                    }
                    _ => None,
                };
                Some(Mapping {
                    dsn: width_val(s, dsn64),
                    subflow_seq: ssn,
                    data_len: dll,
                    checksum,
                })
            }
        };
        Ok(Dss {
            data_ack,
            mapping,
            data_fin: d.fin,
        })
    }

    /// The truncated HMAC of an MP_JOIN SYN-ACK; `outbound`: brisk sends it.
    fn join_synack_auto(&self, outbound: bool) -> Option<u64> {
        let (l, r, ln) = (self.local_key?, self.remote_key?, self.local_nonce?);
        let sn = self.script_nonce;
        Some(if outbound {
            crypto::join_synack_hmac(l, r, ln, sn)
        } else {
            crypto::join_synack_hmac(r, l, sn, ln)
        })
    }

    /// The 160-bit HMAC of an MP_JOIN third ACK; `outbound`: brisk sends it.
    fn join_ack_auto(&self, outbound: bool) -> Option<[u8; 20]> {
        let (l, r, ln) = (self.local_key?, self.remote_key?, self.local_nonce?);
        let sn = self.script_nonce;
        Some(if outbound {
            crypto::join_ack_hmac(l, r, ln, sn)
        } else {
            crypto::join_ack_hmac(r, l, sn, ln)
        })
    }

    /// Learns brisk's key and MP_JOIN nonce from an option it sent (every packet
    /// it sends, whether a script line matches it or not, as the local ISN).
    pub fn learn(&mut self, o: &MptcpOption) {
        match *o {
            MptcpOption::MpCapable(c) => match c.form {
                MpCapableForm::Syn => {}
                MpCapableForm::SynAck { sender_key }
                | MpCapableForm::Ack { sender_key, .. }
                | MpCapableForm::AckData { sender_key, .. } => {
                    self.local_key.get_or_insert(sender_key);
                }
            },
            MptcpOption::MpJoin(MpJoin::Syn { nonce, .. } | MpJoin::SynAck { nonce, .. }) => {
                self.local_nonce = Some(nonce)
            }
            _ => {}
        }
    }

    /// An option the endpoint sent, in script space: DSNs relative to brisk's IDSN,
    /// data ACKs to the script's.
    pub fn to_script(&self, o: &MptcpOption) -> MpOpt {
        let rel = |s: DataSeq, base: u64| match s {
            DataSeq::Bits32(v) => Seq {
                width: Some(4),
                val: Val::Num(u64::from(v.wrapping_sub(base as u32))),
            },
            DataSeq::Bits64(v) => Seq {
                width: Some(8),
                val: Val::Num(v.wrapping_sub(base)),
            },
        };
        match *o {
            MptcpOption::MpCapable(c) => {
                let flags = 0x01
                    | if c.checksum_required { 0x80 } else { 0 }
                    | if c.deny_join_id0 { 0x20 } else { 0 };
                let (keys, data_len, cksum) = match c.form {
                    MpCapableForm::Syn => (vec![], None, Cksum::Unwritten),
                    MpCapableForm::SynAck { sender_key } => {
                        (vec![sender_key], None, Cksum::Unwritten)
                    }
                    MpCapableForm::Ack {
                        sender_key,
                        receiver_key,
                    } => (vec![sender_key, receiver_key], None, Cksum::Unwritten),
                    MpCapableForm::AckData {
                        sender_key,
                        receiver_key,
                        data_len,
                        checksum,
                    } => (
                        vec![sender_key, receiver_key],
                        Some(data_len),
                        checksum.map_or(Cksum::No, |c| Cksum::Val(Val::Num(u64::from(c)))),
                    ),
                };
                MpOpt::Capable(Capable {
                    version: 1,
                    flags,
                    keys: keys.into_iter().map(Val::Num).collect(),
                    data_len,
                    cksum,
                })
            }
            MptcpOption::MpJoin(MpJoin::Syn {
                backup,
                address_id,
                token,
                nonce,
            }) => MpOpt::JoinSyn {
                backup,
                address_id: Some(address_id),
                token: Val::Num(u64::from(token)),
                nonce: Val::Num(u64::from(nonce)),
            },
            MptcpOption::MpJoin(MpJoin::SynAck {
                backup,
                address_id,
                truncated_hmac,
                nonce,
            }) => MpOpt::JoinSynAck {
                backup,
                address_id: Some(address_id),
                hmac: Val::Num(truncated_hmac),
                nonce: Val::Num(u64::from(nonce)),
            },
            MptcpOption::MpJoin(MpJoin::Ack { hmac }) => MpOpt::JoinAck {
                hmac: Hmac160::Bytes(hmac),
            },
            MptcpOption::Dss(d) => MpOpt::Dss(DssOpt {
                dack: d.data_ack.map(|a| rel(a, self.remote_idsn())),
                dsn: d.mapping.map(|m| rel(m.dsn, self.local_idsn())),
                ssn: d.mapping.map(|m| Val::Num(u64::from(m.subflow_seq))),
                dll: d.mapping.map(|m| Val::Num(u64::from(m.data_len))),
                cksum: match d.mapping {
                    Some(Mapping {
                        checksum: Some(c), ..
                    }) => Cksum::Val(Val::Num(u64::from(c))),
                    _ => Cksum::No,
                },
                fin: d.data_fin,
            }),
            MptcpOption::AddAddr(a) => MpOpt::AddAddr {
                address_id: Some(a.address_id),
                addr: AddrRef::Ip(a.addr),
                port: a.port,
                hmac: a.hmac.map(Val::Num),
            },
            MptcpOption::RemoveAddr(r) => MpOpt::RemoveAddr(r.ids().to_vec()),
            MptcpOption::MpPrio { backup } => MpOpt::Prio {
                backup,
                address_id: None,
            },
            MptcpOption::MpFail { dsn } => MpOpt::Fail {
                dsn: Val::Num(dsn.wrapping_sub(self.local_idsn())),
            },
            MptcpOption::MpFastclose { receiver_key } => MpOpt::Fastclose {
                key: Val::Num(receiver_key),
            },
            MptcpOption::MpTcpRst(r) => MpOpt::TcpRst {
                reason: r.reason.code(),
                transient: r.transient,
            },
        }
    }

    /// Matches the endpoint's option (from [`to_script`](Self::to_script)) against
    /// the script's; the error names the field.
    pub fn matches(&mut self, want: &MpOpt, got: &MpOpt) -> Result<(), String> {
        let num = |v: &Val| match v {
            Val::Num(n) => *n,
            _ => 0,
        };
        match (want, got) {
            (MpOpt::Capable(w), MpOpt::Capable(g)) => {
                if (w.version, w.flags) != (g.version, g.flags) {
                    return Err(format!(
                        "mpcapable: expected version {} flags {:#04x} actual version {} flags {:#04x}",
                        w.version, w.flags, g.version, g.flags
                    ));
                }
                if w.keys.len() != g.keys.len() {
                    return Err(format!(
                        "mpcapable: expected {} key(s) actual {}",
                        w.keys.len(),
                        g.keys.len()
                    ));
                }
                // Sender first (brisk), then receiver (the script).
                for (i, (wk, gk)) in w.keys.iter().zip(&g.keys).enumerate() {
                    let (field, auto) = if i == 0 {
                        ("mpcapable sender key", self.local_key)
                    } else {
                        ("mpcapable receiver key", self.remote_key)
                    };
                    self.check(field, wk, num(gk), auto)?;
                }
                if w.data_len.is_some() && w.data_len != g.data_len
                    || w.data_len.is_none() && g.data_len.is_some()
                {
                    return Err(format!(
                        "mpcapable mpcdatalen: expected {:?} actual {:?}",
                        w.data_len, g.data_len
                    ));
                }
                self.check_cksum("mpcapable", &w.cksum, &g.cksum, None)
            }
            (
                MpOpt::JoinSyn {
                    backup,
                    address_id,
                    token,
                    nonce,
                },
                MpOpt::JoinSyn {
                    backup: gb,
                    address_id: gid,
                    token: gt,
                    nonce: gn,
                },
            ) => {
                self.check_flag("mp_join_syn backup", *backup, *gb)?;
                self.check_id("mp_join_syn address_id", *address_id, *gid)?;
                let auto = self.remote_key.map(|k| u64::from(crypto::token(k)));
                self.check("mp_join_syn token", token, num(gt), auto)?;
                self.check("mp_join_syn rand", nonce, num(gn), None)
            }
            (
                MpOpt::JoinSynAck {
                    backup,
                    address_id,
                    hmac,
                    nonce,
                },
                MpOpt::JoinSynAck {
                    backup: gb,
                    address_id: gid,
                    hmac: gh,
                    nonce: gn,
                },
            ) => {
                self.check_flag("mp_join_syn_ack backup", *backup, *gb)?;
                self.check_id("mp_join_syn_ack address_id", *address_id, *gid)?;
                self.check("mp_join_syn_ack rand", nonce, num(gn), None)?;
                let auto = self.join_synack_auto(true);
                self.check("mp_join_syn_ack sender_hmac", hmac, num(gh), auto)
            }
            (
                MpOpt::JoinAck { hmac },
                MpOpt::JoinAck {
                    hmac: Hmac160::Bytes(g),
                },
            ) => {
                let want = match hmac {
                    Hmac160::Any => return Ok(()),
                    Hmac160::Bytes(b) => *b,
                    Hmac160::Auto => self.join_ack_auto(true).ok_or_else(|| {
                        "mp_join_ack sender_hmac: auto needs both keys and both nonces, not seen yet".to_string()
                    })?,
                };
                if want != *g {
                    return Err(format!(
                        "mp_join_ack sender_hmac: expected {} actual {}",
                        MpOpt::JoinAck {
                            hmac: Hmac160::Bytes(want)
                        },
                        got
                    ));
                }
                Ok(())
            }
            (MpOpt::Dss(w), MpOpt::Dss(g)) => self.match_dss(w, g),
            (
                MpOpt::AddAddr {
                    address_id,
                    addr,
                    port,
                    hmac,
                },
                MpOpt::AddAddr {
                    address_id: gid,
                    addr: ga,
                    port: gp,
                    hmac: gh,
                },
            ) => {
                self.check_id("add_address address_id", *address_id, *gid)?;
                let (addr, ga) = (
                    crate::run::resolve_addr(*addr, self.brisk_client),
                    crate::run::resolve_addr(*ga, self.brisk_client),
                );
                if addr != ga || port != gp {
                    return Err(format!("add_address: expected address {addr} port {port:?} actual {ga} port {gp:?}"));
                }
                match (hmac, gh) {
                    (None, None) => Ok(()),
                    (Some(w), Some(g)) => {
                        let id = gid.unwrap_or(0);
                        let auto = match (self.local_key, self.remote_key) {
                            (Some(s), Some(r)) => Some(crypto::add_addr_hmac(s, r, id, ga, *gp)),
                            _ => None,
                        };
                        self.check("add_address hmac", w, num(g), auto)
                    }
                    (None, Some(_)) => Err("add_address: expected an echo (addr_echo), actual an announcement with an HMAC".into()),
                    (Some(_), None) => Err("add_address: expected an announcement with an HMAC, actual an echo".into()),
                }
            }
            (MpOpt::RemoveAddr(w), MpOpt::RemoveAddr(g)) if w == g => Ok(()),
            (
                MpOpt::Prio {
                    backup,
                    address_id: None,
                },
                MpOpt::Prio { backup: g, .. },
            ) => self.check_flag("mp_prio backup", *backup, *g),
            (MpOpt::Fail { dsn }, MpOpt::Fail { dsn: g }) => {
                self.check("mp_fail dsn8", dsn, num(g), None)
            }
            (MpOpt::Fastclose { key }, MpOpt::Fastclose { key: g }) => {
                // brisk closes fast: it carries the script's key.
                self.check("mp_fastclose key", key, num(g), self.remote_key)
            }
            (MpOpt::TcpRst { .. }, MpOpt::TcpRst { .. }) if want == got => Ok(()),
            _ => Err(format!("expected {want} actual {got}")),
        }
    }

    fn check_flag(&self, field: &str, want: bool, got: bool) -> Result<(), String> {
        if want != got {
            return Err(format!(
                "{field}: expected {} actual {}",
                u8::from(want),
                u8::from(got)
            ));
        }
        Ok(())
    }

    fn check_id(&self, field: &str, want: Option<u8>, got: Option<u8>) -> Result<(), String> {
        match want {
            Some(w) if Some(w) != got => {
                Err(format!("{field}: expected {w} actual {}", got.unwrap_or(0)))
            }
            _ => Ok(()),
        }
    }

    fn check_cksum(
        &mut self,
        what: &str,
        want: &Cksum,
        got: &Cksum,
        auto: Option<u64>,
    ) -> Result<(), String> {
        match (want, got) {
            (Cksum::Unwritten, _) => Ok(()),
            (Cksum::No, Cksum::No | Cksum::Unwritten) => Ok(()),
            (Cksum::No, Cksum::Val(v)) => Err(format!(
                "{what}: expected no checksum (nocs) actual cksum={v}"
            )),
            (Cksum::Val(_), Cksum::No | Cksum::Unwritten) => {
                Err(format!("{what}: expected a checksum actual none (nocs)"))
            }
            (Cksum::Val(w), Cksum::Val(Val::Num(g))) => {
                self.check(&format!("{what} cksum"), w, *g, auto)
            }
            (Cksum::Val(_), Cksum::Val(_)) => Ok(()),
        }
    }

    fn match_dss(&mut self, w: &DssOpt, g: &DssOpt) -> Result<(), String> {
        for (name, ws, gs) in [("dack", &w.dack, &g.dack), ("dsn", &w.dsn, &g.dsn)] {
            match (ws, gs) {
                (None, None) => {}
                (Some(_), None) => return Err(format!("dss: expected a {name} actual none")),
                (None, Some(s)) => {
                    return Err(format!(
                        "dss: expected no {name} actual {name}{}={}",
                        s.width.unwrap_or(8),
                        s.val
                    ))
                }
                (Some(ws), Some(gs)) => {
                    if let Some(wd) = ws.width {
                        if Some(wd) != gs.width {
                            return Err(format!(
                                "dss {name}: expected {wd} bytes ({name}{wd}) actual {} ({name}{})",
                                gs.width.unwrap_or(8),
                                gs.width.unwrap_or(8)
                            ));
                        }
                    }
                    let got = match gs.val {
                        Val::Num(n) => n,
                        _ => 0,
                    };
                    // A 4-byte actual value against a written full value: compare the
                    // low 32 bits (the width is the sender's choice unless written).
                    let want_val = match (&ws.val, gs.width) {
                        (Val::Num(n), Some(4)) if ws.width.is_none() => Val::Num(n & 0xffff_ffff),
                        (v, _) => v.clone(),
                    };
                    self.check(&format!("dss {name}"), &want_val, got, None)?;
                }
            }
        }
        let num = |v: &Option<Val>| match v {
            Some(Val::Num(n)) => *n,
            _ => 0,
        };
        if let Some(ws) = &w.ssn {
            self.check("dss ssn", ws, num(&g.ssn), None)?;
        }
        if let Some(wd) = &w.dll {
            self.check("dss dll", wd, num(&g.dll), None)?;
        }
        let auto = match (&g.dsn, g.dll.as_ref()) {
            (Some(s), Some(Val::Num(dll))) => {
                let rel = match s.val {
                    Val::Num(n) => n,
                    _ => 0,
                };
                let dsn64 = self.local_idsn().wrapping_add(rel);
                Some(u64::from(mapping_checksum(
                    dsn64,
                    num(&g.ssn) as u32,
                    *dll as u16,
                    g.fin,
                )))
            }
            _ => None,
        };
        self.check_cksum("dss", &w.cksum, &g.cksum, auto)?;
        if w.fin != g.fin {
            return Err(format!(
                "dss: expected {} actual {}",
                if w.fin {
                    "DATA_FIN (fin)"
                } else {
                    "no DATA_FIN"
                },
                if g.fin {
                    "DATA_FIN (fin)"
                } else {
                    "no DATA_FIN"
                }
            ));
        }
        Ok(())
    }
}

/// The DSS checksum of a mapping of `dll` bytes of the runner's payload (zeros; a
/// DATA_FIN takes one of the bytes but has no payload byte).
fn mapping_checksum(dsn64: u64, ssn: u32, dll: u16, fin: bool) -> u16 {
    let data = usize::from(dll).saturating_sub(usize::from(fin));
    dss_checksum(dsn64, ssn, dll, &vec![0u8; data])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{parse, EventKind, Options, TcpOpt};

    fn opt(text: &str) -> MpOpt {
        let s = parse(&format!("0 > . 1:1(0) ack 1 <{text}>")).unwrap();
        let EventKind::Outbound(p) = &s.events[0].kind else {
            panic!()
        };
        let Options::List(l) = &p.options else {
            panic!()
        };
        match &l[0] {
            TcpOpt::Mptcp(o) => o.clone(),
            o => panic!("{o:?}"),
        }
    }

    /// Script → wire bytes → brisk-wire's parser → script: the same option, for every
    /// subtype and form with literal values (no keys known: DSNs are absolute).
    #[test]
    fn literal_options_round_trip_through_the_wire() {
        for text in [
            "mpcapable v1 flags[flag_h] nokey",
            "mpcapable v1 flags[flag_a, flag_h] key[0x1122334455667788]",
            "mpcapable v1 flags[flag_c, flag_h] key[5, 0x99aabbccddeeff00]",
            "mpcapable v1 flags[flag_h] key[5, 6] mpcdatalen 1000 nocs",
            "mpcapable v1 flags[flag_a, flag_h] key[5, 6] mpcdatalen 100 cksum=4660",
            "mp_join_syn backup=1 address_id=3 token=0xdeadbeef rand=7",
            "mp_join_syn_ack backup=0 address_id=0 sender_hmac=0x1234567890abcdef rand=9",
            "mp_join_ack sender_hmac=0x00112233445566778899aabbccddeeff00112233",
            "dss dack4=1 nocs",
            "dss dack8=0x100000001 nocs",
            "dss dack8=1 dsn8=1 ssn=1 dll=1000 nocs",
            "dss dack4=5 dsn4=3 ssn=3 dll=2 cksum=4660",
            "dss dsn8=1 ssn=0 dll=1 nocs fin",
            "dss dack4=1 nocs fin",
            "add_address address_id=1 addr[198.51.100.2] hmac=0x1122334455667788",
            "add_address address_id=1 addr[198.51.100.2] addr_echo",
            "add_address address_id=2 addr[2001:db8::2] port=8080 hmac=0x1122334455667788",
            "add_address address_id=0 addr[198.51.100.2] port=80 addr_echo",
            "remove_address address_id=[1,2,3,4,5,6,7,8]",
            "mp_prio backup=1",
            "mp_fail dsn8=1001",
            "mp_fastclose key=42",
            "mp_reset 1",
            "mp_reset 6 flags[flag_t]",
        ] {
            let o = opt(text);
            let mut st = MpState::new();
            let bytes = st
                .inbound_bytes(&o)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(usize::from(bytes[1]), bytes.len(), "{text}");
            let wire = MptcpOption::parse(&bytes[2..]).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = MpState::new().to_script(&wire);
            assert_eq!(back.to_string(), text, "{text}");
        }
    }

    /// Keys learned from the exchange make `auto` values and relative DSNs: brisk's
    /// key from its SYN-ACK, the script's from its third ACK.
    #[test]
    fn keys_give_tokens_idsns_and_hmacs() {
        let mut st = MpState::new();
        let lk = 0x0102_0304_0506_0708;
        let b = MpState::new()
            .inbound_bytes(&opt("mpcapable v1 flags[flag_h] key[0x0102030405060708]"))
            .unwrap();
        st.learn(&MptcpOption::parse(&b[2..]).unwrap());
        assert_eq!(st.local_key, Some(lk));
        let mut st2 = MpState::new();
        st2.local_key = Some(lk);
        // The third ACK binds ckey and uses skey (bound by brisk's SYN-ACK).
        st2.vars.insert("skey".into(), lk);
        let b = st2
            .inbound_bytes(&opt("mpcapable v1 flags[flag_h] key[ckey=2, skey]"))
            .unwrap();
        assert_eq!(&b[4..12], &2u64.to_be_bytes());
        assert_eq!(&b[12..20], &lk.to_be_bytes());
        assert_eq!(st2.remote_key, Some(2));
        // A join SYN's token=auto is brisk's token.
        let b = st2
            .inbound_bytes(&opt("mp_join_syn backup=0 address_id=1 token=auto"))
            .unwrap();
        assert_eq!(&b[4..8], &crypto::token(lk).to_be_bytes());
        let b2 = st2
            .inbound_bytes(&opt(
                "mp_join_syn backup=0 address_id=1 token=sha256_32(skey)",
            ))
            .unwrap();
        assert_eq!(b, b2);
        // Inbound DSN 1 is the script's IDSN + 1; its data ACK 1 brisk's IDSN + 1.
        let b = st2
            .inbound_bytes(&opt("dss dack8=1 dsn8=1 ssn=1 dll=10 nocs"))
            .unwrap();
        let Ok(MptcpOption::Dss(d)) = MptcpOption::parse(&b[2..]) else {
            panic!()
        };
        assert_eq!(
            d.data_ack.unwrap().value(),
            crypto::idsn(lk).wrapping_add(1)
        );
        assert_eq!(
            d.mapping.unwrap().dsn.value(),
            crypto::idsn(2).wrapping_add(1)
        );
        // ... and brisk's DSS shows relative again.
        assert_eq!(
            st2.to_script(&MptcpOption::Dss(Dss {
                data_ack: Some(DataSeq::Bits32(crypto::idsn(2).wrapping_add(11) as u32)),
                mapping: Some(Mapping {
                    dsn: DataSeq::Bits64(crypto::idsn(lk).wrapping_add(1)),
                    subflow_seq: 1,
                    data_len: 5,
                    checksum: None
                }),
                data_fin: false,
            }))
            .to_string(),
            "dss dack4=11 dsn8=1 ssn=1 dll=5 nocs"
        );
        // The join HMACs follow RFC 8684 §3.2 (crypto's own tests check the values).
        st2.local_nonce = Some(99);
        st2.script_nonce = 7;
        let ours = crypto::join_synack_hmac(lk, 2, 99, 7);
        st2.matches(
            &opt("mp_join_syn_ack backup=0 sender_hmac=auto"),
            &MpOpt::JoinSynAck {
                backup: false,
                address_id: Some(0),
                hmac: Val::Num(ours),
                nonce: Val::Num(99),
            },
        )
        .unwrap();
        let e = st2
            .matches(
                &opt("mp_join_syn_ack backup=0 sender_hmac=auto"),
                &MpOpt::JoinSynAck {
                    backup: false,
                    address_id: Some(0),
                    hmac: Val::Num(ours ^ 1),
                    nonce: Val::Num(99),
                },
            )
            .unwrap_err();
        assert!(
            e.starts_with("mp_join_syn_ack sender_hmac: expected"),
            "{e}"
        );
        let b = st2
            .inbound_bytes(&opt("mp_join_ack sender_hmac=auto"))
            .unwrap();
        assert_eq!(&b[4..24], &crypto::join_ack_hmac(2, lk, 7, 99));
    }

    /// A wrong expectation names the option and the field; a variable binds on first
    /// sight and must match after.
    #[test]
    fn mismatches_name_the_field() {
        let mut st = MpState::new();
        let got = opt("dss dack4=1001 dsn8=1 ssn=1 dll=1000 nocs");
        st.matches(&opt("dss dack=1001 dsn=1 ssn=1 dll=1000 nocs"), &got)
            .unwrap();
        st.matches(&opt("dss dack4 dsn8 ssn=* dll=*"), &got)
            .unwrap();
        let cases = [
            (
                "dss dack=5 dsn=1 ssn=1 dll=1000 nocs",
                "dss dack: expected 5 actual 1001",
            ),
            (
                "dss dack8=1001 dsn=1 ssn=1 dll=1000",
                "dss dack: expected 8 bytes",
            ),
            (
                "dss dack=1001 dsn=1 ssn=2 dll=1000",
                "dss ssn: expected 2 actual 1",
            ),
            (
                "dss dack=1001 dsn=1 ssn=1 dll=999",
                "dss dll: expected 999 actual 1000",
            ),
            (
                "dss dack=1001 dsn=1 ssn=1 dll=1000 cksum=5",
                "dss: expected a checksum actual none",
            ),
            (
                "dss dack=1001 dsn=1 ssn=1 dll=1000 fin",
                "dss: expected DATA_FIN (fin) actual no DATA_FIN",
            ),
            ("dss dack=1001", "dss: expected no dsn actual dsn8=1"),
            ("mp_prio backup=1", "expected mp_prio backup=1 actual dss"),
        ];
        for (want, msg) in cases {
            let e = st.matches(&opt(want), &got).unwrap_err();
            assert!(e.starts_with(msg), "{want}: {e}");
        }
        let k = opt("mpcapable v1 flags[flag_h] key[5]");
        st.matches(&opt("mpcapable v1 flags[flag_h] key[skey]"), &k)
            .unwrap();
        assert_eq!(st.vars["skey"], 5);
        let k6 = opt("mpcapable v1 flags[flag_h] key[6]");
        let e = st
            .matches(&opt("mpcapable v1 flags[flag_h] key[skey]"), &k6)
            .unwrap_err();
        assert_eq!(e, "mpcapable sender key: expected 5 actual 6");
        let e = st
            .matches(&opt("mpcapable v1 flags[flag_a, flag_h] key[skey]"), &k)
            .unwrap_err();
        assert!(e.contains("flags 0x81") && e.contains("flags 0x01"), "{e}");
    }
}
