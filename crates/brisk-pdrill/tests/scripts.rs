//! Runs every script in `scripts/` against brisk's endpoint; each must pass.
//! A failure prints the runner's report (line, expected and actual packet).

use brisk_pdrill::{run_script, Outcome, RunConfig};
use std::path::Path;

#[test]
fn every_script_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scripts/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "pkt"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 15,
        "expected brisk's scripts in {}",
        dir.display()
    );
    let cfg = RunConfig::default();
    let mut failed = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable script");
        let r = run_script(&src, &cfg);
        let name = f.file_name().unwrap().to_string_lossy();
        if let Some(reason) = brisk_pdrill::known_failure(&src) {
            // A known failure must still fail, at a packet or call (not parse or be
            // unsupported), so that a fix shows up here.
            match r.outcome {
                Outcome::Fail { .. } => eprintln!("known failure {name} ({reason}): {r}"),
                _ => failed.push(format!(
                    "{name}: marked xfail ({reason}) but ended {r}; remove the xfail line if it passes"
                )),
            }
            continue;
        }
        // brisk's own scripts use nothing the runner skips.
        if !r.passed() || !r.skipped.is_empty() {
            failed.push(format!("{name}: {r}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} scripts failed:\n{}",
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

/// Runs the script named by `BRISK_PDRILL_TRACE` and prints every packet and call
/// (`cargo test --release -p brisk-pdrill --test scripts trace -- --ignored --nocapture`).
#[test]
#[ignore]
fn trace() {
    let Ok(path) = std::env::var("BRISK_PDRILL_TRACE") else {
        return;
    };
    let src = std::fs::read_to_string(&path).expect("readable script");
    let cfg = RunConfig {
        trace: true,
        ..RunConfig::default()
    };
    let r = run_script(&src, &cfg);
    for l in &r.log {
        println!("{l}");
    }
    println!("{path}: {r}");
}

/// Runs every `.pkt` under `BRISK_PDRILL_DIR` (an upstream suite, not vendored) and
/// prints one line per script and a tally
/// (`cargo test --release -p brisk-pdrill --test scripts measure -- --ignored --nocapture`).
#[test]
#[ignore]
fn measure() {
    let Ok(dir) = std::env::var("BRISK_PDRILL_DIR") else {
        return;
    };
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable directory") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pkt") {
                files.push(p);
            }
        }
    }
    files.sort();
    // packetdrill's `-D NAME=value` (upstream's run_all.py passes e.g. TFO_COOKIE):
    // `BRISK_PDRILL_DEFINE="NAME=value,..."`, substituted as whole words.
    let defines: Vec<(String, String)> = std::env::var("BRISK_PDRILL_DEFINE")
        .unwrap_or_default()
        .split(',')
        .filter_map(|d| d.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let (mut pass, mut fail, mut unsup, mut parse) = (0, 0, 0, 0);
    for f in &files {
        let mut src = std::fs::read_to_string(f).expect("readable script");
        for (k, v) in &defines {
            src = src.replace(k.as_str(), v);
        }
        let r = run_script(&src, &RunConfig::default());
        match r.outcome {
            Outcome::Pass => pass += 1,
            Outcome::Fail { .. } => fail += 1,
            Outcome::Unsupported { .. } => unsup += 1,
            Outcome::Parse(_) => parse += 1,
        }
        println!("{}: {r}", f.display());
    }
    println!("{pass} pass, {fail} fail, {unsup} unsupported, {parse} parse errors");
}

/// The runner catches what it should: a wrong option, a late packet, a wrong return
/// value, a missing packet, and an unsupported call is reported as such.
#[test]
fn mismatches_are_reported_with_their_line() {
    let base = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
                +0 bind(3, ..., ...) = 0\n\
                +0 listen(3, 1) = 0\n\
                +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n";
    let cfg = RunConfig::default();
    let run = |tail: &str| run_script(&format!("{base}{tail}"), &cfg);
    let ok = run("+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n");
    assert!(ok.passed(), "{ok}");
    let bad_opt = run("+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>\n");
    assert!(
        bad_opt.to_string().contains("line 5") && bad_opt.to_string().contains("wscale 7"),
        "{bad_opt}"
    );
    let late = run("+.1 > S. 0:0(0) ack 1 <...>\n");
    assert!(late.to_string().contains("timing error"), "{late}");
    let missing =
        run("+0 > S. 0:0(0) ack 1 <...>\n+0 < . 1:1(0) ack 1 win 100\n+0 > P. 1:11(10) ack 1\n");
    assert!(missing.to_string().contains("none was sent"), "{missing}");
    let ret = run("+0 > S. 0:0(0) ack 1 <...>\n+0 < . 1:1(0) ack 1 win 100\n+0 accept(3, ..., ...) = 5\n+0 read(5, ..., 10) = 3\n");
    assert!(
        ret.to_string().contains("line 8") && ret.to_string().contains("EAGAIN")
            || ret.to_string().contains("blocked"),
        "{ret}"
    );
    let unsup = run("+0 setsockopt(3, SOL_TCP, TCP_MD5SIG, [1], 4) = 0\n");
    assert!(
        unsup
            .to_string()
            .starts_with("unsupported: line 5: setsockopt TCP_MD5SIG"),
        "{unsup}"
    );
    let parse = run("+0 < S 0:0(0) wn 5\n");
    assert!(parse.to_string().starts_with("parse error: 5:"), "{parse}");
}

/// A huge payload length is a parse error naming the line and the range, before any
/// packet is built (packetdrill's parser takes a u16 there); so is a number that does
/// not fit at all.
#[test]
fn a_huge_payload_length_is_an_error_not_an_allocation() {
    let src = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
               +0 bind(3, ..., ...) = 0\n\
               +0 listen(3, 1) = 0\n\
               +0 < S 0:0(0) win 32792 <mss 1000>\n\
               +0 > S. 0:0(0) ack 1 <...>\n\
               +0 < . 1:4000000001(4000000000) ack 1 win 257\n";
    let r = run_script(src, &RunConfig::default());
    let Outcome::Parse(e) = &r.outcome else {
        panic!("expected a parse error, got {r}")
    };
    assert_eq!(e.line, 6, "{e}");
    assert!(
        e.msg.contains("4000000000") && e.msg.contains("0-65535"),
        "{e}"
    );
    assert_eq!(r.events_run, 0, "nothing ran");
    let r = run_script(
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < . 1:1(99999999999) win 1\n",
        &RunConfig::default(),
    );
    assert!(
        r.to_string().contains("2:") && r.to_string().contains("out of range"),
        "{r}"
    );
    // The largest allowed length parses.
    let r = run_script(
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < . 1:65536(65535) win 1\n",
        &RunConfig::default(),
    );
    assert!(!matches!(r.outcome, Outcome::Parse(_)), "{r}");
}

/// A write or read of a huge length builds only what fits or is there.
#[test]
fn huge_call_lengths_do_not_allocate_them() {
    let base = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
                +0 bind(3, ..., ...) = 0\n\
                +0 listen(3, 1) = 0\n\
                +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n\
                +0 > S. 0:0(0) ack 1 <...>\n\
                +0 < . 1:1(0) ack 1 win 257\n\
                +0 accept(3, ..., ...) = 4\n\
                +0 fcntl(4, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n";
    let r = run_script(
        &format!("{base}+0 read(4, ..., 18000000000000000000) = -1 EAGAIN\n+0 write(4, ..., 18000000000000000000) = 4194304\n"),
        &RunConfig::default(),
    );
    assert!(r.passed(), "{r}");
}
