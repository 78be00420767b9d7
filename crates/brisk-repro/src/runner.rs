//! Running plans: every job of every selected experiment on one pool of
//! `available_parallelism` threads, long jobs first, with a progress bar. Each job is
//! an independent, deterministic simulation whose result is stored at its own index,
//! so results never depend on scheduling.

use crate::experiment::{failed, Experiment, ExperimentResult, Job};
use brisk_sim::RunResult;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A progress bar on stderr, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// No output.
    pub fn hidden() -> Self {
        Progress { bar: None }
    }

    /// A bar on stderr when `visible` and stderr is a terminal.
    pub fn stderr(visible: bool) -> Self {
        if !visible {
            return Self::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if bar.is_hidden() {
            return Self::hidden();
        }
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs {msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix("brisk repro");
        Progress { bar: Some(bar) }
    }

    fn start(&self, total: usize) {
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
            b.set_position(0);
        }
    }

    fn tick(&self, label: &str) {
        if let Some(b) = &self.bar {
            b.set_message(label.to_string());
            b.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Worker threads to use: the available cores (at least 1).
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `jobs` on `threads` workers; result `i` belongs to job `i`.
pub fn run_jobs(
    jobs: &[Job],
    threads: usize,
    progress: &Progress,
) -> Vec<Result<RunResult, String>> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    // Longest first, index as the tie-break (any order gives the same results).
    order.sort_by(|&a, &b| jobs[b].cost().total_cmp(&jobs[a].cost()).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Result<RunResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                let job = &jobs[i];
                let r = brisk_sim::run(&job.scenario, job.seed)
                    .map_err(|e| format!("{}: {e}", job.label));
                if let Ok(mut g) = slots.lock() {
                    g[i] = Some(r);
                }
                progress.tick(&job.label);
            });
        }
    });
    slots
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not finish".into())))
        .collect()
}

/// Plans, runs (pooled) and analyses `exps`; one result per experiment, in order.
pub fn run_experiments(
    exps: &[Experiment],
    quick: bool,
    progress: &Progress,
) -> Vec<ExperimentResult> {
    let mut plans = Vec::new();
    let mut jobs = Vec::new();
    for e in exps {
        match (e.plan)(quick) {
            Ok(p) => {
                let range = jobs.len()..jobs.len() + p.jobs.len();
                jobs.extend(p.jobs);
                plans.push(Ok((range, p.analyse)));
            }
            Err(msg) => plans.push(Err(msg)),
        }
    }
    progress.start(jobs.len());
    let mut results = run_jobs(&jobs, threads(), progress);
    progress.finish();
    let mut out = Vec::new();
    for (e, plan) in exps.iter().zip(plans) {
        match plan {
            Err(msg) => out.push(failed(e, &msg)),
            Ok((range, analyse)) => {
                let mine: Result<Vec<RunResult>, String> = results[range.clone()]
                    .iter_mut()
                    .map(|r| std::mem::replace(r, Err(String::new())))
                    .collect();
                match mine {
                    Ok(runs) => out.push(analyse(&runs)),
                    Err(msg) => out.push(failed(e, &msg)),
                }
            }
        }
    }
    out
}
