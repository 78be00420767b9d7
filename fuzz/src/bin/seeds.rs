//! Writes the seed corpus of one target (or all) as files, for `afl-fuzz -i`:
//! `cargo run --release -p brisk-fuzz --bin seeds -- DIR [TARGET]` writes
//! `DIR/TARGET/seed-N` and copies any saved regressions (`fuzz/regressions/TARGET`).

use std::path::{Path, PathBuf};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: seeds DIR [TARGET]");
        std::process::exit(2);
    };
    let only = args.next();
    let regressions = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    for (name, _) in brisk_fuzz::TARGETS {
        if only.as_deref().is_some_and(|t| t != name) {
            continue;
        }
        let out = PathBuf::from(&dir).join(name);
        std::fs::create_dir_all(&out)?;
        for (i, s) in brisk_fuzz::seeds(name).iter().enumerate() {
            std::fs::write(out.join(format!("seed-{i}")), s)?;
        }
        if let Ok(rd) = std::fs::read_dir(regressions.join(name)) {
            for e in rd.flatten() {
                std::fs::copy(e.path(), out.join(e.file_name()))?;
            }
        }
        println!("{}", out.display());
    }
    Ok(())
}
