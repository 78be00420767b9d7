//! The real-time phase of a suite run: real-time experiments, up to `parallel` at
//! once (issue 36 §3).
//!
//! A real-time experiment mostly waits on its emulated links (a 10-Mbit/s path moves
//! little data per second of CPU: the quick suite's 15 used 73 s of CPU in 530 s), so
//! two of them side by side take about half the wall time. Each runs in namespaces of
//! its own (`brisk_emu::os::netns` names them by process and counter; addresses in
//! 198.18.0.0/15 live inside them, so two labs never share one), and the emulator
//! checks its own timing every run (`brisk_emu::emu::health`). What concurrency may
//! not do is change a result: an experiment during which **any** emulator in this
//! process reported a warning (its own or one beside it) while another experiment
//! was running is not accepted. Its result is dropped, no further experiment starts
//! beside another (the host evidently cannot keep two in real time), and it runs
//! again alone at the end, where its warnings, if any, go into its claims as they do
//! in a sequential run (`exp::real_fidelity`). Experiments that measure CPU time or
//! are CPU-bound themselves (`alone`) always run alone, after the others.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// `BRISK_REAL_PARALLEL`: how many real-time experiments may run at once.
pub const PARALLEL_ENV: &str = "BRISK_REAL_PARALLEL";
/// The default when neither the flag nor the environment says (measured:
/// docs/performance.md, "Real-time phase, concurrent (helper perfrt3)").
pub const PARALLEL_DEFAULT: usize = 2;
/// The most accepted: every lab has an emulator loop and usually a stack thread.
pub const PARALLEL_MAX: usize = 8;

/// `--real-parallel`, when given (0: not given).
static FLAG: AtomicUsize = AtomicUsize::new(0);

/// Parses a concurrency setting, naming `what` and the range on error.
pub fn parse_parallel(what: &str, v: &str) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if (1..=PARALLEL_MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "{what} = {v:?}: use a whole number of real-time experiments at once, 1..={PARALLEL_MAX}"
        )),
    }
}

/// Sets the concurrency for this process (`brisk repro --real-parallel N`); it wins
/// over [`PARALLEL_ENV`].
pub fn set_parallel(n: usize) -> Result<(), String> {
    parse_parallel("--real-parallel", &n.to_string())?;
    FLAG.store(n, Ordering::Relaxed);
    Ok(())
}

/// The concurrency asked for: the flag, else [`PARALLEL_ENV`], else
/// [`PARALLEL_DEFAULT`]; an invalid environment value is an error naming it.
pub fn parallel_setting() -> Result<usize, String> {
    match FLAG.load(Ordering::Relaxed) {
        0 => match std::env::var(PARALLEL_ENV) {
            Ok(v) => parse_parallel(PARALLEL_ENV, &v),
            Err(_) => Ok(PARALLEL_DEFAULT),
        },
        n => Ok(n),
    }
}

/// The concurrency the phase uses: [`parallel_setting`], never more than the CPUs
/// (on one CPU the emulator's real-time loop and the endpoints already share it); an
/// invalid setting falls back to one at a time, with a message.
pub fn parallel() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match parallel_setting() {
        Ok(n) => n.min(cpus).max(1),
        Err(msg) => {
            eprintln!("brisk repro: {msg}; running real-time experiments one at a time");
            1
        }
    }
}

/// What the phase did, for `--timings`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseReport {
    /// The concurrency it started with.
    pub parallel: usize,
    /// Items run again alone because an emulator reported a warning while they ran
    /// beside another, in order.
    pub rerun: Vec<usize>,
}

/// Runs every item of `items` once and hands its result to `keep`, up to `parallel`
/// at once; `alone(k)` items run only by themselves, after the others. `warnings()`
/// is the process's count of emulator warnings so far. An item that ran beside
/// another while the count rose is run again alone at the end: `keep` then gets the
/// number of warnings seen in the dropped attempt. Items are started in the given
/// order.
pub fn run_phase<R: Send>(
    items: &[usize],
    parallel: usize,
    alone: &(dyn Fn(usize) -> bool + Sync),
    warnings: &(dyn Fn() -> u64 + Sync),
    run: &(dyn Fn(usize) -> R + Sync),
    keep: &(dyn Fn(usize, R, Option<u64>) + Sync),
) -> PhaseReport {
    let parallel = parallel.max(1);
    let (together, solo): (Vec<usize>, Vec<usize>) = if parallel > 1 {
        items.iter().partition(|&&k| !alone(k))
    } else {
        (Vec::new(), items.to_vec())
    };
    let queue = Mutex::new(VecDeque::from(together));
    let redo: Mutex<Vec<(usize, u64)>> = Mutex::new(Vec::new());
    let lock = |m: &Mutex<VecDeque<usize>>| m.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    if parallel > 1 {
        let in_flight = AtomicUsize::new(0);
        // Items started so far: one that started while another ran shared the host.
        let started = AtomicUsize::new(0);
        let fall_back = AtomicBool::new(false);
        let workers = parallel.min(lock_len(&queue));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    while !fall_back.load(Ordering::Acquire) {
                        let Some(k) = lock(&queue) else { break };
                        let w0 = warnings();
                        let others_at_start = in_flight.fetch_add(1, Ordering::AcqRel) > 0;
                        let me = started.fetch_add(1, Ordering::AcqRel) + 1;
                        let r = run(k);
                        let beside =
                            others_at_start || started.load(Ordering::Acquire) != me;
                        in_flight.fetch_sub(1, Ordering::AcqRel);
                        let seen = warnings().saturating_sub(w0);
                        if beside && seen > 0 {
                            // The host did not keep two labs in real time: stop
                            // starting labs side by side and run this one again alone.
                            fall_back.store(true, Ordering::Release);
                            redo.lock().unwrap_or_else(|p| p.into_inner()).push((k, seen));
                            eprintln!(
                                "brisk repro: an emulator reported {seen} warning(s) while real-time experiments ran side by side; the rest run one at a time, and this one again alone"
                            );
                        } else {
                            keep(k, r, None);
                        }
                    }
                });
            }
        });
    }
    // Whatever the workers left (after a fall-back), then the ones that run alone,
    // then the re-runs.
    let rest: Vec<usize> = std::iter::from_fn(|| lock(&queue)).collect();
    for k in rest.into_iter().chain(solo) {
        keep(k, run(k), None);
    }
    let redo = redo.into_inner().unwrap_or_else(|p| p.into_inner());
    for &(k, seen) in &redo {
        keep(k, run(k), Some(seen));
    }
    PhaseReport {
        parallel,
        rerun: redo.into_iter().map(|(k, _)| k).collect(),
    }
}

fn lock_len(q: &Mutex<VecDeque<usize>>) -> usize {
    q.lock().unwrap_or_else(|p| p.into_inner()).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    /// (item, attempt, warnings of a dropped attempt), in the order kept.
    type Kept = Vec<(usize, usize, Option<u64>)>;

    /// Runs items that sleep `ms`, optionally raising the warning count mid-run;
    /// returns (item, attempt number, rerun-warnings) in the order kept, the peak
    /// number of items running at once, and the report.
    fn phase(
        n: usize,
        parallel: usize,
        ms: u64,
        warn_in: Option<usize>,
        alone: &(dyn Fn(usize) -> bool + Sync),
    ) -> (Kept, usize, PhaseReport) {
        let count = AtomicU64::new(0);
        let attempts: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        let (now, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let kept = Mutex::new(Vec::new());
        let items: Vec<usize> = (0..n).collect();
        let rep = run_phase(
            &items,
            parallel,
            alone,
            &|| count.load(Ordering::SeqCst),
            &|k| {
                let a = attempts[k].fetch_add(1, Ordering::SeqCst) + 1;
                let c = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(c, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(ms / 2));
                if warn_in == Some(k) && a == 1 {
                    count.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(ms / 2));
                now.fetch_sub(1, Ordering::SeqCst);
                a
            },
            &|k, a, w| kept.lock().unwrap().push((k, a, w)),
        );
        (kept.into_inner().unwrap(), peak.load(Ordering::SeqCst), rep)
    }

    #[test]
    fn items_run_side_by_side_up_to_the_limit_and_each_is_kept_once() {
        let (kept, peak, rep) = phase(6, 2, 60, None, &|_| false);
        let mut ids: Vec<usize> = kept.iter().map(|k| k.0).collect();
        ids.sort();
        assert_eq!(ids, (0..6).collect::<Vec<_>>());
        assert!(
            kept.iter().all(|&(_, a, w)| a == 1 && w.is_none()),
            "{kept:?}"
        );
        assert_eq!(peak, 2);
        assert!(rep.rerun.is_empty());
    }

    #[test]
    fn one_at_a_time_keeps_the_order() {
        let (kept, peak, rep) = phase(4, 1, 10, Some(1), &|_| false);
        // Alone, a warning is the experiment's own business (its claims say so).
        assert_eq!(
            kept,
            vec![(0, 1, None), (1, 1, None), (2, 1, None), (3, 1, None)]
        );
        assert_eq!(peak, 1);
        assert!(rep.rerun.is_empty());
    }

    #[test]
    fn a_warning_beside_another_reruns_it_alone_and_stops_the_side_by_side_runs() {
        let (kept, peak, rep) = phase(6, 2, 200, Some(0), &|_| false);
        // Item 0 warned while item 1 ran beside it: both saw the warning, both are
        // dropped and run again at the end, alone (attempt 2), with the count.
        assert_eq!(rep.rerun.len(), 2, "{kept:?}");
        assert!(rep.rerun.contains(&0) && rep.rerun.contains(&1));
        let tail = &kept[kept.len() - 2..];
        assert!(
            tail.iter().all(|&(_, a, w)| a == 2 && w == Some(1)),
            "{kept:?}"
        );
        // Items 2..6 ran after the fall-back, one at a time, in order, once.
        let mid: Kept = kept[..4].to_vec();
        assert_eq!(
            mid,
            vec![(2, 1, None), (3, 1, None), (4, 1, None), (5, 1, None)]
        );
        assert_eq!(peak, 2);
    }

    #[test]
    fn items_that_must_run_alone_run_after_the_others_by_themselves() {
        let (kept, _, _) = phase(5, 2, 40, None, &|k| k == 1 || k == 3);
        let last: Vec<usize> = kept[3..].iter().map(|k| k.0).collect();
        assert_eq!(last, vec![1, 3]);
    }

    #[test]
    fn settings_outside_the_range_are_errors_naming_them() {
        assert_eq!(parse_parallel("X", "3"), Ok(3));
        for bad in ["0", "9", "-1", "two", ""] {
            let e = parse_parallel(PARALLEL_ENV, bad).unwrap_err();
            assert!(e.contains(PARALLEL_ENV) && e.contains("1..=8"), "{e}");
        }
    }
}
