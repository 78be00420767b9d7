//! The uTLS endpoint: rustls's unbuffered handshake, then the hand-over of the traffic
//! secrets (`dangerous_into_kernel_connection`) to brisk's record layer
//! ([`super::receiver`], [`super::sender`]); post-handshake messages (tickets,
//! KeyUpdate, RFC 8446 §4.6) and alerts in order; glue to any [`ByteStream`].

use super::receiver::{RecordReceiver, Step, SuiteShape};
use super::record::{self, Header, MAX_CIPHERTEXT};
use super::sender::RecordSender;
use super::{Limits, Record, UtlsCounters, UtlsError};
use brisk_tcp::stream::ByteStream;
use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::crypto::cipher::{MessageDecrypter, MessageEncrypter};
use rustls::kernel::KernelConnection;
use rustls::pki_types::ServerName;
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::{ConnectionState, EncodeError, EncodeTlsData};
use rustls::{ClientConfig, ConnectionTrafficSecrets, ServerConfig, SupportedCipherSuite};
use std::io;
use std::sync::Arc;

enum Unbuffered {
    Client(UnbufferedClientConnection),
    Server(UnbufferedServerConnection),
}

enum Kernel {
    Client(KernelConnection<ClientConnectionData>),
    Server(KernelConnection<ServerConnectionData>),
}

impl Kernel {
    fn update_rx(&mut self) -> Result<ConnectionTrafficSecrets, rustls::Error> {
        match self {
            Kernel::Client(k) => k.update_rx_secret(),
            Kernel::Server(k) => k.update_rx_secret(),
        }
        .map(|(_, s)| s)
    }

    fn update_tx(&mut self) -> Result<ConnectionTrafficSecrets, rustls::Error> {
        match self {
            Kernel::Client(k) => k.update_tx_secret(),
            Kernel::Server(k) => k.update_tx_secret(),
        }
        .map(|(_, s)| s)
    }
}

struct Open {
    kernel: Kernel,
    suite: SupportedCipherSuite,
    rx: RecordReceiver,
    tx: RecordSender,
    /// A post-handshake handshake message in pieces.
    hs_msg: Vec<u8>,
}

enum State {
    Handshake(Box<Unbuffered>),
    Open(Box<Open>),
    Failed,
}

/// A uTLS endpoint (client or server), sans-IO.
pub struct Utls {
    state: State,
    limits: Limits,
    /// Bytes to send (`out[sent..]` still to go).
    out: Vec<u8>,
    sent: usize,
    /// During the handshake: in-order bytes not yet consumed by rustls, starting at
    /// stream offset `hs_base`; the first `fed` of them have been given to rustls.
    hs_in: Vec<u8>,
    hs_base: u64,
    fed: usize,
    ooo_before_keys: u64,
    peer_closed: bool,
    close_sent: bool,
}

/// Bytes of handshake records buffered before giving up.
const MAX_HANDSHAKE_BYTES: usize = 256 << 10;

impl Utls {
    /// A client: the ClientHello is ready in [`outgoing`](Self::outgoing) at once.
    /// `config.enable_secret_extraction` must be true.
    pub fn client(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        limits: Limits,
    ) -> Result<Self, UtlsError> {
        limits.check()?;
        if !config.enable_secret_extraction {
            return Err(UtlsError::Unexpected(
                "ClientConfig without enable_secret_extraction",
            ));
        }
        let conn = UnbufferedClientConnection::new(config, name)?;
        Self::start(Unbuffered::Client(conn), limits)
    }

    /// A server. `config.enable_secret_extraction` must be true.
    pub fn server(config: Arc<ServerConfig>, limits: Limits) -> Result<Self, UtlsError> {
        limits.check()?;
        if !config.enable_secret_extraction {
            return Err(UtlsError::Unexpected(
                "ServerConfig without enable_secret_extraction",
            ));
        }
        let conn = UnbufferedServerConnection::new(config)?;
        Self::start(Unbuffered::Server(conn), limits)
    }

    fn start(conn: Unbuffered, limits: Limits) -> Result<Self, UtlsError> {
        let mut u = Utls {
            state: State::Handshake(Box::new(conn)),
            limits,
            out: Vec::new(),
            sent: 0,
            hs_in: Vec::new(),
            hs_base: 0,
            fed: 0,
            ooo_before_keys: 0,
            peer_closed: false,
            close_sent: false,
        };
        u.guard(|u| u.handshake())?;
        Ok(u)
    }

    pub fn is_handshaking(&self) -> bool {
        matches!(self.state, State::Handshake(_))
    }

    /// The peer sent close_notify.
    pub fn peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// The negotiated suite, once the handshake is done.
    pub fn cipher_suite(&self) -> Option<SupportedCipherSuite> {
        match &self.state {
            State::Open(o) => Some(o.suite),
            _ => None,
        }
    }

    pub fn counters(&self) -> UtlsCounters {
        let mut c = match &self.state {
            State::Open(o) => o.rx.counters,
            _ => UtlsCounters::default(),
        };
        c.ooo_bytes_before_keys = self.ooo_before_keys;
        c
    }

    /// Records and bytes sealed by the sender.
    pub fn sent_records(&self) -> (u64, u64) {
        match &self.state {
            State::Open(o) => (o.tx.records, o.tx.bytes),
            _ => (0, 0),
        }
    }

    /// Out-of-order bytes held and in-order bytes buffered (the receiver's memory).
    pub fn held_bytes(&self) -> (u64, usize) {
        match &self.state {
            State::Open(o) => o.rx.held_bytes(),
            _ => (0, self.hs_in.len()),
        }
    }

    /// Bytes waiting to be sent.
    pub fn outgoing(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// Marks `n` outgoing bytes as sent.
    pub fn consume_outgoing(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.out.len());
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Seals `data` as application-data records (one record per 2^14 bytes) into the
    /// outgoing bytes. One datagram of at most 2^14 bytes is one record.
    pub fn send(&mut self, data: &[u8]) -> Result<(), UtlsError> {
        match &mut self.state {
            State::Open(o) => o.tx.seal(record::APPLICATION_DATA, data, &mut self.out),
            State::Handshake(_) => Err(UtlsError::Handshaking),
            State::Failed => Err(UtlsError::Failed),
        }
    }

    /// Queues close_notify (once).
    pub fn close(&mut self) -> Result<(), UtlsError> {
        if self.close_sent {
            return Ok(());
        }
        match &mut self.state {
            State::Open(o) => o.tx.seal(record::ALERT, &[1, 0], &mut self.out)?,
            State::Handshake(_) => return Err(UtlsError::Handshaking),
            State::Failed => return Err(UtlsError::Failed),
        }
        self.close_sent = true;
        Ok(())
    }

    /// In-order bytes at stream offset `offset`: drives the handshake, then delivers
    /// application-data records in order (skipping those delivered early). An error is
    /// fatal for the connection, as in TLS.
    pub fn push_in_order(
        &mut self,
        offset: u64,
        data: &[u8],
        deliver: &mut dyn FnMut(Record<'_>),
    ) -> Result<(), UtlsError> {
        self.guard(|u| {
            if let State::Handshake(_) = u.state {
                let end = u.hs_base + u.hs_in.len() as u64;
                if offset > end {
                    return Err(UtlsError::Gap {
                        expected: end,
                        got: offset,
                    });
                }
                let skip = ((end - offset) as usize).min(data.len());
                u.hs_in.extend_from_slice(&data[skip..]);
                u.handshake()?;
                if let State::Handshake(_) = u.state {
                    return Ok(());
                }
            } else {
                match &mut u.state {
                    State::Open(o) => o.rx.push_in_order(offset, data)?,
                    _ => return Err(UtlsError::Failed),
                }
            }
            u.walk(deliver)
        })
    }

    /// Out-of-order bytes at stream offset `offset` (uTCP's early reads): delivers the
    /// application-data records they complete that authenticate. Never an error: what
    /// is not delivered now comes again in order.
    pub fn push_out_of_order(
        &mut self,
        offset: u64,
        data: &[u8],
        deliver: &mut dyn FnMut(Record<'_>),
    ) {
        match &mut self.state {
            State::Open(o) if !self.peer_closed => o.rx.push_out_of_order(offset, data, deliver),
            _ => self.ooo_before_keys += data.len() as u64,
        }
    }

    /// Runs `f`; an error leaves the connection failed.
    fn guard(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<(), UtlsError>,
    ) -> Result<(), UtlsError> {
        if let State::Failed = self.state {
            return Err(UtlsError::Failed);
        }
        let r = f(self);
        if r.is_err() {
            self.state = State::Failed;
        }
        r
    }

    /// Feeds rustls whole records, one at a time (more only while a handshake message
    /// spans records), so that it never reads past the end of the handshake; converts
    /// to the record layer once the handshake is complete.
    fn handshake(&mut self) -> Result<(), UtlsError> {
        loop {
            let State::Handshake(conn) = &mut self.state else {
                return Ok(());
            };
            let (discard, step, handshaking) = match &mut **conn {
                Unbuffered::Client(c) => {
                    let (d, s) = drive(
                        c.process_tls_records(&mut self.hs_in[..self.fed]),
                        &mut self.out,
                    );
                    (d, s, c.is_handshaking())
                }
                Unbuffered::Server(c) => {
                    let (d, s) = drive(
                        c.process_tls_records(&mut self.hs_in[..self.fed]),
                        &mut self.out,
                    );
                    (d, s, c.is_handshaking())
                }
            };
            self.hs_in.drain(..discard);
            self.hs_base += discard as u64;
            self.fed -= discard;
            match step? {
                HsStep::Progress => continue,
                HsStep::Traffic if !handshaking => return self.open(),
                HsStep::Blocked | HsStep::Traffic => {
                    let Some(h) = Header::parse(&self.hs_in[self.fed..]) else {
                        return self.check_hs_size();
                    };
                    if h.len > MAX_CIPHERTEXT {
                        return Err(UtlsError::RecordTooLong {
                            offset: self.hs_base + self.fed as u64,
                            len: h.len,
                        });
                    }
                    if self.hs_in.len() - self.fed < h.wire_len() {
                        return self.check_hs_size();
                    }
                    self.fed += h.wire_len();
                }
            }
        }
    }

    fn check_hs_size(&self) -> Result<(), UtlsError> {
        if self.hs_in.len() > MAX_HANDSHAKE_BYTES {
            return Err(UtlsError::HandshakeTooLong {
                len: self.hs_in.len(),
                max: MAX_HANDSHAKE_BYTES,
            });
        }
        Ok(())
    }

    /// Handshake complete: takes the traffic secrets and starts the record layer at the
    /// first byte rustls did not consume.
    fn open(&mut self) -> Result<(), UtlsError> {
        if self.fed != 0 {
            return Err(UtlsError::Unexpected("handshake ended inside a fed record"));
        }
        let State::Handshake(conn) = std::mem::replace(&mut self.state, State::Failed) else {
            return Err(UtlsError::Failed);
        };
        let (secrets, kernel) = match *conn {
            Unbuffered::Client(c) => {
                let (s, k) = c.dangerous_into_kernel_connection()?;
                (s, Kernel::Client(k))
            }
            Unbuffered::Server(c) => {
                let (s, k) = c.dangerous_into_kernel_connection()?;
                (s, Kernel::Server(k))
            }
        };
        let suite = match &kernel {
            Kernel::Client(k) => k.negotiated_cipher_suite(),
            Kernel::Server(k) => k.negotiated_cipher_suite(),
        };
        let (rx_seq, rx_secret) = secrets.rx;
        let (tx_seq, tx_secret) = secrets.tx;
        let shape = SuiteShape {
            tls13: matches!(suite, SupportedCipherSuite::Tls13(_)),
            explicit_nonce: matches!(suite, SupportedCipherSuite::Tls12(_)) && is_gcm(&rx_secret),
            min_body: match suite {
                // Inner content type + 16-byte tag.
                SupportedCipherSuite::Tls13(_) => 17,
                // Explicit nonce + tag; ChaCha20-Poly1305 has no explicit nonce.
                SupportedCipherSuite::Tls12(_) if is_gcm(&rx_secret) => 24,
                SupportedCipherSuite::Tls12(_) => 16,
            },
        };
        let limit = match suite {
            SupportedCipherSuite::Tls12(s) => s.common.confidentiality_limit,
            SupportedCipherSuite::Tls13(s) => s.common.confidentiality_limit,
        };
        let mut rx = RecordReceiver::new(
            self.limits,
            shape,
            decrypter(suite, rx_secret),
            rx_seq,
            self.hs_base,
        );
        rx.push_in_order(self.hs_base, &self.hs_in)?;
        self.hs_in = Vec::new();
        self.state = State::Open(Box::new(Open {
            kernel,
            suite,
            rx,
            tx: RecordSender::new(encrypter(suite, tx_secret), tx_seq, limit),
            hs_msg: Vec::new(),
        }));
        Ok(())
    }

    /// The in-order walk: delivers records, handles post-handshake messages and alerts.
    fn walk(&mut self, deliver: &mut dyn FnMut(Record<'_>)) -> Result<(), UtlsError> {
        let State::Open(o) = &mut self.state else {
            return Ok(());
        };
        while !self.peer_closed {
            match o.rx.next_in_order(deliver)? {
                Step::NeedMore => break,
                Step::AppData => {}
                Step::Control(record::ALERT, m) => match m[..] {
                    [_, 0] => self.peer_closed = true,
                    [_, 90] => {} // user_canceled: a close_notify follows
                    [level, description] => return Err(UtlsError::Alert { level, description }),
                    _ => return Err(UtlsError::Unexpected("malformed alert")),
                },
                Step::Control(record::HANDSHAKE, m) => {
                    o.hs_msg.extend_from_slice(&m);
                    post_handshake(o, &self.limits, &mut self.out)?;
                }
                Step::Control(record::CHANGE_CIPHER_SPEC, _) => {
                    return Err(UtlsError::Unexpected(
                        "change_cipher_spec after the handshake",
                    ))
                }
                Step::Control(_, _) => return Err(UtlsError::Unexpected("record content type")),
            }
        }
        Ok(())
    }

    /// Reads once from `s` (unordered if it can), feeds the bytes in, and writes what
    /// is outgoing. `Ok(false)`: nothing to read now (or the end of the stream).
    pub fn poll_once<S: ByteStream + ?Sized>(
        &mut self,
        s: &mut S,
        buf: &mut [u8],
        deliver: &mut dyn FnMut(Record<'_>),
    ) -> io::Result<bool> {
        let Some(r) = s.read_unordered(buf)? else {
            self.flush(s)?;
            return Ok(false);
        };
        if r.len == 0 {
            self.flush(s)?;
            return Ok(false);
        }
        let data = &buf[..r.len.min(buf.len())];
        if r.in_order {
            self.push_in_order(r.offset, data, deliver)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        } else {
            self.push_out_of_order(r.offset, data, deliver);
        }
        self.flush(s)?;
        Ok(true)
    }

    /// Writes outgoing bytes to `s`. `Ok(true)`: nothing is left.
    pub fn flush<S: ByteStream + ?Sized>(&mut self, s: &mut S) -> io::Result<bool> {
        while !self.outgoing().is_empty() {
            let n = s.write(self.outgoing())?;
            if n == 0 {
                return Ok(false);
            }
            self.consume_outgoing(n);
        }
        Ok(true)
    }
}

/// Handles complete post-handshake handshake messages in `o.hs_msg` (RFC 8446 §4.6).
fn post_handshake(o: &mut Open, limits: &Limits, out: &mut Vec<u8>) -> Result<(), UtlsError> {
    loop {
        let Some(&[typ, a, b, c]) = o
            .hs_msg
            .get(..4)
            .map(|h| <&[u8; 4]>::try_from(h).expect("4 bytes"))
        else {
            return Ok(());
        };
        let len = u32::from_be_bytes([0, a, b, c]) as usize;
        if len > limits.max_handshake_message {
            return Err(UtlsError::HandshakeTooLong {
                len,
                max: limits.max_handshake_message,
            });
        }
        if o.hs_msg.len() < 4 + len {
            return Ok(());
        }
        let body: Vec<u8> = o.hs_msg.drain(..4 + len).skip(4).collect();
        match (typ, &o.kernel) {
            // NewSessionTicket: rustls stores it for resumption.
            (4, Kernel::Client(_)) => {
                if let Kernel::Client(k) = &mut o.kernel {
                    k.handle_new_session_ticket(&body)?;
                }
                o.rx.counters.tickets += 1;
            }
            // KeyUpdate: new receive keys; answer with ours if asked.
            (24, _) if matches!(o.suite, SupportedCipherSuite::Tls13(_)) => {
                let request = match body[..] {
                    [r @ (0 | 1)] => r,
                    _ => return Err(UtlsError::Unexpected("malformed KeyUpdate")),
                };
                let rx = o.kernel.update_rx()?;
                o.rx.rekey(decrypter(o.suite, rx));
                o.rx.counters.key_updates += 1;
                if request == 1 {
                    o.tx.seal(record::HANDSHAKE, &[24, 0, 0, 1, 0], out)?;
                    let tx = o.kernel.update_tx()?;
                    o.tx.rekey(encrypter(o.suite, tx));
                }
            }
            // TLS 1.2 HelloRequest: renegotiation is declined by ignoring it (RFC 5246 §7.4.1.1).
            (0, Kernel::Client(_)) if matches!(o.suite, SupportedCipherSuite::Tls12(_)) => {}
            _ => return Err(UtlsError::Unexpected("post-handshake handshake message")),
        }
    }
}

fn is_gcm(s: &ConnectionTrafficSecrets) -> bool {
    matches!(
        s,
        ConnectionTrafficSecrets::Aes128Gcm { .. } | ConnectionTrafficSecrets::Aes256Gcm { .. }
    )
}

fn key_iv(
    s: ConnectionTrafficSecrets,
) -> (
    rustls::crypto::cipher::AeadKey,
    rustls::crypto::cipher::Iv,
    bool,
) {
    match s {
        ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (key, iv, true),
        ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => (key, iv, false),
        // non_exhaustive upstream; rustls's own providers produce only the above.
        #[allow(unreachable_patterns)]
        _ => unreachable!("rustls produced an unknown traffic secret kind"),
    }
}

/// The suite's record decrypter. For TLS 1.2 GCM the 12-byte `iv` is the 4-byte
/// implicit salt and the 8-byte explicit part (rustls's `extract_keys`).
fn decrypter(
    suite: SupportedCipherSuite,
    s: ConnectionTrafficSecrets,
) -> Box<dyn MessageDecrypter> {
    let (key, iv, gcm) = key_iv(s);
    match suite {
        SupportedCipherSuite::Tls13(t) => t.aead_alg.decrypter(key, iv),
        SupportedCipherSuite::Tls12(t) if gcm => t.aead_alg.decrypter(key, &iv.as_ref()[..4]),
        SupportedCipherSuite::Tls12(t) => t.aead_alg.decrypter(key, iv.as_ref()),
    }
}

fn encrypter(
    suite: SupportedCipherSuite,
    s: ConnectionTrafficSecrets,
) -> Box<dyn MessageEncrypter> {
    let (key, iv, gcm) = key_iv(s);
    match suite {
        SupportedCipherSuite::Tls13(t) => t.aead_alg.encrypter(key, iv),
        SupportedCipherSuite::Tls12(t) if gcm => {
            t.aead_alg
                .encrypter(key, &iv.as_ref()[..4], &iv.as_ref()[4..])
        }
        SupportedCipherSuite::Tls12(t) => t.aead_alg.encrypter(key, iv.as_ref(), &[]),
    }
}

enum HsStep {
    Progress,
    Blocked,
    Traffic,
}

/// One state of rustls's unbuffered handshake: encodes what it wants sent.
fn drive<D>(
    st: rustls::unbuffered::UnbufferedStatus<'_, '_, D>,
    out: &mut Vec<u8>,
) -> (usize, Result<HsStep, UtlsError>) {
    let r = match st.state {
        Err(e) => Err(e.into()),
        Ok(ConnectionState::EncodeTlsData(mut e)) => {
            encode_all(&mut e, out).map(|()| HsStep::Progress)
        }
        Ok(ConnectionState::TransmitTlsData(t)) => {
            t.done();
            Ok(HsStep::Progress)
        }
        Ok(ConnectionState::BlockedHandshake) => Ok(HsStep::Blocked),
        Ok(ConnectionState::WriteTraffic(_)) => Ok(HsStep::Traffic),
        Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => {
            Err(UtlsError::Unexpected("close during the handshake"))
        }
        Ok(_) => Err(UtlsError::Unexpected(
            "application data during the handshake",
        )),
    };
    (st.discard, r)
}

fn encode_all<D>(e: &mut EncodeTlsData<'_, D>, out: &mut Vec<u8>) -> Result<(), UtlsError> {
    let start = out.len();
    out.resize(start + 4096, 0);
    loop {
        match e.encode(&mut out[start..]) {
            Ok(n) => {
                out.truncate(start + n);
                return Ok(());
            }
            Err(EncodeError::InsufficientSize(s)) => out.resize(start + s.required_size, 0),
            Err(other) => {
                out.truncate(start);
                return Err(UtlsError::Tls(other.to_string()));
            }
        }
    }
}
