//! The README's commands are tests: every `brisk` command in a ```sh block runs with the
//! binary this build made and must succeed. Lines are taken as written (a leading `$ `
//! prompt, a trailing `&` and `# comment` are stripped; `cargo run --release --` and
//! `./target/release/brisk` mean the binary). Three kinds are treated specially:
//! - the full reproduction suite (`repro` without `--quick`) is skipped: CI runs the
//!   quick suite as `crates/brisk-repro/tests/quick_suite.rs`, and the full one takes
//!   minutes;
//! - lab and real-packet commands need root, `/dev/net/tun` and iproute2; without them
//!   they are skipped with a message, as the lab's own tests do;
//! - `lab up` serves until it is killed (the README backgrounds it and kills it): the
//!   test starts it, waits for its banner, interrupts it and checks it tears down.
//!   A `--serve DIR` that does not exist here becomes a temporary directory.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md")
}

/// The brisk commands of the README's ```sh blocks, as argument lists. In a block that
/// shows a session (lines with a `$ ` prompt), only the prompted lines are commands;
/// the others are output.
fn commands(text: &str) -> Vec<Vec<String>> {
    let mut blocks: Vec<Vec<&str>> = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            match cur.take() {
                Some(b) => blocks.push(b),
                None if t == "```sh" => cur = Some(Vec::new()),
                None => cur = Some(vec!["\0not-sh"]),
            }
            continue;
        }
        if let Some(b) = cur.as_mut() {
            b.push(t);
        }
    }
    let mut out = Vec::new();
    for b in blocks
        .into_iter()
        .filter(|b| b.first() != Some(&"\0not-sh"))
    {
        let session = b.iter().any(|l| l.starts_with("$ "));
        for t in b {
            let t = match (session, t.strip_prefix("$ ")) {
                (true, Some(t)) => t,
                (true, None) => continue,
                (false, _) => t,
            };
            let t = t.split(" #").next().unwrap_or("").trim();
            let t = t.strip_suffix('&').unwrap_or(t).trim();
            let rest = [
                "cargo run --release -- ",
                "./target/release/brisk ",
                "brisk ",
            ]
            .iter()
            .find_map(|p| t.strip_prefix(p));
            if let Some(rest) = rest {
                out.push(shell_words(rest));
            }
        }
    }
    out
}

/// Splits a command line as sh does for the README's simple cases: whitespace outside
/// quotes separates words; single and double quotes group (no escapes inside).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

#[test]
fn shell_words_group_quotes() {
    assert_eq!(
        shell_words("lab shell --outside 'iperf3 -s -1' -- a \"b c\" ''"),
        [
            "lab",
            "shell",
            "--outside",
            "iperf3 -s -1",
            "--",
            "a",
            "b c",
            ""
        ]
    );
}

fn needs_root(args: &[String]) -> bool {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.first() == Some(&"lab")
        || a.contains(&"--real")
        || (a.first() == Some(&"bench") && matches!(a.get(1), Some(&"emu") | Some(&"real")))
}

fn have_lab() -> Result<(), String> {
    // `id -u` rather than libc, so this test needs no unsafe code.
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| e.to_string())?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err("no /dev/net/tun".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err("no iproute2".into());
    }
    Ok(())
}

fn run(args: &[String]) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("brisk runs");
    assert!(
        out.status.success(),
        "README command `brisk {}` failed ({}):\n{}{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `lab up ... &` then `kill %1`: start, wait for the banner, interrupt, wait.
fn lab_up(args: &[String]) {
    let scratch = std::env::temp_dir().join(format!("brisk-readme-serve-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let mut args = args.to_vec();
    if let Some(i) = args.iter().position(|a| a == "--serve") {
        if let Some(dir) = args.get_mut(i + 1) {
            if !PathBuf::from(&*dir).is_dir() {
                *dir = scratch.display().to_string();
            }
        }
    }
    let mut child = Command::new(BIN)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("brisk lab up starts");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut banner = false;
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(l) if l.starts_with("brisk lab up:") => {
                banner = true;
                break;
            }
            Ok(_) => {}
            Err(_) => {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
            }
        }
    }
    // The README's `kill %1` (SIGTERM); the lab tears down on it.
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    assert!(
        banner,
        "`brisk {}` printed no banner:\n{err}",
        args.join(" ")
    );
    assert!(
        status.is_some(),
        "`brisk {}` did not exit on SIGTERM",
        args.join(" ")
    );
}

#[test]
fn the_readme_parses_into_commands() {
    let cmds = commands(&readme());
    assert!(
        cmds.iter()
            .any(|c| c.first().map(String::as_str) == Some("run")),
        "{cmds:?}"
    );
    assert!(
        cmds.iter()
            .any(|c| c.first().map(String::as_str) == Some("repro")),
        "{cmds:?}"
    );
}

#[test]
fn every_readme_command_works() {
    let lab = have_lab();
    for args in commands(&readme()) {
        let is_repro = args.first().map(String::as_str) == Some("repro");
        if is_repro && !args.iter().any(|a| a == "--quick") {
            eprintln!(
                "skip `brisk {}`: the full suite; CI runs the quick one",
                args.join(" ")
            );
            continue;
        }
        if needs_root(&args) {
            if let Err(why) = &lab {
                eprintln!(
                    "skip `brisk {}`: needs root, /dev/net/tun and iproute2 ({why})",
                    args.join(" ")
                );
                continue;
            }
        }
        eprintln!("run `brisk {}`", args.join(" "));
        if args.first().map(String::as_str) == Some("lab")
            && args.get(1).map(String::as_str) == Some("up")
        {
            lab_up(&args);
        } else {
            run(&args);
        }
    }
}
