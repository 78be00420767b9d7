//! A real experiment's result, carried through `remote`'s JSON as a Ray worker would
//! send it, gives the same report: every file `html::write` writes, the table and the
//! `--json` document, byte for byte.
//!
//! Ignored in unoptimised builds (the experiments take minutes there instead of
//! seconds).

use brisk_repro::{accepted, html, remote, report, ExperimentResult};
use std::path::{Path, PathBuf};

/// Cheap quick-mode experiments (~2 s together in release on 2 cores) with charts,
/// bands over seeds, claim notes and set-up notes between them. Box plots and heat
/// maps are covered by `remote`'s unit test; dc-video (box plots, ~5 s), dc-sweep
/// (heat map, ~30 s) and real-prio (real packets, ~40 s) passed this test once too,
/// but are too slow to run every time.
const IDS: &[&str] = &["ut-bulk", "dc-micro"];

/// Every file under `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

fn written(results: &[ExperimentResult], name: &str) -> (PathBuf, Vec<(String, Vec<u8>)>) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("remote-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let acc = accepted::embedded(accepted::Mode::Quick).unwrap();
    html::write(&dir, results, true, &acc, Some("provenance")).unwrap();
    let f = files(&dir);
    (dir, f)
}

#[test]
#[cfg_attr(debug_assertions, ignore = "runs experiments; use --release")]
fn experiments_round_tripped_through_json_give_the_same_report() {
    let mut local = Vec::new();
    for id in IDS {
        let t = std::time::Instant::now();
        local.push(remote::run_one(id, true).unwrap());
        eprintln!("{id}: {:.1} s", t.elapsed().as_secs_f64());
    }
    let back: Vec<ExperimentResult> = local
        .iter()
        .map(|r| remote::result_from_json(&remote::result_to_json(r)).unwrap())
        .collect();
    assert!(local.iter().any(|r| !r.plots.is_empty()), "no figures");
    assert!(
        local
            .iter()
            .flat_map(|r| &r.claims)
            .any(|c| !c.note.is_empty()),
        "no claim notes"
    );

    let (a_dir, a) = written(&local, "local");
    let (b_dir, b) = written(&back, "back");
    assert!(a.len() > 2, "{a_dir:?} has only {} files", a.len());
    assert_eq!(
        a.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs between {a_dir:?} and {b_dir:?}");
    }
    let acc = accepted::embedded(accepted::Mode::Quick).unwrap();
    assert_eq!(report::table(&back, &acc), report::table(&local, &acc));
    assert_eq!(report::to_json(&back, &acc), report::to_json(&local, &acc));
    assert_eq!(
        report::to_json(&back, &acc).to_string(),
        report::to_json(&local, &acc).to_string()
    );
    assert_eq!(accepted::check(&back, &acc), accepted::check(&local, &acc));
    let _ = std::fs::remove_dir_all(a_dir);
    let _ = std::fs::remove_dir_all(b_dir);
}
