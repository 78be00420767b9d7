//! packetdrill's script format, parsed into events.
//!
//! The grammar follows packetdrill's `lexer.l` / `parser.y` (google/packetdrill,
//! gtests/net/packetdrill) for the subset a TCP conformance run needs: a time, then an
//! inbound packet (`<`), an outbound packet (`>`), a system call, a `%{ }%` Python block
//! or a `` `shell` `` command. Statements may span lines while a bracket is open.
//! Anything outside the subset is kept as [`EventKind::Unsupported`] with what it was,
//! so the runner can report it rather than fail to parse; only text that is not
//! packetdrill at all is a [`ParseError`], which names its line and column.

use crate::mptcp::MpOpt;
use std::fmt;

#[path = "mptcp_parse.rs"]
mod mptcp_parse;

/// Largest payload a packet line may give, bytes (packetdrill's `is_valid_u16`).
pub const MAX_PAYLOAD: u32 = 65_535;

/// A parse error: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // About the whole file (its size), not a place in it.
            return write!(f, "{}", self.msg);
        }
        write!(f, "{}:{}: {}", self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// When an event happens, in microseconds (packetdrill's `event_time_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Time {
    /// `*`: any time.
    Any,
    /// `0.100`: from the script's start.
    Abs(i64),
    /// `+0.1`: from the end of the previous event (or, between two inbound packets,
    /// from the previous one's script time, as packetdrill anchors them).
    Rel(i64),
    /// `0.1~0.2`.
    AbsRange(i64, i64),
    /// `+0.1~+0.2`.
    RelRange(i64, i64),
}

/// A TCP option as written between `<` and `>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcpOpt {
    Nop,
    Eol,
    Mss(u16),
    WScale(u8),
    SackOk,
    Ts {
        val: u32,
        ecr: u32,
    },
    Sack(Vec<(u32, u32)>),
    /// An MPTCP option (kind 30), in the MPTCP packetdrill fork's syntax.
    Mptcp(MpOpt),
    /// TCP Fast Open (RFC 7413): packetdrill's `FO [cookie]` (kind 34) and `FOEXP
    /// [cookie]` (kind 254 with the experiment ID 0xF989); no cookie is a request.
    /// The cookie is written in hex; any even number of digits that fits the option
    /// space, so scripts can send the invalid lengths a stack must refuse.
    FastOpen {
        exp: bool,
        cookie: Vec<u8>,
    },
}

/// Most cookie bytes a script may give (the 40-byte option space less the
/// experimental form's 4-byte head).
pub const MAX_FO_COOKIE: usize = 36;

/// The options part of a packet line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Options {
    /// No `<...>` at all: the packet carries (or must carry) no options.
    None,
    /// `<...>`: whatever the stack sends (outbound only).
    Any,
    List(Vec<TcpOpt>),
}

/// One TCP packet line, with script-relative sequence numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flag letters as written: `S`, `.`(ACK), `F`, `R`, `P`, `U`, `E`(ECE), `W`(CWR).
    pub flags: u16,
    pub seq: u32,
    pub len: u32,
    pub ack: Option<u32>,
    pub win: Option<u16>,
    pub urg: Option<u16>,
    pub options: Options,
    /// `[noecn]`, `[ect0]`, `[ect1]`, `[ce]`: the IP ECN field (0-3); `None` if not
    /// written (inbound: not-ECT; outbound: not checked).
    pub ecn: Option<u8>,
    /// The MPTCP fork's `addr[src] > addr[dst]` prefix: the subflow's addresses
    /// (`caddrN` the client's Nth address, `saddrN` the server's, or a literal); one
    /// not written keeps the previous packet's.
    pub addrs: [Option<crate::mptcp::AddrRef>; 2],
}

/// A system call line: `name(arg, ...) = result [ERRNO (text)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syscall {
    pub name: String,
    /// Arguments as written, split at top-level commas and trimmed.
    pub args: Vec<String>,
    /// Expected return value; `None` for `= ...` or no `=`.
    pub ret: Option<i64>,
    pub errno: Option<String>,
    /// `start...end` blocking form: the call must return at `end` (script µs, same
    /// relative-ness as the start).
    pub end: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    Inbound(Packet),
    Outbound(Packet),
    Syscall(Syscall),
    /// `%{ ... }%`: Python assertions on `tcp_info`, run by packetdrill after the script.
    Python(String),
    /// `` `...` ``: a shell command (sysctl, defaults.sh).
    Shell(String),
    /// A packetdrill feature this runner does not execute (with what it is).
    Unsupported(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub line: usize,
    pub time: Time,
    pub kind: EventKind,
}

/// A parsed script: `--option=value` lines and events in order.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub options: Vec<(String, String)>,
    pub events: Vec<Event>,
}

/// Flag bits as in the TCP header.
pub mod flag {
    pub const FIN: u16 = 0x01;
    pub const SYN: u16 = 0x02;
    pub const RST: u16 = 0x04;
    pub const PSH: u16 = 0x08;
    pub const ACK: u16 = 0x10;
    pub const URG: u16 = 0x20;
    pub const ECE: u16 = 0x40;
    pub const CWR: u16 = 0x80;
}

/// Flags in packetdrill's spelling (`S.`, `P.`, `F.`, `R`).
pub fn flags_str(f: u16) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (flag::SYN, 'S'),
        (flag::FIN, 'F'),
        (flag::RST, 'R'),
        (flag::PSH, 'P'),
        (flag::URG, 'U'),
        (flag::ECE, 'E'),
        (flag::CWR, 'W'),
        (flag::ACK, '.'),
    ] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    if s.is_empty() {
        s.push('-');
    }
    s
}

impl fmt::Display for TcpOpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcpOpt::Nop => write!(f, "nop"),
            TcpOpt::Eol => write!(f, "eol"),
            TcpOpt::Mss(m) => write!(f, "mss {m}"),
            TcpOpt::WScale(w) => write!(f, "wscale {w}"),
            TcpOpt::SackOk => write!(f, "sackOK"),
            TcpOpt::Ts { val, ecr } => write!(f, "TS val {val} ecr {ecr}"),
            TcpOpt::Sack(b) => {
                write!(f, "sack")?;
                for (l, r) in b {
                    write!(f, " {l}:{r}")?;
                }
                Ok(())
            }
            TcpOpt::Mptcp(o) => write!(f, "{o}"),
            TcpOpt::FastOpen { exp, cookie } => {
                write!(f, "{}", if *exp { "FOEXP" } else { "FO" })?;
                if !cookie.is_empty() {
                    write!(f, " ")?;
                    for b in cookie {
                        write!(f, "{b:02x}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.addrs != [None, None] {
            if let Some(a) = self.addrs[0] {
                write!(f, "addr[{a}] ")?;
            }
            write!(f, "> ")?;
            if let Some(a) = self.addrs[1] {
                write!(f, "addr[{a}] ")?;
            }
        }
        write!(
            f,
            "{} {}:{}({})",
            flags_str(self.flags),
            self.seq,
            self.seq.wrapping_add(self.len),
            self.len
        )?;
        if let Some(a) = self.ack {
            write!(f, " ack {a}")?;
        }
        if let Some(w) = self.win {
            write!(f, " win {w}")?;
        }
        match &self.options {
            Options::None => Ok(()),
            Options::Any => write!(f, " <...>"),
            Options::List(l) if l.is_empty() => Ok(()),
            Options::List(l) => {
                write!(f, " <")?;
                for (i, o) in l.iter().enumerate() {
                    if i > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{o}")?;
                }
                write!(f, ">")
            }
        }
    }
}

/// A logical statement: text with the line and column of each character kept.
struct Stmt {
    text: String,
    /// (line, col) of each byte of `text`.
    pos: Vec<(usize, usize)>,
}

impl Stmt {
    fn at(&self, i: usize) -> (usize, usize) {
        self.pos
            .get(i)
            .or(self.pos.last())
            .copied()
            .unwrap_or((0, 0))
    }
    fn err(&self, i: usize, msg: impl Into<String>) -> ParseError {
        let (line, col) = self.at(i);
        ParseError {
            line,
            col,
            msg: msg.into(),
        }
    }
}

/// Splits the source into statements: strips `//` and `/* */` comments, joins lines
/// while a bracket is open, and keeps `%{ }%` and backquoted blocks whole.
fn statements(src: &str) -> Result<Vec<Stmt>, ParseError> {
    let chars: Vec<(usize, usize, char)> = {
        let mut v = Vec::with_capacity(src.len());
        for (ln, l) in src.split('\n').enumerate() {
            for (c, ch) in l.chars().enumerate() {
                v.push((ln + 1, c + 1, ch));
            }
            v.push((ln + 1, l.chars().count() + 1, '\n'));
        }
        v
    };
    let mut out = Vec::new();
    let mut cur = Stmt {
        text: String::new(),
        pos: Vec::new(),
    };
    let mut depth: i32 = 0;
    let mut i = 0;
    let push = |cur: &mut Stmt, out: &mut Vec<Stmt>| {
        if !cur.text.trim().is_empty() {
            out.push(std::mem::replace(
                cur,
                Stmt {
                    text: String::new(),
                    pos: Vec::new(),
                },
            ));
        } else {
            cur.text.clear();
            cur.pos.clear();
        }
    };
    let n = chars.len();
    while i < n {
        let (ln, col, c) = chars[i];
        let next = chars.get(i + 1).map(|x| x.2);
        // Python block: copy verbatim to the closing `}%`.
        if c == '%' && next == Some('{') {
            let start = i;
            let mut j = i + 2;
            while j + 1 < n && !(chars[j].2 == '}' && chars[j + 1].2 == '%') {
                j += 1;
            }
            if j + 1 >= n {
                return Err(ParseError {
                    line: ln,
                    col,
                    msg: "unterminated %{ block (no closing }%)".into(),
                });
            }
            for &(l, cc, ch) in &chars[start..j + 2] {
                cur.text.push(ch);
                cur.pos.push((l, cc));
            }
            i = j + 2;
            continue;
        }
        if c == '`' {
            let start = i;
            let mut j = i + 1;
            while j < n && chars[j].2 != '`' {
                j += 1;
            }
            if j >= n {
                return Err(ParseError {
                    line: ln,
                    col,
                    msg: "unterminated ` command".into(),
                });
            }
            for &(l, cc, ch) in &chars[start..=j] {
                cur.text.push(ch);
                cur.pos.push((l, cc));
            }
            i = j + 1;
            continue;
        }
        if c == '"' {
            let mut j = i + 1;
            while j < n && chars[j].2 != '"' && chars[j].2 != '\n' {
                if chars[j].2 == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = j.min(n - 1);
            for &(l, cc, ch) in &chars[i..=end] {
                cur.text.push(ch);
                cur.pos.push((l, cc));
            }
            i = end + 1;
            continue;
        }
        if c == '/' && next == Some('/') {
            while i < n && chars[i].2 != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut j = i + 2;
            while j + 1 < n && !(chars[j].2 == '*' && chars[j + 1].2 == '/') {
                j += 1;
            }
            i = j + 2;
            cur.text.push(' ');
            cur.pos.push((ln, col));
            continue;
        }
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => depth -= 1,
            _ => {}
        }
        if c == '\n' && depth <= 0 {
            depth = 0;
            push(&mut cur, &mut out);
        } else {
            cur.text.push(if c == '\n' { ' ' } else { c });
            cur.pos.push((ln, col));
        }
        i += 1;
    }
    push(&mut cur, &mut out);
    Ok(out)
}

/// Parses a whole script.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    let mut script = Script::default();
    for st in statements(src)? {
        let lead = st.text.len() - st.text.trim_start().len();
        let body = st.text.trim();
        let line = st.at(lead).0;
        if let Some(opt) = body.strip_prefix("--") {
            let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
            script.options.push((k.trim().into(), v.trim().into()));
            continue;
        }
        // A shell command may stand without a time (the `defaults.sh` line at the top
        // of most scripts); it runs where it stands.
        if body.starts_with('`') {
            script.events.push(Event {
                line,
                time: Time::Rel(0),
                kind: EventKind::Shell(body.trim_matches('`').to_string()),
            });
            continue;
        }
        let mut p = Cursor {
            st: &st,
            i: lead,
            end: st.text.trim_end().len(),
        };
        let (time, blocking_end) = p.time()?;
        p.ws();
        let kind = p.event(blocking_end)?;
        script.events.push(Event { line, time, kind });
    }
    Ok(script)
}

struct Cursor<'a> {
    st: &'a Stmt,
    i: usize,
    end: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.st.text[self.i..self.end]
    }
    fn ws(&mut self) {
        while self.i < self.end && self.st.text.as_bytes()[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn err(&self, msg: impl Into<String>) -> ParseError {
        self.st.err(self.i, msg)
    }
    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.rest().starts_with(s) {
            self.i += s.len();
            true
        } else {
            false
        }
    }
    /// A word: letters, digits, `_`, `.`, `:`, `-`, `+`.
    fn word(&mut self) -> &str {
        self.ws();
        let start = self.i;
        let b = self.st.text.as_bytes();
        while self.i < self.end
            && (b[self.i].is_ascii_alphanumeric() || b"_.:-+".contains(&b[self.i]))
        {
            self.i += 1;
        }
        &self.st.text[start..self.i]
    }
    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        self.ws();
        let start = self.i;
        let b = self.st.text.as_bytes();
        let hex = self.rest().starts_with("0x");
        if hex {
            self.i += 2;
        }
        while self.i < self.end
            && (b[self.i].is_ascii_hexdigit() && (hex || b[self.i].is_ascii_digit()))
        {
            self.i += 1;
        }
        let s = &self.st.text[start..self.i];
        let v = if hex {
            u64::from_str_radix(&s[2..], 16)
                .ok()
                .and_then(|v| v.to_string().parse().ok())
        } else {
            s.parse().ok()
        };
        let digits = s.len() > if hex { 2 } else { 0 };
        v.ok_or_else(|| {
            if digits {
                return self.st.err(start, format!("{what} {s} is out of range"));
            }
            self.st.err(
                start,
                format!(
                    "expected {what} (a number), found {:?}",
                    first_word(&self.st.text[start..self.end])
                ),
            )
        })
    }

    /// Seconds like `0.1`, `.001`, `1` → µs.
    fn seconds(&mut self) -> Result<i64, ParseError> {
        self.ws();
        let start = self.i;
        let b = self.st.text.as_bytes();
        while self.i < self.end && (b[self.i].is_ascii_digit() || b[self.i] == b'.') {
            if b[self.i] == b'.' && self.st.text[self.i..].starts_with("...") {
                break;
            }
            self.i += 1;
        }
        let s = &self.st.text[start..self.i];
        let v: f64 = s.parse().map_err(|_| {
            self.st.err(
                start,
                format!(
                    "expected a time in seconds, found {:?}",
                    first_word(&self.st.text[start..self.end])
                ),
            )
        })?;
        Ok((v * 1e6).round() as i64)
    }

    /// The time at the start of a statement, and a blocking call's end time.
    fn time(&mut self) -> Result<(Time, Option<i64>), ParseError> {
        self.ws();
        if self.eat("*") {
            return Ok((Time::Any, None));
        }
        let rel = self.eat("+");
        let a = self.seconds()?;
        if self.eat("~") {
            let rel2 = self.eat("+");
            let b = self.seconds()?;
            if rel != rel2 {
                return Err(self.err("a time range must be both relative (+a~+b) or both absolute"));
            }
            return Ok((
                if rel {
                    Time::RelRange(a, b)
                } else {
                    Time::AbsRange(a, b)
                },
                None,
            ));
        }
        let mut end = None;
        if self.rest().starts_with("...") {
            self.i += 3;
            self.eat("+");
            end = Some(self.seconds()?);
        }
        Ok((if rel { Time::Rel(a) } else { Time::Abs(a) }, end))
    }

    fn event(&mut self, blocking_end: Option<i64>) -> Result<EventKind, ParseError> {
        let r = self.rest();
        if r.starts_with("%{") {
            return Ok(EventKind::Python(r.to_string()));
        }
        if r.starts_with('`') {
            return Ok(EventKind::Shell(r.trim_matches('`').to_string()));
        }
        if let Some(dir) = r.chars().next().filter(|c| *c == '<' || *c == '>') {
            self.i += 1;
            self.ws();
            let r = self.rest();
            for (kw, what) in [
                ("udp", "UDP packets"),
                ("icmp", "ICMP packets"),
                ("gre", "GRE packets"),
                ("mpls", "MPLS packets"),
                ("psp", "PSP packets"),
                ("(", "IP header annotations"),
                ("inet6", "IPv6 packets"),
                ("inet", "explicit IPv4 packet headers"),
                ("-", "explicit packet headers"),
            ] {
                // `-` alone is packetdrill's "no flags at all".
                if kw == "-" && r.starts_with("- ") {
                    continue;
                }
                if r.starts_with(kw) {
                    return Ok(EventKind::Unsupported(what.into()));
                }
            }
            let pkt = match self.packet(dir == '<') {
                Err(e) if e.msg.starts_with("unsupported") => {
                    return Ok(EventKind::Unsupported(e.msg));
                }
                r => r?,
            };
            return Ok(if dir == '<' {
                EventKind::Inbound(pkt)
            } else {
                EventKind::Outbound(pkt)
            });
        }
        self.syscall(blocking_end)
    }

    fn packet(&mut self, inbound: bool) -> Result<Packet, ParseError> {
        self.ws();
        let mut ecn = None;
        if self.eat("[") {
            let estart = self.i;
            let w = self.word().to_string();
            ecn = Some(match w.as_str() {
                "noecn" => 0,
                "ect1" => 1,
                "ect0" => 2,
                "ce" => 3,
                _ => {
                    return Err(self.st.err(
                        estart,
                        format!(
                        "unsupported IP annotation [{w}] (the runner knows noecn, ect0, ect1, ce)"
                    ),
                    ))
                }
            });
            if !self.eat("]") {
                return Err(self.err("expected ']' after the ECN annotation"));
            }
        }
        let addrs = self.addr_prefix()?;
        self.ws();
        let fstart = self.i;
        let fw = self.word().to_string();
        let fw = if fw == "-" { String::new() } else { fw };
        let no_flags = self.st.text[fstart..self.i].trim() == "-";
        let mut flags = 0u16;
        for ch in fw.chars() {
            flags |= match ch {
                'S' => flag::SYN,
                'F' => flag::FIN,
                'R' => flag::RST,
                'P' => flag::PSH,
                '.' => flag::ACK,
                'U' => flag::URG,
                'E' => flag::ECE,
                'W' => flag::CWR,
                _ => {
                    return Err(self.st.err(
                        fstart,
                        format!("bad TCP flags {fw:?} (expected letters of S F R P . U E W)"),
                    ))
                }
            };
        }
        if fw.is_empty() && !no_flags {
            return Err(self.err("expected TCP flags such as S, S., ., P. or F."));
        }
        let seq: u32 = self.number("start sequence number")?;
        if !self.eat(":") {
            return Err(self.err("expected ':' in start:end(length)"));
        }
        let end: u32 = self.number("end sequence number")?;
        if !self.eat("(") {
            return Err(self.err("expected '(' in start:end(length)"));
        }
        let lstart = self.i;
        let len: u32 = self.number("payload length")?;
        // packetdrill's parser takes a u16 here (`is_valid_u16`): a TCP segment's
        // payload fits an IP packet. Checked before anything is built, so a huge
        // length is an error, not an allocation.
        if len > MAX_PAYLOAD {
            self.ws();
            return Err(self.st.err(
                lstart,
                format!("TCP payload length {len} is out of range (0-{MAX_PAYLOAD})"),
            ));
        }
        if !self.eat(")") {
            return Err(self.err("expected ')' after the payload length"));
        }
        if end.wrapping_sub(seq) != len {
            return Err(self.err(format!(
                "inconsistent sequence range {seq}:{end} and length {len}"
            )));
        }
        let mut pkt = Packet {
            flags,
            seq,
            len,
            ack: None,
            win: None,
            urg: None,
            options: Options::None,
            ecn,
            addrs,
        };
        loop {
            self.ws();
            if self.i >= self.end {
                break;
            }
            if self.rest().starts_with('<') {
                self.i += 1;
                pkt.options = self.options(inbound)?;
                continue;
            }
            let kstart = self.i;
            let kw = self.word().to_string();
            match kw.as_str() {
                "ack" => pkt.ack = Some(self.number("ack number")?),
                "win" => pkt.win = Some(self.number("window (0-65535)")?),
                "urg" => pkt.urg = Some(self.number("urgent pointer")?),
                "" => {
                    return Err(self.st.err(
                        kstart,
                        format!("unexpected {:?} in a packet", first_word(self.rest())),
                    ))
                }
                other => {
                    return Err(self.st.err(
                        kstart,
                        format!(
                        "unexpected {other:?} in a packet (expected ack, win, urg or <options>)"
                    ),
                    ))
                }
            }
        }
        if inbound && pkt.options == Options::Any {
            return Err(self.err("<...> is only allowed on outbound packets"));
        }
        Ok(pkt)
    }

    /// The fork's `addr[src] > addr[dst]` (either side may be left out), if written.
    fn addr_prefix(&mut self) -> Result<[Option<crate::mptcp::AddrRef>; 2], ParseError> {
        let mut out = [None, None];
        self.ws();
        if !(self.rest().starts_with("addr[") || self.rest().starts_with("> addr[")) {
            return Ok(out);
        }
        if !self.rest().starts_with('>') {
            out[0] = Some(self.addr_name()?);
        }
        if !self.eat(">") {
            return Err(self.err("expected '>' between addr[source] and addr[destination]"));
        }
        self.ws();
        if self.rest().starts_with("addr[") {
            out[1] = Some(self.addr_name()?);
        }
        // `[src, dst]` as written; the runner maps them to (remote, local) or (local, remote).
        Ok(out)
    }

    /// `addr[caddrN]`, `addr[saddrN]` (N 0-9) or `addr[<literal>]`.
    fn addr_name(&mut self) -> Result<crate::mptcp::AddrRef, ParseError> {
        let start = self.i;
        if !self.eat("addr[") {
            return Err(self.err("expected addr[...]"));
        }
        let w = self.word().to_string();
        if !self.eat("]") {
            return Err(self.err("expected ']' after addr[..."));
        }
        crate::mptcp::AddrRef::parse(&w).ok_or_else(|| {
            self.st.err(
                start,
                format!("addr[{w}]: expected caddr0-caddr9 (the client's addresses), saddr0-saddr9 (the server's) or an IP address"),
            )
        })
    }

    /// Options after the `<`, through the closing `>`.
    fn options(&mut self, inbound: bool) -> Result<Options, ParseError> {
        self.ws();
        if self.rest().starts_with("...") {
            self.i += 3;
            if !self.eat(">") {
                return Err(self.err("expected '>' after <..."));
            }
            return Ok(Options::Any);
        }
        let mut list = Vec::new();
        loop {
            self.ws();
            let kstart = self.i;
            let kw = self.word().to_string();
            match kw.as_str() {
                "nop" => list.push(TcpOpt::Nop),
                "eol" => list.push(TcpOpt::Eol),
                "sackOK" => list.push(TcpOpt::SackOk),
                "mss" => list.push(TcpOpt::Mss(self.number("MSS")?)),
                "wscale" => list.push(TcpOpt::WScale(self.number("window scale")?)),
                "TS" => {
                    if self.word() != "val" {
                        return Err(self.err("expected 'val' in TS val N ecr N"));
                    }
                    let val = self.number("TS val")?;
                    if self.word() != "ecr" {
                        return Err(self.err("expected 'ecr' in TS val N ecr N"));
                    }
                    let ecr = self.number("TS ecr")?;
                    list.push(TcpOpt::Ts { val, ecr });
                }
                "sack" => {
                    let mut blocks = Vec::new();
                    loop {
                        self.ws();
                        if !self.rest().starts_with(|c: char| c.is_ascii_digit()) {
                            break;
                        }
                        let l = self.number("SACK block start")?;
                        if !self.eat(":") {
                            return Err(self.err("expected ':' in a SACK block"));
                        }
                        let r = self.number("SACK block end")?;
                        blocks.push((l, r));
                    }
                    list.push(TcpOpt::Sack(blocks));
                }
                w if crate::mptcp::is_keyword(w) => {
                    list.push(TcpOpt::Mptcp(self.mptcp_option(w, inbound)?));
                }
                "FO" | "FOEXP" => {
                    let exp = kw == "FOEXP";
                    list.push(TcpOpt::FastOpen {
                        exp,
                        cookie: self.fo_cookie()?,
                    });
                }
                "md5" | "exp" | "mptcp" | "tarr" | "acc" | "AccECN" | "ae" | "ecn" => {
                    // Skip to the end of the list; report it as unsupported.
                    return Err(self.st.err(kstart, format!("unsupported TCP option {kw}")));
                }
                "" => {
                    return Err(self.st.err(
                        kstart,
                        format!("expected a TCP option, found {:?}", first_word(self.rest())),
                    ))
                }
                other => {
                    return Err(self
                        .st
                        .err(kstart, format!("unsupported TCP option {other}")))
                }
            }
            if self.eat(",") {
                continue;
            }
            if self.eat(">") {
                return Ok(Options::List(list));
            }
            return Err(self.err("expected ',' or '>' in the option list"));
        }
    }

    /// `FO`'s optional cookie: hex digits up to the next `,` or `>`.
    fn fo_cookie(&mut self) -> Result<Vec<u8>, ParseError> {
        self.ws();
        if self.rest().starts_with(',') || self.rest().starts_with('>') {
            return Ok(Vec::new());
        }
        let start = self.i;
        let w = self.word().to_string();
        let bad = |msg: String| Err(self.st.err(start, msg));
        if w.is_empty() || !w.chars().all(|c| c.is_ascii_hexdigit()) {
            return bad(format!(
                "Fast Open cookie {w:?}: expected hex digits (or none for a cookie request)"
            ));
        }
        if !w.len().is_multiple_of(2) || w.len() / 2 > MAX_FO_COOKIE {
            return bad(format!(
                "Fast Open cookie {w}: {} hex digits; expected an even number, 2-{}",
                w.len(),
                2 * MAX_FO_COOKIE
            ));
        }
        Ok((0..w.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&w[i..i + 2], 16).unwrap_or(0))
            .collect())
    }

    fn syscall(&mut self, blocking_end: Option<i64>) -> Result<EventKind, ParseError> {
        self.ws();
        let nstart = self.i;
        let name = self.word().to_string();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.st.err(
                nstart,
                format!(
                    "expected a packet (< or >), a system call, %{{ }}% or `command`, found {:?}",
                    first_word(&self.st.text[nstart..self.end])
                ),
            ));
        }
        if !self.eat("(") {
            return Err(self.err(format!("expected '(' after {name}")));
        }
        // Arguments to the matching ')'.
        let start = self.i;
        let b = self.st.text.as_bytes();
        let mut depth = 1;
        let mut args = Vec::new();
        let mut arg_start = start;
        let mut in_str = false;
        while self.i < self.end {
            let c = b[self.i];
            if in_str {
                if c == b'\\' {
                    self.i += 1;
                } else if c == b'"' {
                    in_str = false;
                }
            } else {
                match c {
                    b'"' => in_str = true,
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => {
                        args.push(self.st.text[arg_start..self.i].trim().to_string());
                        arg_start = self.i + 1;
                    }
                    _ => {}
                }
            }
            self.i += 1;
        }
        if depth != 0 {
            return Err(self.err(format!("unclosed '(' in {name}(...)")));
        }
        let last = self.st.text[arg_start..self.i].trim();
        if !last.is_empty() || !args.is_empty() {
            args.push(last.to_string());
        }
        self.i += 1;
        let mut call = Syscall {
            name,
            args,
            ret: None,
            errno: None,
            end: blocking_end,
        };
        if self.eat("=") {
            self.ws();
            if self.rest().starts_with("...") {
                return Ok(EventKind::Syscall(call));
            }
            let neg = self.eat("-");
            let v: i64 = self.number("return value")?;
            call.ret = Some(if neg { -v } else { v });
            let e = self.word().to_string();
            if !e.is_empty() {
                call.errno = Some(e);
            }
            // The "(text)" after an errno is a comment.
        }
        Ok(EventKind::Syscall(call))
    }
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("end of line")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_common_lines() {
        let s = parse(
            "// comment\n`../common/defaults.sh`\n\
             0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
             +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n\
             +0 > S. 0:0(0) ack 1 <...>\n\
             +.1 < . 1:1(0) ack 1 win 257 <sack 1:1001 2001:3001,nop,nop>\n\
             0.1~0.2 > P. 1:1001(1000) ack 1\n\
             +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
             +0 %{ assert tcpi_ca_state == 0\n}%\n\
             +0...0.1 read(4, ..., 1000) = 1000\n",
        )
        .unwrap();
        assert_eq!(s.events.len(), 9);
        assert_eq!(
            s.events[0].kind,
            EventKind::Shell("../common/defaults.sh".into())
        );
        assert_eq!(s.events[2].time, Time::Rel(0));
        let EventKind::Inbound(p) = &s.events[2].kind else {
            panic!()
        };
        assert_eq!(p.flags, flag::SYN);
        assert_eq!(p.win, Some(32792));
        assert_eq!(
            p.options,
            Options::List(vec![
                TcpOpt::Mss(1000),
                TcpOpt::SackOk,
                TcpOpt::Nop,
                TcpOpt::Nop,
                TcpOpt::Nop,
                TcpOpt::WScale(7)
            ])
        );
        assert_eq!(s.events[4].time, Time::Rel(100_000));
        assert_eq!(s.events[5].time, Time::AbsRange(100_000, 200_000));
        let EventKind::Syscall(c) = &s.events[6].kind else {
            panic!()
        };
        assert_eq!(c.args, ["3", "...", "..."]);
        assert_eq!((c.ret, c.errno.as_deref()), (Some(-1), Some("EINPROGRESS")));
        assert!(matches!(s.events[7].kind, EventKind::Python(_)));
        let EventKind::Syscall(c) = &s.events[8].kind else {
            panic!()
        };
        assert_eq!(c.end, Some(100_000));
    }

    #[test]
    fn fast_open_options() {
        let s = parse(
            "0 < S 0:0(0) win 1 <mss 1460,FO,nop,nop>\n\
             +0 > S. 0:0(0) ack 1 <FO abcd1234,nop,nop>\n\
             +0 < S 0:0(0) win 1 <FOEXP 0011223344556677>\n",
        )
        .unwrap();
        let opts = |i: usize| match &s.events[i].kind {
            EventKind::Inbound(p) | EventKind::Outbound(p) => p.options.clone(),
            _ => panic!("a packet"),
        };
        let Options::List(l) = opts(0) else { panic!() };
        assert_eq!(
            l[1],
            TcpOpt::FastOpen {
                exp: false,
                cookie: vec![]
            }
        );
        let Options::List(l) = opts(1) else { panic!() };
        assert_eq!(l[0].to_string(), "FO abcd1234");
        let Options::List(l) = opts(2) else { panic!() };
        assert_eq!(l[0].to_string(), "FOEXP 0011223344556677");
        for bad in ["FO abc", "FO xyz1", &format!("FO {}", "00".repeat(37))] {
            let e = parse(&format!("0 < S 0:0(0) win 1 <{bad}>\n")).unwrap_err();
            assert!(e.msg.contains("Fast Open cookie"), "{bad}: {e}");
        }
    }

    #[test]
    fn errors_name_line_and_column() {
        let e =
            parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < S 0:0(0) wn 5\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 15), "{e}");
        assert!(e.msg.contains("\"wn\""), "{e}");
        let e = parse("+0 < Q 0:0(0)\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 6), "{e}");
        let e = parse("+0 < S 0:5(0)\n").unwrap_err();
        assert!(e.msg.contains("inconsistent"), "{e}");
    }
}
