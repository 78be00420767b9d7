//! Parsing the MPTCP options of [`crate::mptcp`] inside a packet's `<...>` list.
//! Every error names the option and the field, and gives the range.

use super::{Cursor, ParseError};
use crate::mptcp::{AddrRef, Capable, Cksum, DssOpt, Hmac160, MpOpt, Seq, Val};

const U8: u64 = u8::MAX as u64;
const U16: u64 = u16::MAX as u64;
const U32: u64 = u32::MAX as u64;
const U64: u64 = u64::MAX;

impl Cursor<'_> {
    /// Whether the option ends here (`,` or `>` next).
    fn mp_end(&mut self) -> bool {
        self.ws();
        let r = self.rest();
        r.is_empty() || r.starts_with(',') || r.starts_with('>')
    }

    /// A number for `opt field`, at most `max`.
    fn mp_num(&mut self, opt: &str, field: &str, max: u64) -> Result<u64, ParseError> {
        self.ws();
        let start = self.i;
        let v: u64 = self.number(&format!("{opt} {field}")).map_err(|mut e| {
            if e.msg.contains("out of range") {
                e.msg = format!("{opt} {field}: value is out of range (0-{max})");
            }
            e
        })?;
        if v > max {
            return Err(self.st.err(
                start,
                format!("{opt} {field}: value {v} is out of range (0-{max})"),
            ));
        }
        Ok(v)
    }

    /// A value: a number, `*`, `auto`, `sha256_32(var)`, `var` or `var=N`.
    fn mp_val(&mut self, opt: &str, field: &str, max: u64) -> Result<Val, ParseError> {
        self.ws();
        if self.eat("*") {
            return Ok(Val::Any);
        }
        if self.rest().starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(Val::Num(self.mp_num(opt, field, max)?));
        }
        let start = self.i;
        let w = self.word().to_string();
        if w.is_empty() || !w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.st.err(
                start,
                format!(
                    "{opt} {field}: expected a number (0-{max}), *, auto or a variable, found {:?}",
                    super::first_word(&self.st.text[start..self.end])
                ),
            ));
        }
        match w.as_str() {
            "auto" => Ok(Val::Auto),
            "sha256_32" => {
                if !self.eat("(") {
                    return Err(self.err(format!("{opt} {field}: expected '(' after sha256_32")));
                }
                let v = self.word().to_string();
                if v.is_empty() || !self.eat(")") {
                    return Err(self.err(format!(
                        "{opt} {field}: expected sha256_32(variable), the token of a key"
                    )));
                }
                Ok(Val::Token(v))
            }
            _ => {
                if self.eat("=") {
                    let n = self.mp_num(opt, &w, max)?;
                    Ok(Val::Set(w, n))
                } else {
                    Ok(Val::Var(w))
                }
            }
        }
    }

    /// `=` then a value.
    fn mp_eq_val(&mut self, opt: &str, field: &str, max: u64) -> Result<Val, ParseError> {
        if !self.eat("=") {
            return Err(self.err(format!("{opt}: expected '=' after {field}")));
        }
        self.mp_val(opt, field, max)
    }

    fn mp_bool(&mut self, opt: &str, field: &str) -> Result<bool, ParseError> {
        if !self.eat("=") {
            return Err(self.err(format!("{opt}: expected '=' after {field}")));
        }
        Ok(self.mp_num(opt, field, 1)? == 1)
    }

    /// An MPTCP option after its keyword `kw`, through the last field before `,`/`>`.
    pub(super) fn mptcp_option(&mut self, kw: &str, inbound: bool) -> Result<MpOpt, ParseError> {
        let start = self.i;
        let opt = match kw {
            "mpcapable" => self.mp_capable()?,
            "mp_join_syn" | "mp_join_syn_ack" => self.mp_join(kw)?,
            "mp_join_ack" => self.mp_join_ack()?,
            "dss" => self.mp_dss(inbound)?,
            "add_address" => self.mp_add_addr()?,
            "remove_address" => self.mp_remove_addr()?,
            "mp_prio" => {
                let mut backup = None;
                let mut address_id = None;
                while !self.mp_end() {
                    let f = self.word().to_string();
                    match f.as_str() {
                        "backup" => backup = Some(self.mp_bool(kw, "backup")?),
                        "address_id" => {
                            if !self.eat("=") {
                                return Err(self.err("mp_prio: expected '=' after address_id"));
                            }
                            address_id = Some(self.mp_num(kw, "address_id", U8)? as u8);
                        }
                        _ => return Err(self.mp_unknown(kw, &f, "backup or address_id")),
                    }
                }
                MpOpt::Prio {
                    backup: backup.ok_or_else(|| self.err("mp_prio: expected backup=0|1"))?,
                    address_id,
                }
            }
            "mp_fail" => {
                let mut dsn = None;
                while !self.mp_end() {
                    let f = self.word().to_string();
                    match f.as_str() {
                        "dsn8" => dsn = Some(self.mp_eq_val(kw, "dsn8", U64)?),
                        _ => {
                            return Err(self.mp_unknown(kw, &f, "dsn8 (MP_FAIL's DSN is 64 bits)"))
                        }
                    }
                }
                MpOpt::Fail {
                    dsn: dsn.ok_or_else(|| self.err("mp_fail: expected dsn8=N"))?,
                }
            }
            "mp_fastclose" => {
                // `mp_fastclose`, `mp_fastclose key=N|auto`, or the fork's
                // `mp_fastclose ckey=42` / `mp_fastclose ckey` (a variable).
                let key = if self.mp_end() {
                    Val::Auto
                } else if self.rest().starts_with("key")
                    && self.rest()[3..].trim_start().starts_with('=')
                {
                    self.word();
                    self.mp_eq_val(kw, "key", U64)?
                } else {
                    self.mp_val(kw, "key", U64)?
                };
                MpOpt::Fastclose { key }
            }
            "mp_reset" | "mp_tcprst" => {
                let reason = self.mp_num(kw, "reason", U8)? as u8;
                let mut transient = false;
                while !self.mp_end() {
                    let f = self.word().to_string();
                    if f != "flags" || !self.eat("[") {
                        return Err(self.mp_unknown(kw, &f, "flags[flag_t]"));
                    }
                    loop {
                        let fl = self.word().to_string();
                        match fl.as_str() {
                            "flag_t" => transient = true,
                            "no_flags" => {}
                            _ => {
                                return Err(self.mp_unknown(
                                    kw,
                                    &fl,
                                    "flag_t or no_flags in flags[...]",
                                ))
                            }
                        }
                        if self.eat("]") {
                            break;
                        }
                        if !self.eat(",") {
                            return Err(
                                self.err(format!("{kw}: expected ',' or ']' in flags[...]"))
                            );
                        }
                    }
                }
                MpOpt::TcpRst { reason, transient }
            }
            _ => return Err(self.st.err(start, format!("unsupported TCP option {kw}"))),
        };
        if inbound && opt.has_wildcard() {
            return Err(self.st.err(
                start,
                format!(
                    "{kw}: a wildcard (* or a field without a value) is only allowed on outbound packets"
                ),
            ));
        }
        Ok(opt)
    }

    fn mp_unknown(&self, opt: &str, field: &str, expected: &str) -> ParseError {
        let at = self.i.saturating_sub(field.len());
        let field = if field.is_empty() {
            super::first_word(&self.st.text[self.i..self.end]).to_string()
        } else {
            field.to_string()
        };
        self.st.err(
            at,
            format!("{opt}: unexpected field {field:?} (expected {expected})"),
        )
    }

    fn mp_capable(&mut self) -> Result<MpOpt, ParseError> {
        const OPT: &str = "mpcapable";
        let mut c = Capable {
            version: 1,
            flags: 0,
            keys: Vec::new(),
            data_len: None,
            cksum: Cksum::Unwritten,
        };
        let mut flags_seen = false;
        let mut keys_seen = false;
        while !self.mp_end() {
            let f = self.word().to_string();
            match f.as_str() {
                "v0" => c.version = 0,
                "v1" => c.version = 1,
                "flags" => {
                    flags_seen = true;
                    if self.eat("[") {
                        loop {
                            let fl = self.word().to_string();
                            let bit = match fl.as_str() {
                                "no_flags" => 0,
                                _ => match crate::mptcp::cap_flag_bit(&fl) {
                                    Some(b) => b,
                                    None => {
                                        return Err(self.mp_unknown(
                                            OPT,
                                            &fl,
                                            "flag_a .. flag_h or no_flags in flags[...]",
                                        ))
                                    }
                                },
                            };
                            c.flags |= bit;
                            if self.eat("]") {
                                break;
                            }
                            if !self.eat(",") {
                                return Err(
                                    self.err("mpcapable: expected ',' or ']' in flags[...]")
                                );
                            }
                        }
                    } else {
                        c.flags = self.mp_num(OPT, "flags", U8)? as u8;
                    }
                }
                "nokey" => keys_seen = true,
                "key" => {
                    keys_seen = true;
                    if !self.eat("[") {
                        return Err(
                            self.err("mpcapable: expected key[sender] or key[sender, receiver]")
                        );
                    }
                    loop {
                        let field = if c.keys.is_empty() {
                            "sender key"
                        } else {
                            "receiver key"
                        };
                        c.keys.push(self.mp_val(OPT, field, U64)?);
                        if self.eat("]") {
                            break;
                        }
                        if c.keys.len() == 2 || !self.eat(",") {
                            return Err(self.err(
                                "mpcapable: key[...] holds one or two keys, separated by ','",
                            ));
                        }
                    }
                }
                "mpcdatalen" => c.data_len = Some(self.mp_num(OPT, "mpcdatalen", U16)? as u16),
                "nocs" => c.cksum = Cksum::No,
                "cksum" => c.cksum = Cksum::Val(self.mp_eq_val(OPT, "cksum", U16)?),
                _ => {
                    return Err(self.mp_unknown(
                        OPT,
                        &f,
                        "v0, v1, flags[...], nokey, key[...], mpcdatalen N, nocs or cksum=N",
                    ))
                }
            }
        }
        if !flags_seen {
            return Err(self.err("mpcapable: expected flags[...] (e.g. flags[flag_h])"));
        }
        if !keys_seen {
            return Err(self.err("mpcapable: expected nokey or key[...]"));
        }
        if c.data_len.is_some() && c.keys.len() != 2 {
            return Err(self.err("mpcapable: mpcdatalen needs both keys, key[sender, receiver]"));
        }
        if c.data_len.is_none() && matches!(c.cksum, Cksum::Val(_)) {
            return Err(self.err("mpcapable: cksum=N belongs to an MP_CAPABLE with mpcdatalen"));
        }
        Ok(MpOpt::Capable(c))
    }

    fn mp_join(&mut self, kw: &str) -> Result<MpOpt, ParseError> {
        let syn = kw == "mp_join_syn";
        let mut backup = false;
        let mut address_id = None;
        let mut token = None;
        let mut hmac = None;
        let mut nonce = Val::Any;
        while !self.mp_end() {
            let f = self.word().to_string();
            match f.as_str() {
                "backup" => backup = self.mp_bool(kw, "backup")?,
                "address_id" => {
                    if !self.eat("=") {
                        return Err(self.err(format!("{kw}: expected '=' after address_id")));
                    }
                    if !self.eat("auto") {
                        address_id = Some(self.mp_num(kw, "address_id", U8)? as u8);
                    }
                }
                "token" if syn => token = Some(self.mp_eq_val(kw, "token", U32)?),
                "sender_hmac" if !syn => hmac = Some(self.mp_eq_val(kw, "sender_hmac", U64)?),
                "rand" => nonce = self.mp_eq_val(kw, "rand", U32)?,
                _ => {
                    let want = if syn {
                        "backup, address_id, token or rand"
                    } else {
                        "backup, address_id, sender_hmac or rand"
                    };
                    return Err(self.mp_unknown(kw, &f, want));
                }
            }
        }
        Ok(if syn {
            MpOpt::JoinSyn {
                backup,
                address_id,
                token: token.ok_or_else(|| {
                    self.err("mp_join_syn: expected token=N, token=sha256_32(var) or token=auto")
                })?,
                nonce,
            }
        } else {
            MpOpt::JoinSynAck {
                backup,
                address_id,
                hmac: hmac.ok_or_else(|| {
                    self.err("mp_join_syn_ack: expected sender_hmac=N or sender_hmac=auto")
                })?,
                nonce,
            }
        })
    }

    fn mp_join_ack(&mut self) -> Result<MpOpt, ParseError> {
        const OPT: &str = "mp_join_ack";
        let mut hmac = None;
        while !self.mp_end() {
            let f = self.word().to_string();
            if f != "sender_hmac" {
                return Err(self.mp_unknown(OPT, &f, "sender_hmac"));
            }
            if !self.eat("=") {
                return Err(self.err("mp_join_ack: expected '=' after sender_hmac"));
            }
            self.ws();
            let vstart = self.i;
            hmac = Some(if self.eat("*") {
                Hmac160::Any
            } else {
                let w = self.word().to_string();
                if w == "auto" {
                    Hmac160::Auto
                } else {
                    let hex = w.strip_prefix("0x").unwrap_or("");
                    let mut b = [0u8; 20];
                    if hex.len() != 40 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                        return Err(self.st.err(
                            vstart,
                            format!("mp_join_ack sender_hmac: expected auto, * or 0x and 40 hex digits (160 bits), found {w:?}"),
                        ));
                    }
                    for (i, x) in b.iter_mut().enumerate() {
                        *x = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0);
                    }
                    Hmac160::Bytes(b)
                }
            });
        }
        Ok(MpOpt::JoinAck {
            hmac: hmac.ok_or_else(|| self.err("mp_join_ack: expected sender_hmac=auto"))?,
        })
    }

    fn mp_dss(&mut self, inbound: bool) -> Result<MpOpt, ParseError> {
        const OPT: &str = "dss";
        let mut d = DssOpt {
            dack: None,
            dsn: None,
            ssn: None,
            dll: None,
            cksum: Cksum::Unwritten,
            fin: false,
        };
        while !self.mp_end() {
            let fstart = self.i;
            let f = self.word().to_string();
            let seq = |c: &mut Self, width: Option<u8>, name: &str| -> Result<Seq, ParseError> {
                let max = if width == Some(4) { U32 } else { U64 };
                if c.eat("=") {
                    Ok(Seq {
                        width,
                        val: c.mp_val(OPT, name, max)?,
                    })
                } else if width.is_some() {
                    // The fork's bare `dack4`: that width, any value.
                    Ok(Seq {
                        width,
                        val: Val::Any,
                    })
                } else {
                    Err(c.err(format!("dss: expected '=' after {name}")))
                }
            };
            let dup = |c: &Self, what: &str| {
                c.st.err(
                    fstart,
                    format!("dss: more than one {what} (dack4, dack8 or dack; dsn4, dsn8 or dsn)"),
                )
            };
            match f.as_str() {
                "dack4" | "dack8" | "dack" => {
                    if d.dack.is_some() {
                        return Err(dup(self, "data ACK"));
                    }
                    let w = f[4..].parse().ok();
                    d.dack = Some(seq(self, w, &f)?);
                }
                "dsn4" | "dsn8" | "dsn" => {
                    if d.dsn.is_some() {
                        return Err(dup(self, "DSN"));
                    }
                    let w = f[3..].parse().ok();
                    d.dsn = Some(seq(self, w, &f)?);
                }
                "ssn" => d.ssn = Some(self.mp_eq_val(OPT, "ssn", U32)?),
                "dll" => d.dll = Some(self.mp_eq_val(OPT, "dll", U16)?),
                "nocs" => d.cksum = Cksum::No,
                "cksum" => {
                    d.cksum = if self.rest().trim_start().starts_with('=') {
                        Cksum::Val(self.mp_eq_val(OPT, "cksum", U16)?)
                    } else {
                        Cksum::Val(Val::Any)
                    }
                }
                "fin" => d.fin = true,
                _ => {
                    return Err(self.mp_unknown(
                        OPT,
                        &f,
                        "dack4, dack8, dack, dsn4, dsn8, dsn, ssn, dll, nocs, cksum or fin",
                    ))
                }
            }
        }
        if d.dsn.is_none() {
            if matches!(d.cksum, Cksum::Val(_)) {
                return Err(
                    self.err("dss: cksum belongs to a mapping, which needs dsn4=N or dsn8=N")
                );
            }
            // The fork's scripts write `ssn=1 dll=0` on DSSs without a mapping, and
            // the fork ignores them there (`dss_do_dack_only`): so does this runner.
            d.ssn = None;
            d.dll = None;
        }
        if inbound {
            if d.dsn.as_ref().is_some_and(|s| s.width.is_none())
                || d.dack.as_ref().is_some_and(|s| s.width.is_none())
            {
                return Err(
                    self.err("dss: an inbound packet gives the width: dack4/dack8, dsn4/dsn8")
                );
            }
            if d.dsn.is_some() && d.dll.is_none() {
                return Err(self.err("dss: an inbound mapping needs dll=N (its data-level length)"));
            }
        }
        Ok(MpOpt::Dss(d))
    }

    fn mp_add_addr(&mut self) -> Result<MpOpt, ParseError> {
        const OPT: &str = "add_address";
        let mut address_id = None;
        let mut addr = None;
        let mut port = None;
        let mut hmac = None;
        let mut echo = false;
        while !self.mp_end() {
            let f = self.word().to_string();
            match f.as_str() {
                "address_id" => {
                    if !self.eat("=") {
                        return Err(self.err("add_address: expected '=' after address_id"));
                    }
                    address_id = Some(self.mp_num(OPT, "address_id", U8)? as u8);
                }
                "addr" => {
                    if !self.eat("[") {
                        return Err(self.err("add_address: expected addr[address]"));
                    }
                    // The fork's `addr[ep=inet_addr("198.51.100.2")]`, or a literal.
                    let inner_start = self.i;
                    let close = self.rest().find(']').map(|n| self.i + n);
                    let Some(close) = close else {
                        return Err(self.err("add_address: expected ']' after addr[..."));
                    };
                    let inner = &self.st.text[inner_start..close];
                    let lit = match inner.find('"') {
                        Some(a) => inner[a + 1..].split('"').next().unwrap_or(""),
                        None => inner.trim(),
                    };
                    match AddrRef::parse(lit) {
                        Some(a) => addr = Some(a),
                        None => {
                            return Err(self.st.err(
                                inner_start,
                                format!("add_address addr: {lit:?} is not an IPv4 or IPv6 address, caddr0-9 or saddr0-9"),
                            ))
                        }
                    }
                    self.i = close + 1;
                }
                "port" => {
                    if !self.eat("=") {
                        return Err(self.err("add_address: expected '=' after port"));
                    }
                    port = Some(self.mp_num(OPT, "port", U16)? as u16);
                }
                "hmac" => hmac = Some(self.mp_eq_val(OPT, "hmac", U64)?),
                "addr_echo" => echo = true,
                _ => {
                    return Err(self.mp_unknown(
                        OPT,
                        &f,
                        "address_id, addr[...], port, hmac or addr_echo",
                    ))
                }
            }
        }
        let addr = addr.ok_or_else(|| self.err("add_address: expected addr[address]"))?;
        if echo == hmac.is_some() {
            return Err(self.err(
                "add_address: expected exactly one of hmac=N|auto (an announcement) or addr_echo",
            ));
        }
        Ok(MpOpt::AddAddr {
            address_id,
            addr,
            port,
            hmac,
        })
    }

    fn mp_remove_addr(&mut self) -> Result<MpOpt, ParseError> {
        const OPT: &str = "remove_address";
        let f = self.word().to_string();
        if f != "address_id" || !self.eat("=") || !self.eat("[") {
            return Err(self.err("remove_address: expected address_id=[id, ...]"));
        }
        let mut ids = Vec::new();
        loop {
            ids.push(self.mp_num(OPT, "address_id", U8)? as u8);
            if self.eat("]") {
                break;
            }
            if !self.eat(",") {
                return Err(self.err("remove_address: expected ',' or ']' in address_id=[...]"));
            }
        }
        let max = brisk_wire::mptcp::MAX_REMOVE_IDS;
        if ids.len() > max {
            return Err(self.err(format!(
                "remove_address address_id: {} ids, at most {max}",
                ids.len()
            )));
        }
        if !self.mp_end() {
            let f = self.word().to_string();
            return Err(self.mp_unknown(OPT, &f, "nothing after address_id=[...]"));
        }
        Ok(MpOpt::RemoveAddr(ids))
    }
}
