//! brisk-wire's Fast Open option against real Linux bytes and against tshark.
//!
//! - `linux_fast_open_option_bytes`: `tests/fastopen/linux_capture.sh` runs Linux TCP
//!   Fast Open between two network namespaces it creates (`net.ipv4.tcp_fastopen = 3`
//!   inside them only) and captures three connections. The first SYN must be a cookie
//!   request without data, its SYN-ACK an 8-byte cookie; the next two SYNs must carry
//!   that cookie and their data, and their SYN-ACKs acknowledge the data. Every
//!   segment's option area must parse and re-emit byte for byte, and Linux's counters
//!   must agree (TCPFastOpenActive 2, TCPFastOpenPassive 2, TCPFastOpenCookieReqd 1).
//!   Skips (passing, with a message) unless root with python3, dumpcap, tshark, nstat.
//! - `tshark_dissects_brisks_fast_open_options`: every form brisk emits (request and
//!   cookies of 4 to 16 bytes, kind 34 and 254) on a full SYN is dissected as Fast
//!   Open with the same cookie, no malformed packet, no expert error. Skips where
//!   tshark is missing.

use std::path::Path;
use std::process::Command;

use brisk_wire::fastopen::{self, FastOpen, FastOpenCookie};
use brisk_wire::{
    emit_tcp_packet, Ecn, ExtraOptions, Flags, IpRepr, Ipv4Repr, PcapWriter, SeqNum, TcpRepr,
    Timestamps, WindowScale, IPPROTO_TCP,
};

fn hex(s: &str) -> Vec<u8> {
    let s = s.trim().replace(':', "");
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

fn ip() -> IpRepr {
    IpRepr::V4(Ipv4Repr {
        src: std::net::Ipv4Addr::new(198, 18, 0, 1),
        dst: std::net::Ipv4Addr::new(198, 18, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 1,
        dont_frag: true,
        payload_len: 0,
    })
}

/// Parses a TCP segment made of Linux's option area, flags and payload; returns
/// brisk's re-emitted option area and the parsed Fast Open option.
fn parse_options(
    opts: &[u8],
    flags: u16,
    payload: &[u8],
) -> (Vec<u8>, Option<Result<FastOpen, fastopen::FastOpenError>>) {
    let mut seg = vec![0u8; 20];
    let offset_flags = (((20 + opts.len()) / 4) as u16) << 12 | flags;
    seg[12..14].copy_from_slice(&offset_flags.to_be_bytes());
    seg.extend_from_slice(opts);
    seg.extend_from_slice(payload);
    let tcp = TcpRepr::parse(&seg, None).expect("Linux's segment parses");
    let mut out = Vec::new();
    tcp.emit(&ip(), &mut out);
    (
        out[20..tcp.header_len()].to_vec(),
        fastopen::parse(&tcp.extra),
    )
}

#[test]
fn linux_fast_open_option_bytes() {
    let uid = Command::new("id").arg("-u").output().expect("id runs");
    let why = if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        Some("not root".to_string())
    } else {
        [
            ("tshark", "--version"),
            ("dumpcap", "--version"),
            ("python3", "--version"),
            ("nstat", "-V"),
        ]
        .iter()
        .find(|(c, a)| !have(c, a))
        .map(|(c, _)| format!("{c} is not installed"))
    };
    if let Some(why) = why {
        eprintln!("SKIP linux_fast_open_option_bytes: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("brisk-tfo-linux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pcap = dir.join("linux.pcapng");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fastopen/linux_capture.sh");
    let run = Command::new("bash")
        .arg(&script)
        .arg(&pcap)
        .output()
        .expect("bash runs");
    let counters = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.success(),
        "capture failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&pcap)
        .args(["-Y", "tcp", "-T", "fields", "-E", "separator=\t"])
        .args(["-e", "frame.number", "-e", "tcp.srcport", "-e", "tcp.flags"])
        .args(["-e", "tcp.seq_raw", "-e", "tcp.ack_raw"])
        .args(["-e", "tcp.options", "-e", "tcp.payload"])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();

    let counter = |side: &str, name: &str| -> u64 {
        counters
            .lines()
            .find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 3 && f[0] == side && f[1] == name).then(|| f[2].parse().unwrap())
            })
            .unwrap_or_else(|| panic!("no {side} {name} in:\n{counters}"))
    };
    assert_eq!(
        counter("client", "TcpExtTCPFastOpenActive"),
        2,
        "{counters}"
    );
    assert_eq!(
        counter("server", "TcpExtTCPFastOpenPassive"),
        2,
        "{counters}"
    );
    assert_eq!(
        counter("server", "TcpExtTCPFastOpenCookieReqd"),
        1,
        "{counters}"
    );
    assert_eq!(
        counter("server", "TcpExtTCPFastOpenPassiveFail"),
        0,
        "{counters}"
    );

    let mut syns = Vec::new(); // (port, seq, option, payload len)
    let mut synacks = Vec::new(); // (port, ack, option)
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let frame = f[0];
        let flags = u16::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap();
        let seq: u32 = f[3].parse().unwrap();
        let ack: u32 = f[4].parse().unwrap();
        let opts = hex(f.get(5).copied().unwrap_or(""));
        let payload = hex(f.get(6).copied().unwrap_or(""));
        let (reemitted, fo) = parse_options(&opts, flags, &payload);
        assert_eq!(
            reemitted, opts,
            "frame {frame}: option area re-emitted differently"
        );
        let fo = fo.map(|r| r.unwrap_or_else(|e| panic!("frame {frame}: {e}")));
        let flags = Flags::from_bits_truncate(flags);
        if flags.syn() && !flags.ack() {
            syns.push((f[1].to_string(), seq, fo, payload.len()));
        } else if flags.syn() {
            synacks.push((f[1].to_string(), ack, fo));
        } else {
            assert_eq!(fo, None, "frame {frame}: Fast Open outside a SYN");
        }
    }
    assert_eq!((syns.len(), synacks.len()), (3, 3), "{text}");
    // First connection: a cookie request, no data; the SYN-ACK brings a cookie.
    assert_eq!(syns[0].2, Some(FastOpen::REQUEST), "{text}");
    assert_eq!(syns[0].3, 0, "data waits for the cookie");
    let cookie = synacks[0].2.and_then(|o| o.cookie).expect("a cookie");
    assert_eq!(cookie.len(), 8, "Linux's TCP_FASTOPEN_COOKIE_SIZE");
    assert_eq!(synacks[0].1, syns[0].1.wrapping_add(1));
    // Later connections: the cookie and the data on the SYN, acknowledged by the
    // SYN-ACK, which carries no option.
    for i in 1..3 {
        assert_eq!(syns[i].2, Some(FastOpen::with_cookie(cookie)), "{text}");
        assert!(syns[i].3 > 0, "data on SYN {i}");
        assert_eq!(synacks[i].2, None);
        assert_eq!(
            synacks[i].1,
            syns[i].1.wrapping_add(1 + syns[i].3 as u32),
            "SYN-ACK {i} acknowledges the SYN's data"
        );
    }
    eprintln!("Linux Fast Open: cookie {cookie:?}, counters:\n{counters}");
}

#[test]
fn tshark_dissects_brisks_fast_open_options() {
    if !have("tshark", "--version") {
        eprintln!("SKIP tshark_dissects_brisks_fast_open_options: tshark is not installed");
        return;
    }
    let mut forms = vec![FastOpen::REQUEST];
    for experimental in [false, true] {
        for len in (4..=16).step_by(2) {
            let bytes: Vec<u8> = (0..len as u8).map(|b| 0xa0 + b).collect();
            forms.push(FastOpen {
                cookie: Some(FastOpenCookie::new(&bytes).unwrap()),
                experimental,
            });
        }
    }
    forms.push(FastOpen {
        cookie: None,
        experimental: true,
    });
    let dir = std::env::temp_dir().join(format!("brisk-tfo-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tfo.pcap");
    {
        let mut w = PcapWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
        for (i, f) in forms.iter().enumerate() {
            let mut extra = ExtraOptions::new();
            fastopen::push(&mut extra, f).unwrap();
            let tcp = TcpRepr {
                src_port: 40000 + i as u16,
                dst_port: 80,
                seq: SeqNum(1000),
                flags: Flags::SYN,
                window: 64240,
                mss: Some(1460),
                window_scale: Some(WindowScale::clamped(7)),
                sack_permitted: true,
                timestamps: Some(Timestamps { tsval: 1, tsecr: 0 }),
                extra,
                payload: if f.cookie.is_some() { b"GET /" } else { b"" },
                ..Default::default()
            };
            let mut pkt = Vec::new();
            emit_tcp_packet(&ip(), &tcp, &mut pkt);
            w.write_packet(i as u64 * 1_000_000, &pkt).unwrap();
        }
        w.flush().unwrap();
    }
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"])
        .args(["-e", "_ws.malformed", "-e", "_ws.expert.severity"])
        .args([
            "-e",
            "tcp.options.tfo.request",
            "-e",
            "tcp.options.tfo.cookie",
        ])
        .args(["-e", "tcp.options.experimental.exid"])
        .output()
        .expect("tshark runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), forms.len(), "{text}");
    for (i, (f, row)) in forms.iter().zip(&rows).enumerate() {
        let frame = i + 1;
        assert!(row[0].is_empty(), "frame {frame}: malformed\n{text}");
        for sev in row[1].split(',').filter(|s| !s.is_empty()) {
            let sev: u32 = sev.parse().unwrap();
            assert!(sev < 0x0080_0000, "frame {frame}: expert error\n{text}");
        }
        match (f.cookie, f.experimental) {
            (None, false) => assert!(!row[2].is_empty(), "frame {frame}: request\n{text}"),
            (Some(c), false) => {
                assert_eq!(hex(row[3]), c.as_bytes(), "frame {frame}\n{text}")
            }
            (_, true) => {
                // tshark shows kind 254's experiment id; 0xf989 is Fast Open's.
                assert_eq!(row[4], "0xf989", "frame {frame}\n{text}");
                if let Some(c) = f.cookie {
                    assert_eq!(hex(row[3]), c.as_bytes(), "frame {frame}\n{text}");
                }
            }
        }
    }
    eprintln!("tshark: {} Fast Open forms, none malformed", forms.len());
}
