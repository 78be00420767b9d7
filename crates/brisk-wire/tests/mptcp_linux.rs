//! brisk-wire against a live Linux MPTCP connection: `tests/mptcp/linux_capture.sh`
//! runs one between two network namespaces it creates (198.18.0.0/15; removed on exit)
//! with fresh random keys, and captures it; every MPTCP option Linux sent must parse,
//! re-emit byte for byte and fit its segment, and what brisk computes from the keys
//! must equal what Linux sent: the join token, the first DSN (IDSN + 1), both MP_JOIN
//! HMACs, the ADD_ADDR HMAC and the DSS checksum of every single-segment mapping.
//! A second run with DSS checksums off (22- and 26-byte options, which Linux pads
//! with two NOPs after them) checks every segment's whole option area: brisk parses
//! and re-emits it byte for byte, NOPs and their places included.
//!
//! Skips (passing, with a message) unless run as root with `ip mptcp`, dumpcap, tshark
//! and python3, on a kernel with MPTCP enabled.

use std::path::Path;
use std::process::Command;

use brisk_wire::mptcp::checksum::dss_checksum;
use brisk_wire::mptcp::{crypto, AddAddr, DataSeq, MpCapableForm, MpJoin, MptcpOption};
use brisk_wire::{Ecn, IpRepr, Ipv4Repr, TcpRepr, IPPROTO_TCP};

fn hex(s: &str) -> Vec<u8> {
    let s = s.trim();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn skip_reason() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root".into());
    }
    for (c, a) in [
        ("tshark", "--version"),
        ("dumpcap", "--version"),
        ("python3", "--version"),
    ] {
        if !have(c, a) {
            return Some(format!("{c} is not installed"));
        }
    }
    let ip_mptcp = Command::new("ip")
        .args(["mptcp", "limits", "show"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ip_mptcp {
        return Some("`ip mptcp` is not available".into());
    }
    let en = std::fs::read_to_string("/proc/sys/net/mptcp/enabled").unwrap_or_default();
    if en.trim() != "1" {
        return Some("net.mptcp.enabled is not 1".into());
    }
    None
}

/// The TCP option area split into `(kind, whole item)`.
fn items(opts: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            k => {
                let len = usize::from(*opts.get(i + 1).unwrap_or(&0));
                if len < 2 || i + len > opts.len() {
                    break;
                }
                out.push((k, &opts[i..i + len]));
                i += len;
            }
        }
    }
    out
}

/// Runs `linux_capture.sh` with `args` after the pcap path; returns tshark's fields
/// (frame, source port, flags, options, payload) per TCP segment, tab-separated.
fn capture(tag: &str, args: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("brisk-mptcp-linux-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("linux.pcapng");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mptcp/linux_capture.sh");
    let run = Command::new("bash")
        .arg(&script)
        .arg(&pcap)
        .args(args)
        .output()
        .expect("bash runs");
    assert!(
        run.status.success(),
        "capture failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-Y", "tcp", "-T", "fields", "-E", "separator=\t"])
        .args([
            "-e",
            "frame.number",
            "-e",
            "tcp.srcport",
            "-e",
            "tcp.flags",
            "-e",
            "tcp.options",
            "-e",
            "tcp.payload",
        ])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The option area brisk emits for a segment with Linux's option area `opts`, TCP
/// flags `flags` and `payload`, after parsing it.
fn reemit_option_area(opts: &[u8], flags: u16, payload: &[u8]) -> Vec<u8> {
    let mut seg = vec![0u8; 20];
    let offset_flags = (((20 + opts.len()) / 4) as u16) << 12 | flags;
    seg[12..14].copy_from_slice(&offset_flags.to_be_bytes());
    seg.extend_from_slice(opts);
    seg.extend_from_slice(payload);
    let tcp = TcpRepr::parse(&seg, None).expect("Linux's segment parses");
    let ip = IpRepr::V4(Ipv4Repr {
        src: std::net::Ipv4Addr::new(198, 18, 0, 1),
        dst: std::net::Ipv4Addr::new(198, 18, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 1,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    tcp.emit(&ip, &mut out);
    out[20..tcp.header_len()].to_vec()
}

#[test]
fn linux_mptcp_connection_options_and_crypto() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP linux_mptcp_connection_options_and_crypto: {why}");
        return;
    }
    let text = capture("csum", &[]);

    let (mut key_client, mut key_server) = (None, None);
    let (mut nonce_client, mut nonce_server) = (None, None);
    let (mut join_token, mut thmac, mut join_ack) = (None, None, None);
    let mut add_addr: Vec<AddAddr> = Vec::new();
    let mut first_client_dsn = None;
    let (mut options, mut checksums) = (0, 0);
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (frame, sport) = (f[0], f[1]);
        let flags = u16::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap();
        let (syn, ack, rst) = (flags & 2 != 0, flags & 0x10 != 0, flags & 4 != 0);
        let opts = hex(f.get(3).copied().unwrap_or(""));
        let payload = hex(f.get(4).copied().unwrap_or(""));
        let client = sport != "8080";
        assert_eq!(
            reemit_option_area(&opts, flags, &payload),
            opts,
            "frame {frame}: option area re-emitted differently"
        );
        for (kind, item) in items(&opts) {
            if kind != 30 {
                continue;
            }
            options += 1;
            let o = MptcpOption::parse(&item[2..])
                .unwrap_or_else(|e| panic!("frame {frame}: Linux's option {item:02x?}: {e}"));
            let mut buf = [0u8; 40];
            let n = o.emit(&mut buf).unwrap();
            assert_eq!(&buf[..n], item, "frame {frame}: re-emitted differently");
            assert!(
                o.fits_segment(syn, ack, rst, !payload.is_empty()),
                "frame {frame}: {o:?} on flags {flags:#x}"
            );
            match o {
                MptcpOption::MpCapable(c) => match c.form {
                    MpCapableForm::SynAck { sender_key } => key_server = Some(sender_key),
                    MpCapableForm::Ack {
                        sender_key,
                        receiver_key,
                    } => {
                        key_client = Some(sender_key);
                        assert_eq!(Some(receiver_key), key_server, "frame {frame}: echoed key");
                    }
                    // The client's first data before the server's first ACK of
                    // it: the mapping is implicit (DSN = IDSN + 1, subflow seq 1).
                    MpCapableForm::AckData {
                        sender_key,
                        data_len,
                        checksum,
                        ..
                    } => {
                        key_client = Some(sender_key);
                        assert_eq!(usize::from(data_len), payload.len(), "frame {frame}");
                        let dsn = crypto::idsn(sender_key).wrapping_add(1);
                        if first_client_dsn.is_none() {
                            first_client_dsn = Some(DataSeq::Bits64(dsn));
                        }
                        if let Some(c) = checksum {
                            assert_eq!(
                                dss_checksum(dsn, 1, data_len, &payload),
                                c,
                                "frame {frame}"
                            );
                            checksums += 1;
                        }
                    }
                    _ => {}
                },
                MptcpOption::MpJoin(MpJoin::Syn { token, nonce, .. }) => {
                    join_token = Some(token);
                    nonce_client = Some(nonce);
                }
                MptcpOption::MpJoin(MpJoin::SynAck {
                    truncated_hmac,
                    nonce,
                    ..
                }) => {
                    thmac = Some(truncated_hmac);
                    nonce_server = Some(nonce);
                }
                MptcpOption::MpJoin(MpJoin::Ack { hmac }) => join_ack = Some(hmac),
                MptcpOption::AddAddr(a) if !a.is_echo() => {
                    assert!(!client, "the server announces");
                    add_addr.push(a);
                }
                MptcpOption::Dss(d) => {
                    if let Some(m) = d.mapping {
                        if client && first_client_dsn.is_none() && !payload.is_empty() {
                            first_client_dsn = Some(m.dsn);
                        }
                        let fin_only = d.data_fin && payload.is_empty() && m.data_len == 1;
                        let whole =
                            usize::from(m.data_len) == payload.len() + usize::from(d.data_fin);
                        if let (Some(c), true) = (m.checksum, whole || fin_only) {
                            assert_eq!(
                                dss_checksum(m.dsn.value(), m.subflow_seq, m.data_len, &payload),
                                c,
                                "frame {frame}: DSS checksum of {} bytes",
                                payload.len()
                            );
                            checksums += 1;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let (a, b) = (
        key_client.expect("client key"),
        key_server.expect("server key"),
    );
    assert_eq!(join_token, Some(crypto::token(b)), "MP_JOIN token");
    let (ra, rb) = (nonce_client.unwrap(), nonce_server.unwrap());
    assert_eq!(
        thmac,
        Some(crypto::join_synack_hmac(b, a, rb, ra)),
        "SYN/ACK HMAC"
    );
    assert_eq!(
        join_ack,
        Some(crypto::join_ack_hmac(a, b, ra, rb)),
        "third ACK HMAC"
    );
    assert!(!add_addr.is_empty(), "the server sent ADD_ADDR");
    for x in &add_addr {
        assert_eq!(
            x.hmac,
            Some(crypto::add_addr_hmac(b, a, x.address_id, x.addr, x.port))
        );
    }
    assert_eq!(
        first_client_dsn,
        Some(DataSeq::Bits64(crypto::idsn(a).wrapping_add(1)))
    );
    assert!(checksums >= 3, "only {checksums} DSS checksums checked");
    eprintln!(
        "linux: {options} MPTCP options parsed and re-emitted; keys {a:#018x}/{b:#018x}; token, IDSN, 2 join HMACs, {} ADD_ADDR HMAC(s), {checksums} DSS checksums equal Linux's",
        add_addr.len()
    );
}

#[test]
fn linux_option_areas_without_checksums_re_emit_byte_for_byte() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIP linux_option_areas_without_checksums_re_emit_byte_for_byte: {why}");
        return;
    }
    let (mut segments, mut padded_after) = (0, 0);
    for (tag, signal) in [("nocsum", "signal"), ("nocsum-nosignal", "nosignal")] {
        let text = capture(tag, &[signal, "nocsum"]);
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let frame = f[0];
            let flags = u16::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap();
            let opts = hex(f.get(3).copied().unwrap_or(""));
            let payload = hex(f.get(4).copied().unwrap_or(""));
            assert_eq!(
                reemit_option_area(&opts, flags, &payload),
                opts,
                "{tag} frame {frame}: option area re-emitted differently"
            );
            segments += 1;
            // An MPTCP option whose length is 2 mod 4, then Linux's two NOPs.
            padded_after += usize::from(
                items(&opts)
                    .iter()
                    .any(|&(k, item)| k == 30 && item.len() % 4 == 2)
                    && opts.ends_with(&[1, 1]),
            );
        }
    }
    assert!(
        padded_after >= 10,
        "only {padded_after} segments with a 22/26-byte MPTCP option"
    );
    eprintln!(
        "linux, checksums off: {segments} option areas re-emitted byte for byte, {padded_after} with an MPTCP option padded by two NOPs after it"
    );
}
