//! Running a sweep's jobs on this machine's cores: a pool of threads that take jobs
//! in order, each result stored at its job's index, so results never depend on which
//! thread ran what (the same guarantee the Ray backend gives by keying results).

use crate::job::run_job;
use crate::spec::Sweep;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One finished run: its cell, its seed and its summary (or why it failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    pub cell: usize,
    pub seed: u64,
    pub summary: Result<String, String>,
}

/// Runs every job of `sweep` (cell-major) on `threads` threads; `done(k, total)` is
/// called after each run finishes, from the thread that ran it.
pub fn run_local(
    sweep: &Sweep,
    threads: usize,
    done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<RunOutput> {
    let jobs = sweep.jobs();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Result<String, String>>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(cell, seed)) = jobs.get(i) else {
                    break;
                };
                let r = run_job(sweep, cell, seed);
                if let Ok(mut g) = slots.lock() {
                    g[i] = Some(r);
                }
                done(finished.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|p| p.into_inner());
    jobs.iter()
        .zip(slots)
        .map(|(&(cell, seed), r)| RunOutput {
            cell,
            seed,
            summary: r.unwrap_or_else(|| Err("run did not finish".into())),
        })
        .collect()
}
