//! HTTPS for the satellite page loads ([`crate::sat_web`]): rustls over brisk's byte
//! stream, deterministic (same seed = same bytes on the wire).
//!
//! All the TLS is rustls's (RFC 5246 / RFC 8446: record layer, handshakes, session
//! resumption by session ID and by TLS 1.3 ticket, 0-RTT early data, ALPN); brisk
//! only carries its bytes. What makes it deterministic, following brisk-minion's uTLS
//! (which runs rustls over any `ByteStream`) and going further, because a simulated
//! page load must give the same bytes for the same seed:
//! - randomness (client and server randoms, session IDs, TLS 1.3 ticket IDs and age
//!   offsets) comes from a ChaCha8 stream seeded by the run ([`Scope`]), through
//!   rustls's `SecureRandom` hook;
//! - the key share: ring generates ECDHE key shares only from the OS, so the one
//!   group offered is X25519 ([`SeededX25519`]) with its secret drawn from the same
//!   seeded stream and the arithmetic done by `x25519-dalek`;
//! - the certificates are Ed25519 (a root, an intermediate, a leaf for
//!   `www.example.com`), whose signatures are deterministic (RFC 8032), from fixed
//!   key seeds; the server sends the leaf and the intermediate;
//! - rustls's clock is the simulator's virtual clock ([`VirtualClock`]), so ticket
//!   ages and certificate validity are in virtual time.
//!
//! rustls's buffered `ClientConnection` / `ServerConnection` are used (not the
//! unbuffered API uTLS needs for its own record layer): the page app needs plain TLS,
//! including early data on both sides and the server's half-RTT data (RFC 8446 §2.3
//! and App. E.5), which the buffered API offers directly.

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, GetRandomFailed, SecureRandom, SharedSecret,
    SupportedKxGroup,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ServerSessionMemoryCache;
use rustls::time_provider::TimeProvider;
use rustls::{
    ClientConfig, ClientConnection, Connection, NamedGroup, RootCertStore, ServerConfig,
    ServerConnection, SupportedProtocolVersion,
};
use std::cell::RefCell;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The server's name in its certificate and the client's SNI.
pub const SERVER_NAME: &str = "www.example.com";
/// Virtual time zero on rustls's clock: 2026-01-01T00:00:00Z.
const EPOCH_UNIX_S: u64 = 1_767_225_600;
/// Most early data the server accepts per connection (RFC 8446 §4.6.1
/// `max_early_data_size`); a page's first flight (requests of a few hundred bytes) is
/// far below it.
pub const MAX_EARLY_DATA: u32 = 64 * 1024;
/// TLS 1.3 tickets the server sends after each handshake (rustls's default, 2).
pub const TLS13_TICKETS: usize = 2;

thread_local! {
    /// The running page load's random stream (one run per thread at a time).
    static RNG: RefCell<Option<ChaCha8Rng>> = const { RefCell::new(None) };
}

/// While alive, rustls on this thread draws its randomness from `seed`'s stream.
pub struct Scope(());

impl Scope {
    pub fn new(seed: u64) -> Scope {
        RNG.with(|r| *r.borrow_mut() = Some(ChaCha8Rng::seed_from_u64(seed)));
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        RNG.with(|r| *r.borrow_mut() = None);
    }
}

fn fill(buf: &mut [u8]) -> Result<(), GetRandomFailed> {
    RNG.with(|r| match r.borrow_mut().as_mut() {
        Some(rng) => {
            rng.fill_bytes(buf);
            Ok(())
        }
        // Outside a run there is no randomness: rustls fails the operation.
        None => Err(GetRandomFailed),
    })
}

/// rustls's randomness from the run's seeded stream.
#[derive(Debug)]
struct SeededRandom;

impl SecureRandom for SeededRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        fill(buf)
    }
}

/// X25519 (RFC 7748) with the ephemeral secret from the seeded stream.
#[derive(Debug)]
struct SeededX25519;

struct X25519Share {
    secret: x25519_dalek::StaticSecret,
    public: [u8; 32],
}

impl SupportedKxGroup for SeededX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        let mut k = [0u8; 32];
        fill(&mut k).map_err(|_| rustls::Error::FailedToGetRandomBytes)?;
        let secret = x25519_dalek::StaticSecret::from(k);
        let public = x25519_dalek::PublicKey::from(&secret).to_bytes();
        Ok(Box::new(X25519Share { secret, public }))
    }
    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

impl ActiveKeyExchange for X25519Share {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, rustls::Error> {
        let peer: [u8; 32] = peer
            .try_into()
            .map_err(|_| rustls::Error::from(rustls::PeerMisbehaved::InvalidKeyShare))?;
        let shared = self
            .secret
            .diffie_hellman(&x25519_dalek::PublicKey::from(peer));
        // RFC 7748 §6.1 / RFC 8446 §7.4.2: an all-zero result is refused.
        if !shared.was_contributory() {
            return Err(rustls::PeerMisbehaved::InvalidKeyShare.into());
        }
        Ok(SharedSecret::from(&shared.as_bytes()[..]))
    }
    fn pub_key(&self) -> &[u8] {
        &self.public
    }
    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

static SEEDED_RANDOM: SeededRandom = SeededRandom;
static SEEDED_X25519: SeededX25519 = SeededX25519;

fn provider() -> Arc<CryptoProvider> {
    let mut p = rustls::crypto::ring::default_provider();
    p.kx_groups = vec![&SEEDED_X25519];
    p.secure_random = &SEEDED_RANDOM;
    Arc::new(p)
}

/// The simulator's clock as rustls's wall clock.
#[derive(Debug, Default)]
pub struct VirtualClock(AtomicU64);

impl VirtualClock {
    pub fn set(&self, now_ns: u64) {
        self.0.store(now_ns, Ordering::Relaxed);
    }
}

impl TimeProvider for VirtualClock {
    fn current_time(&self) -> Option<UnixTime> {
        let ns = self.0.load(Ordering::Relaxed);
        Some(UnixTime::since_unix_epoch(std::time::Duration::from_nanos(
            EPOCH_UNIX_S * 1_000_000_000 + ns,
        )))
    }
}

/// PKCS #8 v1 for an Ed25519 private key (RFC 8410 §7): a fixed prefix and the seed.
fn ed25519_pkcs8(seed: [u8; 32]) -> Vec<u8> {
    let mut v = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    v.extend_from_slice(&seed);
    v
}

struct Pki {
    root: CertificateDer<'static>,
    chain: Vec<CertificateDer<'static>>,
    key: Vec<u8>,
    /// The same chain (leaf first) and key as PEM, for a Linux server (real packets).
    chain_pem: String,
    key_pem: String,
}

/// The server's certificate chain (leaf, intermediate) and private key as PEM: what
/// a Linux TLS server presents to rustls clients made by [`TlsPair`].
pub fn server_pem() -> (&'static str, &'static str) {
    let p = pki();
    (&p.chain_pem, &p.key_pem)
}

/// The certificates: built once, the same bytes every time.
fn pki() -> &'static Pki {
    static P: OnceLock<Pki> = OnceLock::new();
    P.get_or_init(|| {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        // NOTE(unreachable): fixed, valid inputs; a failure is a bug here.
        let key = |b: u8| {
            KeyPair::try_from(ed25519_pkcs8([b; 32]).as_slice())
                .unwrap_or_else(|e| unreachable!("Ed25519 key: {e}"))
        };
        let params = |names: Vec<String>, cn: &str, ca: bool| {
            let mut p = CertificateParams::new(names)
                .unwrap_or_else(|e| unreachable!("certificate params: {e}"));
            p.distinguished_name.push(DnType::OrganizationName, "brisk");
            p.distinguished_name.push(DnType::CommonName, cn);
            if ca {
                p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            }
            p
        };
        let (rk, ik, lk) = (key(1), key(2), key(3));
        let root = params(vec![], "brisk sat-web root", true)
            .self_signed(&rk)
            .unwrap_or_else(|e| unreachable!("root: {e}"));
        let inter = params(vec![], "brisk sat-web intermediate", true)
            .signed_by(&ik, &root, &rk)
            .unwrap_or_else(|e| unreachable!("intermediate: {e}"));
        let leaf = params(vec![SERVER_NAME.to_string()], SERVER_NAME, false)
            .signed_by(&lk, &inter, &ik)
            .unwrap_or_else(|e| unreachable!("leaf: {e}"));
        Pki {
            root: root.der().clone(),
            chain: vec![leaf.der().clone(), inter.der().clone()],
            key: lk.serialize_der(),
            chain_pem: leaf.pem() + &inter.pem(),
            key_pem: lk.serialize_pem(),
        }
    })
}

/// A page load's TLS: one client config (its session cache is the browser's) and one
/// server config (its session store is the server's), both on the run's clock.
pub struct TlsPair {
    pub client: Arc<ClientConfig>,
    pub server: Arc<ServerConfig>,
    pub clock: Arc<VirtualClock>,
}

impl TlsPair {
    /// `tls13`: TLS 1.3 only, else TLS 1.2 only; `early`: the client sends 0-RTT data
    /// when it holds a ticket that allows it; `alpn`: the client's offer, most
    /// preferred first (the server offers h2 and http/1.1).
    pub fn new(tls13: bool, early: bool, alpn: &[&[u8]]) -> Result<TlsPair, rustls::Error> {
        let v: &'static SupportedProtocolVersion = if tls13 {
            &rustls::version::TLS13
        } else {
            &rustls::version::TLS12
        };
        let clock = Arc::new(VirtualClock::default());
        let pki = pki();
        let mut roots = RootCertStore::empty();
        roots.add(pki.root.clone())?;
        let mut c = ClientConfig::builder_with_details(provider(), clock.clone())
            .with_protocol_versions(&[v])?
            .with_root_certificates(roots)
            .with_no_client_auth();
        c.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
        c.enable_early_data = early;
        let key = PrivateKeyDer::try_from(pki.key.clone())
            .map_err(|e| rustls::Error::General(e.to_string()))?;
        let mut s = ServerConfig::builder_with_details(provider(), clock.clone())
            .with_protocol_versions(&[v])?
            .with_no_client_auth()
            .with_single_cert(pki.chain.clone(), key)?;
        s.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        // Stateful resumption (session IDs, TLS 1.3 tickets that name a stored
        // session): its IDs come from the seeded stream, and 0-RTT needs a store that
        // takes each ticket once (RFC 8446 §8.1).
        s.session_storage = ServerSessionMemoryCache::new(1024);
        s.send_tls13_tickets = TLS13_TICKETS;
        if early {
            s.max_early_data_size = MAX_EARLY_DATA;
            // Answer early requests before the client's Finished (0.5-RTT data):
            // without it 0-RTT saves nothing.
            s.send_half_rtt_data = true;
        }
        Ok(TlsPair {
            client: Arc::new(c),
            server: Arc::new(s),
            clock,
        })
    }

    pub fn client_conn(&self) -> Result<ClientConnection, rustls::Error> {
        let name =
            ServerName::try_from(SERVER_NAME).map_err(|e| rustls::Error::General(e.to_string()))?;
        ClientConnection::new(self.client.clone(), name)
    }

    pub fn server_conn(&self) -> Result<ServerConnection, rustls::Error> {
        ServerConnection::new(self.server.clone())
    }

    /// A visit before the page (in memory, not over the path): a full handshake whose
    /// session the client caches and the server stores, as a returning browser has.
    pub fn prime(&self) -> Result<(), rustls::Error> {
        let io = |e: std::io::Error| rustls::Error::General(e.to_string());
        let mut ends: [Connection; 2] = [self.client_conn()?.into(), self.server_conn()?.into()];
        let mut buf = Vec::new();
        for _ in 0..16 {
            let mut moved = false;
            for from in 0..2 {
                buf.clear();
                while ends[from].wants_write() {
                    ends[from].write_tls(&mut buf).map_err(io)?;
                }
                let to = &mut ends[1 - from];
                let mut rd = &buf[..];
                while !rd.is_empty() {
                    moved = true;
                    to.read_tls(&mut rd).map_err(io)?;
                    to.process_new_packets()?;
                }
            }
            if !moved {
                return if ends.iter().any(|c| c.is_handshaking()) {
                    Err(rustls::Error::General("priming handshake stalled".into()))
                } else {
                    Ok(())
                };
            }
        }
        Err(rustls::Error::General(
            "priming handshake did not end".into(),
        ))
    }
}

/// Counters of a TLS session's bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireBytes {
    /// TLS bytes sent and received.
    pub sent: u64,
    pub received: u64,
    /// Application bytes sent and received (inside records).
    pub plain_sent: u64,
    pub plain_received: u64,
}

/// One end of a TLS connection between the page app and brisk's byte stream:
/// plaintext in and out, TLS bytes out in `wire` (written to the connection as its
/// send buffer takes them) and in through [`receive`](Session::receive).
pub struct Session {
    conn: Connection,
    /// TLS bytes to write to the connection (`wire[off..]`).
    pub wire: Vec<u8>,
    pub off: usize,
    pub bytes: WireBytes,
    /// Client: bytes sent as early data (re-sent after the handshake if refused).
    early: Vec<u8>,
    early_done: bool,
    /// Client: early data was sent and the server refused it.
    pub early_refused: bool,
    /// Bytes of TLS the server wrote in answer to the ClientHello (its first flight).
    pub first_flight: Option<u64>,
}

impl Session {
    pub fn new(conn: impl Into<Connection>) -> Session {
        let mut s = Session {
            conn: conn.into(),
            wire: Vec::new(),
            off: 0,
            bytes: WireBytes::default(),
            early: Vec::new(),
            early_done: false,
            early_refused: false,
            first_flight: None,
        };
        s.pull_wire();
        s
    }

    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// The client holds a ticket that allows early data (TLS 1.3, `enable_early_data`).
    pub fn can_send_early(&mut self) -> bool {
        match &mut self.conn {
            Connection::Client(c) => c.early_data().is_some(),
            Connection::Server(_) => false,
        }
    }

    pub fn handshake_kind(&self) -> Option<rustls::HandshakeKind> {
        self.conn.handshake_kind()
    }

    pub fn alpn(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    pub fn is_tls13(&self) -> bool {
        self.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
    }

    /// Client: whether the server took the early data (valid once the handshake is done).
    pub fn early_accepted(&self) -> bool {
        match &self.conn {
            Connection::Client(c) => c.is_early_data_accepted(),
            Connection::Server(_) => false,
        }
    }

    pub fn wire_pending(&self) -> bool {
        self.off < self.wire.len()
    }

    fn pull_wire(&mut self) {
        let before = self.wire.len();
        while self.conn.wants_write() {
            // NOTE(unreachable): writing to a Vec cannot fail.
            let _ = self.conn.write_tls(&mut self.wire);
        }
        self.bytes.sent += (self.wire.len() - before) as u64;
    }

    /// Plaintext to send. Before the handshake is over a client may send it as early
    /// data (`early`: as much as the ticket allows; the rest waits for the handshake,
    /// as rustls holds what is written before it).
    pub fn send(&mut self, data: &[u8], early: bool) {
        let mut rest = data;
        if early && !self.early_done {
            if let Connection::Client(c) = &mut self.conn {
                if let Some(mut e) = c.early_data() {
                    let n = e.write(rest).unwrap_or(0);
                    self.early.extend_from_slice(&rest[..n]);
                    rest = &rest[n..];
                }
            }
        }
        if !rest.is_empty() {
            // NOTE(unreachable): rustls's writer buffers; it fails only after close.
            let _ = self.conn.writer().write_all(rest);
        }
        self.bytes.plain_sent += data.len() as u64;
        self.pull_wire();
    }

    /// TLS bytes from the connection: hands up the plaintext they complete (early data
    /// first on a server), and queues what rustls answers. An error is fatal (TLS).
    pub fn receive(
        &mut self,
        mut data: &[u8],
        plain: &mut dyn FnMut(&[u8]),
    ) -> Result<(), rustls::Error> {
        self.bytes.received += data.len() as u64;
        let was_handshaking = self.conn.is_handshaking();
        let server_before = self.bytes.sent;
        let mut buf = [0u8; 16 * 1024];
        while !data.is_empty() {
            self.conn
                .read_tls(&mut data)
                .map_err(|e| rustls::Error::General(e.to_string()))?;
            self.conn.process_new_packets()?;
            if let Connection::Server(s) = &mut self.conn {
                if let Some(mut e) = s.early_data() {
                    while let Ok(n) = e.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        self.bytes.plain_received += n as u64;
                        plain(&buf[..n]);
                    }
                }
            }
            loop {
                match self.conn.reader().read(&mut buf) {
                    Ok(n) if n > 0 => {
                        self.bytes.plain_received += n as u64;
                        plain(&buf[..n]);
                    }
                    _ => break,
                }
            }
        }
        // Early data refused: the client sends it again, now protected by the
        // handshake's keys (what a browser does).
        if !self.early_done && !self.conn.is_handshaking() {
            self.early_done = true;
            if let Connection::Client(c) = &self.conn {
                if !self.early.is_empty() && !c.is_early_data_accepted() {
                    self.early_refused = true;
                    let e = std::mem::take(&mut self.early);
                    let _ = self.conn.writer().write_all(&e);
                }
            }
        }
        self.pull_wire();
        if was_handshaking
            && self.first_flight.is_none()
            && matches!(self.conn, Connection::Server(_))
        {
            self.first_flight = Some(self.bytes.sent - server_before);
        }
        Ok(())
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("handshaking", &self.conn.is_handshaking())
            .field("wire_pending", &(self.wire.len() - self.off))
            .field("bytes", &self.bytes)
            .finish()
    }
}
