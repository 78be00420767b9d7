//! `brisk pdrill`'s exit status: 0 only when every script passed; 1 when one failed or
//! did not parse (an oversized file counts as not parsing); 3 when none failed but one
//! was unsupported, which is not a pass; 2 for the command's own errors.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

const PASS: &str = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
                    +0 bind(3, ..., ...) = 0\n\
                    +0 listen(3, 1) = 0\n\
                    +0 < S 0:0(0) win 32792 <mss 1000>\n\
                    +0 > S. 0:0(0) ack 1 <...>\n";

fn path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("brisk-pdrill-{}-{name}", std::process::id()))
}

fn tmp(name: &str) -> PathBuf {
    let d = path(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn status(dir: &Path) -> (i32, String) {
    let o = Command::new(BIN)
        .args(["pdrill", dir.to_str().unwrap()])
        .output()
        .expect("run brisk");
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), out)
}

#[test]
fn exit_status_says_pass_fail_or_unsupported() {
    let d = tmp("pass");
    std::fs::write(d.join("a.pkt"), PASS).unwrap();
    assert_eq!(status(&d).0, 0, "{}", status(&d).1);

    // Only unsupported: not success.
    let d = tmp("unsup");
    std::fs::write(
        d.join("a.pkt"),
        format!("{PASS}+0 fcntl(3, F_SETOWN, 1) = 0\n"),
    )
    .unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("1 unsupported"), "{out}");

    // A pass beside an unsupported script is still not success; a failure wins.
    std::fs::write(d.join("b.pkt"), PASS).unwrap();
    assert_eq!(status(&d).0, 3);
    std::fs::write(d.join("c.pkt"), format!("{PASS}+0 > . 1:1(0) ack 1\n")).unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 1, "{out}");

    // A huge payload length: that script's parse error, naming its line.
    let d = tmp("huge");
    std::fs::write(
        d.join("a.pkt"),
        format!("{PASS}+0 < . 1:4000000001(4000000000) ack 1 win 257\n"),
    )
    .unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("parse error: 6:") && out.contains("out of range"),
        "{out}"
    );

    // A file over the size cap is not read.
    let d = tmp("big");
    let mut big = String::from(PASS);
    while big.len() <= 1 << 20 {
        big.push_str("// padding padding padding padding padding padding padding\n");
    }
    std::fs::write(d.join("a.pkt"), big).unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("larger than 1048576 bytes"), "{out}");

    // The command's own error.
    let (code, _) = status(&d.join("missing.pkt"));
    assert_eq!(code, 2);
    for n in ["pass", "unsup", "huge", "big"] {
        let _ = std::fs::remove_dir_all(path(n));
    }
}

/// A script marked `// xfail: <reason>` that fails at a packet is a known failure:
/// counted apart, and not a failure of the run. One that passes fails the run until
/// its mark is removed, so a fix shows up.
#[test]
fn known_failures_do_not_fail_the_run_but_an_unexpected_pass_does() {
    let d = tmp("xfail");
    std::fs::write(d.join("a.pkt"), PASS).unwrap();
    std::fs::write(
        d.join("b.pkt"),
        format!("// xfail: a test of the mark\n{PASS}+0 > . 1:1(0) ack 1\n"),
    )
    .unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 pass, 0 fail, 1 known failures"), "{out}");
    assert!(out.contains("known failure (a test of the mark)"), "{out}");
    std::fs::write(d.join("c.pkt"), format!("// xfail: fixed since\n{PASS}")).unwrap();
    let (code, out) = status(&d);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("remove the mark"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}
