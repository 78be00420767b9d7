//! MPTCP options in scripts: the syntax round-trips (parse → show → parse), parse
//! errors name the line and the field, and a wrong expected option fails a script
//! with a message naming the option and the field.

use brisk_pdrill::mptcp::AddrRef;
use brisk_pdrill::script::{EventKind, Options, TcpOpt};
use brisk_pdrill::{parse, run_script, Outcome, RunConfig};

/// One option of each subtype and form, in the MPTCP fork's spelling (as this
/// runner shows it).
const OPTIONS: &[&str] = &[
    "mpcapable v1 flags[flag_h] nokey",
    "mpcapable v1 flags[flag_a, flag_h] key[skey]",
    "mpcapable v1 flags[flag_h] key[ckey=2, skey]",
    "mpcapable v0 flags 0x0 nokey",
    "mpcapable v1 flags[flag_b, flag_h] key[0x1122334455667788, 7]",
    "mpcapable v1 flags[flag_h] key[ckey, skey] mpcdatalen 1000",
    "mpcapable v1 flags[flag_a, flag_h] key[ckey, skey] mpcdatalen 100 cksum=auto",
    "mp_join_syn backup=0 address_id=1 token=sha256_32(skey) rand=7",
    "mp_join_syn backup=1 token=auto",
    "mp_join_syn backup=0 address_id=3 token=0xdeadbeef",
    "mp_join_syn_ack backup=0 address_id=0 sender_hmac=auto",
    "mp_join_syn_ack backup=1 sender_hmac=0x1234567890abcdef rand=9",
    "mp_join_ack sender_hmac=auto",
    "mp_join_ack sender_hmac=*",
    "mp_join_ack sender_hmac=0x00112233445566778899aabbccddeeff00112233",
    "dss dack4=1",
    "dss dack8=1001 nocs",
    "dss dack4",
    "dss dack=101",
    "dss dack8=1 dsn8=1 ssn=1 dll=1000 nocs",
    "dss dack4=5 dsn4=3 ssn=3 dll=2 cksum=auto",
    "dss dack4=5 dsn4=3 ssn=3 dll=2 cksum=4660",
    "dss dsn=1 ssn=0 dll=1 nocs fin",
    "dss dack=2 dsn=* ssn=* dll=* cksum=*",
    "dss dack4=1 fin",
    "add_address address_id=1 addr[198.51.100.2] hmac=auto",
    "add_address address_id=1 addr[198.51.100.2] addr_echo",
    "add_address address_id=2 addr[2001:db8::2] port=8080 hmac=0x1122334455667788",
    "add_address addr[198.51.100.2] port=80 addr_echo",
    "add_address address_id=1 addr[saddr1] hmac=auto",
    "add_address address_id=1 addr[caddr0] addr_echo",
    "remove_address address_id=[1]",
    "remove_address address_id=[1,2,3,4,5,6,7,8]",
    "mp_prio backup=1",
    "mp_prio backup=0",
    "mp_prio backup=1 address_id=1",
    "mp_fail dsn8=1001",
    "mp_fastclose key=auto",
    "mp_fastclose key=ckey",
    "mp_fastclose key=42",
    "mp_reset 1",
    "mp_reset 6 flags[flag_t]",
];

fn options_of(line: &str) -> Vec<TcpOpt> {
    let s = parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    match &s.events[0].kind {
        EventKind::Inbound(p) | EventKind::Outbound(p) => match &p.options {
            Options::List(l) => l.clone(),
            o => panic!("{line}: options {o:?}"),
        },
        k => panic!("{line}: {k:?}"),
    }
}

#[test]
fn every_option_round_trips_through_its_text() {
    for o in OPTIONS {
        let line = format!("0 > . 1:1(0) ack 1 <nop,{o},nop>");
        let first = options_of(&line);
        assert!(matches!(first[1], TcpOpt::Mptcp(_)), "{o}: {first:?}");
        let shown = first[1].to_string();
        assert_eq!(shown, *o, "shown as written");
        let again = options_of(&format!("0 > . 1:1(0) ack 1 <nop,{shown},nop>"));
        assert_eq!(first, again, "{o}");
    }
}

/// The fork's own spellings that this runner shows differently parse to the same.
#[test]
fn the_forks_spellings_parse() {
    let same = [
        ("mp_reset 1 flags[no_flags]", "mp_reset 1"),
        ("mp_fastclose", "mp_fastclose key=auto"),
        ("mp_fastclose ckey=42", "mp_fastclose key=ckey=42"),
        (
            "add_address address_id=1 addr[ep=inet_addr(\"198.51.100.2\")] hmac=auto",
            "add_address address_id=1 addr[198.51.100.2] hmac=auto",
        ),
        ("dss dack8=*", "dss dack8"),
        // `ssn` and `dll` without a mapping: the fork ignores them, so does the runner.
        ("dss dack8=3 ssn=1 dll=0 nocs", "dss dack8=3 nocs"),
        (
            "add_address address_id=1 addr[saddr] hmac=auto",
            "add_address address_id=1 addr[saddr0] hmac=auto",
        ),
        (
            "mp_join_syn address_id=auto token=auto",
            "mp_join_syn backup=0 token=auto",
        ),
        (
            "mpcapable flags[flag_h] nokey",
            "mpcapable v1 flags[flag_h] nokey",
        ),
        (
            "mpcapable v1 flags 1 nokey",
            "mpcapable v1 flags[flag_h] nokey",
        ),
    ];
    for (fork, ours) in same {
        let a = options_of(&format!("0 > . 1:1(0) ack 1 <{fork}>"));
        let b = options_of(&format!("0 > . 1:1(0) ack 1 <{ours}>"));
        assert_eq!(a, b, "{fork} vs {ours}");
    }
    // Spaces after commas, as the fork's scripts write them, and a subflow prefix.
    let s = parse(
        "0 < addr[caddr1] > addr[saddr0] S 0:0(0) win 65535 <mss 1460, sackOK, nop, nop, nop, wscale 8, mp_join_syn backup=1 address_id=1 token=sha256_32(skey)>\n",
    )
    .unwrap();
    let EventKind::Inbound(p) = &s.events[0].kind else {
        panic!()
    };
    assert_eq!(
        p.addrs,
        [Some(AddrRef::Client(1)), Some(AddrRef::Server(0))]
    );
}

/// Each bad field gives line, column and a message naming the option and the field
/// (and the range, where there is one).
#[test]
fn parse_errors_name_the_line_and_the_field() {
    let cases: &[(&str, &[&str])] = &[
        (
            "dss dack4=4294967296",
            &["dss dack4", "4294967296", "0-4294967295"],
        ),
        (
            "dss dsn8=99999999999999999999",
            &["dss dsn8", "out of range"],
        ),
        ("dss dll=70000", &["dss dll", "0-65535"]),
        ("dss dack4=1 cksum=5", &["dss", "cksum", "dsn4=N or dsn8=N"]),
        ("dss dack4=1 dack8=2", &["dss", "more than one data ACK"]),
        ("dss frob=1", &["dss", "\"frob\"", "dack4"]),
        ("mpcapable v1 flags[flag_z] nokey", &["mpcapable", "flag_z"]),
        ("mpcapable v1 nokey", &["mpcapable", "flags"]),
        (
            "mpcapable v1 flags[flag_h] key[a] mpcdatalen 5",
            &["mpcapable", "mpcdatalen", "both keys"],
        ),
        (
            "mpcapable v1 flags[flag_h] key[a, b, c]",
            &["mpcapable", "one or two keys"],
        ),
        (
            "mp_join_syn backup=2 token=auto",
            &["mp_join_syn backup", "0-1"],
        ),
        (
            "mp_join_syn address_id=256 token=auto",
            &["mp_join_syn address_id", "0-255"],
        ),
        ("mp_join_syn backup=1", &["mp_join_syn", "token"]),
        (
            "mp_join_syn token=4294967296",
            &["mp_join_syn token", "0-4294967295"],
        ),
        (
            "mp_join_ack sender_hmac=0x12",
            &["mp_join_ack sender_hmac", "40 hex digits"],
        ),
        (
            "add_address addr[300.1.1.1] hmac=auto",
            &["add_address addr", "300.1.1.1"],
        ),
        ("add_address addr[10.0.0.1]", &["add_address", "addr_echo"]),
        (
            "add_address addr[10.0.0.1] port=65536 addr_echo",
            &["add_address port", "0-65535"],
        ),
        (
            "remove_address address_id=[1,2,3,4,5,6,7,8,9]",
            &["remove_address address_id", "at most 8"],
        ),
        ("mp_prio", &["mp_prio", "backup"]),
        ("mp_fail dsn4=1", &["mp_fail", "dsn8"]),
        ("mp_reset 256", &["mp_reset reason", "0-255"]),
        ("mp_reset 1 flags[flag_x]", &["mp_reset", "flag_x"]),
    ];
    for (opt, words) in cases {
        let src = format!(
            "0 socket(..., SOCK_STREAM, IPPROTO_MPTCP) = 3\n+0 > . 1:1(0) ack 1 <nop,{opt}>\n"
        );
        let e = parse(&src).expect_err(opt);
        assert_eq!(e.line, 2, "{opt}: {e}");
        assert!(e.col > 20, "{opt}: the column points into the option: {e}");
        for w in *words {
            assert!(e.msg.contains(w), "{opt}: {e:?} should mention {w:?}");
        }
    }
}

/// Wildcards are for outbound packets; an inbound packet must say what it sends.
#[test]
fn inbound_packets_take_no_wildcards() {
    for opt in [
        "dss dack4",
        "dss dack=1",
        "dss dack8=1 dsn8=1 ssn=1",
        "mp_join_ack sender_hmac=*",
        "mpcapable v1 flags[flag_h] key[*]",
        "dss dack8=1 dsn8=* ssn=1 dll=1",
    ] {
        let e = parse(&format!("0 < . 1:1(0) ack 1 win 100 <{opt}>\n")).expect_err(opt);
        assert_eq!(e.line, 1, "{opt}: {e}");
        assert!(
            e.msg.contains("outbound") || e.msg.contains("width") || e.msg.contains("dll"),
            "{opt}: {e}"
        );
    }
}

/// The listener has no MPTCP (plain socket): a script that expects brisk's
/// MP_CAPABLE key fails at that line, naming the option it missed.
#[test]
fn a_missing_mptcp_option_fails_the_script_by_name() {
    let src = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
               +0 bind(3, ..., ...) = 0\n\
               +0 listen(3, 1) = 0\n\
               +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7,mpcapable v1 flags[flag_h] nokey>\n\
               +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8,mpcapable v1 flags[flag_h] key[skey]>\n";
    let r = run_script(src, &RunConfig::default());
    let Outcome::Fail { line, msg } = &r.outcome else {
        panic!("{r}")
    };
    assert_eq!(*line, 5, "{r}");
    assert!(
        msg.contains("expected mpcapable v1 flags[flag_h] key[skey]") && msg.contains("not sent"),
        "{msg}"
    );
}

/// `net.mptcp.enabled=0`: an MPTCP socket is refused as Linux refuses it.
#[test]
fn mptcp_disabled_refuses_the_socket() {
    let r = run_script(
        "`sysctl -q net.mptcp.enabled=0`\n0 socket(..., SOCK_STREAM, IPPROTO_MPTCP) = -1 ENOPROTOOPT\n",
        &RunConfig::default(),
    );
    assert!(r.passed() && r.skipped.is_empty(), "{r}");
}

/// Against brisk's MPTCP connection: a wrong value in an expected DSS fails the
/// script at that line, naming the field, the expected and the actual value; the
/// right one passes.
#[test]
fn a_wrong_mptcp_value_fails_the_script_by_field() {
    let base = "0 socket(..., SOCK_STREAM, IPPROTO_MPTCP) = 3\n\
                +0 bind(3, ..., ...) = 0\n\
                +0 listen(3, 1) = 0\n\
                +0 < S 0:0(0) win 32792 <mss 1460,sackOK,nop,nop,nop,wscale 7,mpcapable v1 flags[flag_h] nokey>\n\
                +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8,mpcapable v1 flags[flag_h] key[skey]>\n\
                +0 < . 1:1(0) ack 1 win 257 <mpcapable v1 flags[flag_h] key[ckey=2, skey]>\n\
                +0 accept(3, ..., ...) = 4\n\
                +0 < P. 1:1001(1000) ack 1 win 257 <dss dack8=1 dsn8=1 ssn=1 dll=1000 nocs>\n";
    let run = |tail: &str| run_script(&format!("{base}{tail}"), &RunConfig::default());
    let ok = run("+0 > . 1:1(0) ack 1001 <dss dack=1001>\n");
    assert!(ok.passed(), "{ok}");
    let r = run("+0 > . 1:1(0) ack 1001 <dss dack=1000>\n");
    let Outcome::Fail { line, msg } = &r.outcome else {
        panic!("{r}")
    };
    assert_eq!(*line, 9, "{r}");
    assert!(
        msg.starts_with("bad outbound MPTCP option: dss dack: expected 1000 actual 1001"),
        "{msg}"
    );
    let r = run("+0 > . 1:1(0) ack 1001 <dss dack4=1001>\n");
    assert!(
        r.to_string()
            .contains("dss dack: expected 4 bytes (dack4) actual 8 (dack8)"),
        "{r}"
    );
    // A key that is not brisk's (skey is bound to brisk's by its SYN-ACK).
    let r = run_script(
        &base.replace("key[skey]>\n", "key[skey=5]>\n"),
        &RunConfig::default(),
    );
    assert!(
        r.to_string().contains("line 5")
            && r.to_string()
                .contains("mpcapable sender key: expected 5 actual"),
        "{r}"
    );
}

/// `net.mptcp.checksum_enabled=1` reaches the MPTCP socket's config: its SYN asks for
/// checksums (flag A); a plain socket still offers nothing. A limit Linux refuses is
/// skipped and counted, not applied.
#[test]
fn mptcp_sysctls_configure_later_sockets() {
    let src = "`sysctl -q net.mptcp.checksum_enabled=1`\n\
               0 socket(..., SOCK_STREAM, IPPROTO_MPTCP) = 3\n\
               +0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n\
               +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
               +0 > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 8,mpcapable v1 flags[flag_a, flag_h] nokey>\n";
    let r = run_script(src, &RunConfig::default());
    assert!(r.passed() && r.skipped.is_empty(), "{r}");
    let r = run_script(
        &src.replace("IPPROTO_MPTCP", "IPPROTO_TCP"),
        &RunConfig::default(),
    );
    assert!(r.to_string().contains("not sent"), "{r}");
    let r = run_script(
        "`ip mptcp limits set subflows 9 add_addr_accepted 2`\n0 socket(..., SOCK_STREAM, IPPROTO_MPTCP) = 3\n",
        &RunConfig::default(),
    );
    assert!(r.passed() && r.skipped.len() == 1, "{r}");
}
