//! MN-6 over real packets: brisk's uTLS (with uTCP's unordered receive) against an
//! unmodified OpenSSL 3 peer (Python's `ssl` module) in the Linux namespace, over Linux
//! TCP, through the emulated path with 1 % loss each way.
//!
//! Either Python serves and brisk connects as a uTLS client, or brisk listens as a
//! uTLS server and Python connects; data flows the same way. Python sends `N` datagrams, one
//! `sendall` (one TLS record) each; brisk delivers them, out of order where losses
//! let it, each once and intact. Then brisk sends `M` datagrams back (uTLS's sender is
//! plain TLS) and a close_notify; Python checks them. Both sides print a SHA-256 of
//! what they sent and received, and the digests must match. Run for TLS 1.2
//! (ECDHE-ECDSA-AES128-GCM-SHA256: explicit nonce = sequence number in OpenSSL) and
//! TLS 1.3 (TLS_AES_128_GCM_SHA256: sequence numbers inferred).
//!
//! Needs root, /dev/net/tun and python3 (skipped with a message otherwise).

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use brisk_emu::{BriskLab, BRISK_ADDR, KERNEL_ADDR};
use brisk_minion::utls::{Limits, Utls};
use common::*;
use sha2::{Digest, Sha256};

const IO_TIMEOUT: Duration = Duration::from_secs(60);
const N: u32 = 3000;
const M: u32 = 300;

/// Datagram `id` (the Python script builds the same bytes).
fn datagram(id: u32) -> Vec<u8> {
    let len = 100 + (id as usize * 53) % 1400;
    let mut d = id.to_be_bytes().to_vec();
    d.extend((4..len).map(|j| (id as usize * 31 + j * 7) as u8));
    d
}

const PEER: &str = r#"
import hashlib, socket, ssl, sys
cert, key, host, port, ver, n, m = sys.argv[1:8]
n, m = int(n), int(m)
def dgram(i):
    l = 100 + (i * 53) % 1400
    return i.to_bytes(4, 'big') + bytes(((i * 31 + j * 7) & 0xff) for j in range(4, l))
role = sys.argv[8]
if role == 'server':
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
else:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(cert)
if ver == '1.2':
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers('ECDHE-ECDSA-AES128-GCM-SHA256')
else:
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
if role == 'server':
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, int(port)))
    ls.listen(1)
    ls.settimeout(60)
    print('ready', flush=True)
    c, _ = ls.accept()
    c.settimeout(60)
    s = ctx.wrap_socket(c, server_side=True)
else:
    print('ready', flush=True)
    c = socket.create_connection((host, int(port)), timeout=60)
    s = ctx.wrap_socket(c, server_hostname='brisk-test')
print('version', s.version(), s.cipher()[0], flush=True)
sent = hashlib.sha256()
for i in range(n):
    d = dgram(i)
    sent.update(d)
    s.sendall(d)
got = b''
while True:
    try:
        b = s.recv(65536)
    except ssl.SSLZeroReturnError:
        break
    if not b:
        break
    got += b
want = b''.join(dgram(i) for i in range(m))
print('sent', sent.hexdigest(), flush=True)
print('received', hashlib.sha256(got).hexdigest(), 'ok' if got == want else 'MISMATCH', len(got), flush=True)
try:
    s.unwrap()
except Exception:
    pass
"#;

/// Kills (by its own pid) and reaps the peer we started, also on panic.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A temporary directory removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn have_python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import ssl"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: python3 with ssl is not installed");
    }
    ok
}

fn lab() -> BriskLab {
    lossy_lab(0.01, 40, 6, true, false)
}

fn client_config(
    cert: &rustls::pki_types::CertificateDer<'static>,
    v: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).unwrap();
    let mut c = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[v])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    c.enable_secret_extraction = true;
    Arc::new(c)
}

fn line(out: &mut impl BufRead, what: &str, child: &mut Child) -> String {
    let mut l = String::new();
    if out.read_line(&mut l).unwrap_or(0) == 0 {
        let mut err = String::new();
        if let Some(e) = child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        panic!("the Python peer ended before '{what}': {err}");
    }
    assert!(l.starts_with(what), "expected '{what}', got {l:?}");
    l.trim().to_string()
}

fn server_config(
    ck: &rcgen::CertifiedKey,
    v: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ServerConfig> {
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
        ck.key_pair.serialize_der(),
    ));
    let mut c = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[v])
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![ck.cert.der().clone()], key)
    .unwrap();
    c.enable_secret_extraction = true;
    Arc::new(c)
}

/// `brisk_server`: brisk listens as the uTLS server and Python connects; otherwise
/// Python listens and brisk connects as the uTLS client. Data flows the same way.
fn run(v: &'static rustls::SupportedProtocolVersion, ver: &str, port: u16, brisk_server: bool) {
    let dir =
        TempDir(std::env::temp_dir().join(format!("brisk-utls-{}-{port}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let ck = rcgen::generate_simple_self_signed(vec!["brisk-test".to_string()]).unwrap();
    let (cert_pem, key_pem) = (dir.0.join("cert.pem"), dir.0.join("key.pem"));
    std::fs::write(&cert_pem, ck.cert.pem()).unwrap();
    std::fs::write(&key_pem, ck.key_pair.serialize_pem()).unwrap();

    let lab = lab();
    let listener = brisk_server.then(|| lab.stack().listen(port).expect("brisk listens"));
    let (host, role) = if brisk_server {
        (BRISK_ADDR, "client")
    } else {
        (KERNEL_ADDR, "server")
    };
    let child = Command::new(brisk_emu::netns::ip_binary())
        .args(["netns", "exec", lab.kernel().name(), "python3", "-c", PEER])
        .args([cert_pem.to_str().unwrap(), key_pem.to_str().unwrap()])
        .args([&host.to_string(), &port.to_string(), ver])
        .args([N.to_string(), M.to_string(), role.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let mut guard = ChildGuard(child);
    let mut out = BufReader::new(guard.0.stdout.take().unwrap());
    line(&mut out, "ready", &mut guard.0);

    let (mut s, mut u) = match listener {
        Some(mut l) => {
            l.set_accept_timeout(Some(IO_TIMEOUT));
            let s = l.accept().expect("Python connects to brisk").0;
            let u = Utls::server(server_config(&ck, v), Limits::default()).unwrap();
            (s, u)
        }
        None => {
            let addr = SocketAddr::from((KERNEL_ADDR, port));
            let s = lab.stack().connect(addr).expect("brisk connects to Python");
            let name = rustls::pki_types::ServerName::try_from("brisk-test").unwrap();
            let u = Utls::client(client_config(ck.cert.der(), v), name, Limits::default()).unwrap();
            (s, u)
        }
    };
    brisk_timeouts(&mut s, IO_TIMEOUT);
    assert!(u.flush(&mut s).unwrap());
    let mut buf = vec![0u8; 64 * 1024];
    let mut got: Vec<Option<Vec<u8>>> = vec![None; N as usize];
    let mut delivered = 0u32;
    let end = Instant::now() + Duration::from_secs(100);
    while delivered < N {
        assert!(
            Instant::now() < end,
            "timed out with {delivered} of {N} delivered"
        );
        let more = u
            .poll_once(&mut s, &mut buf, &mut |r| {
                let id = u32::from_be_bytes(r.data[..4].try_into().unwrap());
                assert!(id < N, "unknown datagram {id}");
                assert_eq!(r.data, &datagram(id)[..], "datagram {id} intact");
                assert!(got[id as usize].is_none(), "datagram {id} twice");
                got[id as usize] = Some(r.data.to_vec());
                delivered += 1;
            })
            .expect("uTLS receive");
        assert!(more, "the stream ended with {delivered} of {N} delivered");
    }
    let version = line(&mut out, "version", &mut guard.0);
    let c = u.counters();
    for id in 0..M {
        u.send(&datagram(id)).unwrap();
    }
    u.close().unwrap();
    assert!(u.flush(&mut s).unwrap());
    brisk_tcp::stream::ByteStream::shutdown_write(&mut s).unwrap();

    let sent = line(&mut out, "sent", &mut guard.0);
    let mut h = Sha256::new();
    for d in got.iter().flatten() {
        h.update(d);
    }
    let ours = format!("sent {:x}", h.finalize());
    assert_eq!(
        sent, ours,
        "the bytes Python sent are the bytes brisk received"
    );
    let received = line(&mut out, "received", &mut guard.0);
    let mut h = Sha256::new();
    (0..M).for_each(|id| h.update(datagram(id)));
    let want = format!("received {:x} ok", h.finalize());
    assert!(
        received.starts_with(&want),
        "Python read brisk's records: {received}"
    );
    eprintln!(
        "uTLS {ver} ({version}, brisk is the {}): {N} datagrams Linux → brisk, {} out of order, {} candidates, {} trials, {} unauthenticated (not delivered); {M} back, Python's digest matches",
        if brisk_server { "server" } else { "client" },
        c.delivered_out_of_order, c.ooo_candidates, c.trials, c.ooo_unauthenticated
    );
    assert_eq!(c.delivered, u64::from(N));
    assert!(
        c.delivered_out_of_order > 0,
        "losses let brisk deliver records early: {c:?}"
    );
    drop(s);
    let rep = lab.stop().expect("emulator report");
    assert!(
        rep.forward.dropped_loss + rep.reverse.dropped_loss > 0,
        "the path lost packets"
    );
}

#[test]
fn utls_tls12_gcm_from_an_openssl_peer_over_real_packets() {
    if !lab_available("utls_tls12_gcm_from_an_openssl_peer_over_real_packets") || !have_python() {
        return;
    }
    run(&rustls::version::TLS12, "1.2", 5021, false);
}

#[test]
fn utls_tls12_gcm_server_from_an_openssl_client_over_real_packets() {
    if !lab_available("utls_tls12_gcm_server_from_an_openssl_client_over_real_packets")
        || !have_python()
    {
        return;
    }
    run(&rustls::version::TLS12, "1.2", 5023, true);
}

#[test]
fn utls_tls13_from_an_openssl_peer_over_real_packets() {
    if !lab_available("utls_tls13_from_an_openssl_peer_over_real_packets") || !have_python() {
        return;
    }
    run(&rustls::version::TLS13, "1.3", 5022, false);
}

#[test]
fn utls_tls13_server_from_an_openssl_client_over_real_packets() {
    if !lab_available("utls_tls13_server_from_an_openssl_client_over_real_packets")
        || !have_python()
    {
        return;
    }
    run(&rustls::version::TLS13, "1.3", 5024, true);
}
