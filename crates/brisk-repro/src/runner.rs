//! Running plans: every job of every selected experiment on one pool of
//! `available_parallelism` threads, long jobs first, with a progress bar. Each job is
//! an independent, deterministic simulation whose result is stored at its own index,
//! so results never depend on scheduling. A simulated experiment is analysed on the
//! worker that finishes its last run, so its line (and its memory) is done with as soon
//! as its runs are, not after the whole pool; one without runs (its analysis drives its
//! own simulations) is analysed on the pool before any run, beside the other worker's
//! runs.
//!
//! Real-time experiments ([`Kind::RealTime`]) run afterwards: their simulator jobs go
//! on the same pool, but their analyses (which drive real packets in real time) run
//! only once the pool has finished, after every simulated experiment's analysis, so no
//! simulation competes with them for the CPU; up to `real_phase::parallel()` of them
//! run side by side, each in its own namespaces, and one that ran beside another while
//! an emulator reported a warning runs again alone (crate::real_phase). A host that cannot run
//! them gets `n/a` rows and a message on stderr, never a failure.

use crate::experiment::{failed, skipped, Experiment, ExperimentResult, Job, Kind};
use crate::timings::{process_cpu, thread_cpu, Timing, Timings};
use brisk_sim::RunResult;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Real-time experiments that run by themselves even when others may run side by
/// side: `mn-cpu` compares CPU times (another lab's threads would share its caches and
/// core), `aqm-vs-ns3` runs ns-3, which is CPU-bound rather than real time, and
/// `real-bbr`, whose REAL-BBR-2a (brisk BBR's mean srtt against Linux bbr's) failed in
/// all three side-by-side quick runs measured (10.8–14.5 % against 2.3–3.7 % alone on
/// the same host, docs/performance.md): every lab pins brisk's stack thread to the
/// same (last) CPU, so two labs' paced senders share it.
pub const ALONE: &[&str] = &[
    crate::exp::mn_cpu::ID,
    crate::exp::aqm_ns3::ID,
    crate::exp::real_bbr::ID,
];

/// How often a [`Progress`] in line mode reports that work is still going on.
pub const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(60);

/// Progress on stderr: a bar on a terminal; when stderr is a file or pipe (CI logs,
/// `2>log`), one line per finished experiment (verdict counts, elapsed time) and a
/// heartbeat line at least every [`HEARTBEAT`] (runs done, what is running); or
/// nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    started: std::time::Instant,
    /// Labels of the jobs the pool is running now, shown on the bar.
    running: Mutex<Vec<String>>,
    /// Runs finished and planned, for the heartbeat.
    runs_done: AtomicUsize,
    runs_total: AtomicUsize,
    heartbeat: std::time::Duration,
    /// Where lines go instead of stderr (tests).
    sink: Option<std::sync::Arc<Mutex<Vec<String>>>>,
}

/// Where [`status`] goes: the bar of the [`Progress`] that is running experiments, and
/// whether it prints lines instead.
static STATUS: Mutex<Option<(Option<ProgressBar>, bool, std::time::Instant)>> = Mutex::new(None);

/// Tells the user what an analysis is doing now (e.g. which real-time variant runs):
/// the bar's message on a terminal, a line otherwise. A no-op outside a run.
pub fn status(msg: &str) {
    let g = STATUS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((bar, lines, started)) = g.as_ref() {
        if let Some(b) = bar {
            b.set_message(msg.to_string());
        }
        if *lines {
            eprintln!(
                "brisk repro: {msg} at {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
}

impl Progress {
    /// No output.
    pub fn hidden() -> Self {
        Progress {
            bar: None,
            lines: false,
            started: std::time::Instant::now(),
            running: Mutex::new(Vec::new()),
            runs_done: AtomicUsize::new(0),
            runs_total: AtomicUsize::new(0),
            heartbeat: HEARTBEAT,
            sink: None,
        }
    }

    /// Line mode into `sink` instead of stderr, with the given heartbeat (tests).
    pub fn lines_into(
        sink: std::sync::Arc<Mutex<Vec<String>>>,
        heartbeat: std::time::Duration,
    ) -> Self {
        Progress {
            lines: true,
            heartbeat,
            sink: Some(sink),
            ..Self::hidden()
        }
    }

    /// One line, prefixed and timed.
    fn line(&self, msg: &str) {
        let l = format!(
            "brisk repro: {msg} at {:.0} s",
            self.started.elapsed().as_secs_f64()
        );
        match &self.sink {
            Some(s) => s.lock().unwrap_or_else(|p| p.into_inner()).push(l),
            None => eprintln!("{l}"),
        }
    }

    /// The heartbeat's line: runs done and what the pool runs now.
    fn beat(&self) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let what = match running.len() {
            0 => "analysing".to_string(),
            1 => format!("running {}", running[0]),
            n => format!("running {} and {} more", running[0], n - 1),
        };
        self.line(&format!(
            "{}/{} runs done, {what},",
            self.runs_done.load(Ordering::Relaxed),
            self.runs_total.load(Ordering::Relaxed)
        ));
    }

    /// A bar on stderr when `bar` is wanted and stderr is a terminal; otherwise, when
    /// stderr is not a terminal, plain lines.
    pub fn stderr(bar: bool) -> Self {
        let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if b.is_hidden() {
            return Progress {
                lines: true,
                ..Self::hidden()
            };
        }
        if !bar {
            return Self::hidden();
        }
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs, eta {eta} {msg}",
        ) {
            b.set_style(style);
        }
        b.set_prefix("brisk repro");
        // The clock keeps ticking while nothing finishes (the real-time phase).
        b.enable_steady_tick(std::time::Duration::from_millis(250));
        Progress {
            bar: Some(b),
            ..Self::hidden()
        }
    }

    /// One experiment is analysed: a line in `lines` mode.
    fn done(&self, r: &ExperimentResult) {
        if !self.lines {
            return;
        }
        let n = |v: crate::claim::Verdict| r.claims.iter().filter(|c| c.verdict == v).count();
        self.line(&format!(
            "{} done ({} pass, {} fail, {} n/a)",
            r.id,
            n(crate::claim::Verdict::Pass),
            n(crate::claim::Verdict::Fail),
            n(crate::claim::Verdict::NotApplicable)
        ));
    }

    fn start(&self, total: usize) {
        self.runs_total.store(total, Ordering::Relaxed);
        self.runs_done.store(0, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
            b.set_position(0);
        }
        *STATUS.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((self.bar.clone(), self.lines, self.started));
    }

    /// The bar names the job running longest (and how many others run beside it).
    fn show_running(&self, running: &[String]) {
        if let Some(b) = &self.bar {
            let mut msg = running.first().cloned().unwrap_or_default();
            if running.len() > 1 {
                msg.push_str(&format!(" +{}", running.len() - 1));
            }
            b.set_message(msg);
        }
    }

    fn begin_job(&self, label: &str) {
        let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        r.push(label.to_string());
        self.show_running(&r);
    }

    fn tick(&self, label: &str) {
        let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = r.iter().position(|l| l == label) {
            r.remove(i);
        }
        self.show_running(&r);
        self.runs_done.fetch_add(1, Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// Shows what is running outside the pool.
    fn message(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
        if self.lines {
            self.line(&format!("{msg} running"));
        }
    }

    fn finish(&self) {
        *STATUS.lock().unwrap_or_else(|p| p.into_inner()) = None;
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
    let slots: Mutex<Vec<Option<Result<RunResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    run_pool(jobs, threads, progress, &|i, r| {
        if let Ok(mut g) = slots.lock() {
            g[i] = Some(r);
        }
    });
    slots
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("run did not finish".into())))
        .collect()
}

/// Runs `jobs` on `threads` workers, handing job `i`'s result to `done(i, result)` on
/// the worker that ran it.
fn run_pool(
    jobs: &[Job],
    threads: usize,
    progress: &Progress,
    done: &(dyn Fn(usize, Result<RunResult, String>) + Sync),
) {
    run_pool_timed(jobs, threads, progress, (0, &|_| {}), &|i, r, _| done(i, r));
}

/// [`run_pool`], also handing over the run's wall and thread CPU time; before any job
/// the workers take `first.0` tasks, calling `first.1(t)` for task `t` (the analyses
/// of experiments without runs, which are long simulations of their own).
fn run_pool_timed(
    jobs: &[Job],
    threads: usize,
    progress: &Progress,
    first: (usize, &(dyn Fn(usize) + Sync)),
    done: &(dyn Fn(usize, Result<RunResult, String>, (Duration, Duration)) + Sync),
) {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    // Longest first, index as the tie-break (any order gives the same results).
    order.sort_by(|&a, &b| jobs[b].cost().total_cmp(&jobs[a].cost()).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let (n_first, task) = first;
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, (jobs.len() + n_first).max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k < n_first {
                    task(k);
                    continue;
                }
                let Some(&i) = order.get(k - n_first) else {
                    break;
                };
                let job = &jobs[i];
                let (wall0, cpu0) = (Instant::now(), thread_cpu());
                progress.begin_job(&job.label);
                let opts = brisk_sim::run::RunOptions {
                    dropped_ranges: job.dropped_ranges,
                    ..Default::default()
                };
                let mut r = match &job.net {
                    Some(net) => {
                        brisk_sim::wl_run::run_net(net, job.seed).map(RunResult::from_workload)
                    }
                    None => brisk_sim::run::run_with(&job.scenario, job.seed, &opts),
                }
                .map_err(|e| format!("{}: {e}", job.label));
                if let (Ok(res), false) = (&mut r, job.keep_cc_series) {
                    // All results are held until analysis; most never read these rows.
                    for f in &mut res.flows {
                        f.cc_series = Vec::new();
                    }
                }
                if let (Ok(res), true) = (&mut r, job.lean) {
                    slim(res);
                }
                release_freed_memory();
                progress.tick(&job.label);
                done(i, r, (wall0.elapsed(), thread_cpu().saturating_sub(cpu0)));
            });
        }
    });
}

/// Returns the memory a finished run freed to the OS. glibc keeps freed heap pages
/// (and, after a large free, serves later large allocations from the heap too), so
/// a pool of runs with thousands of flows each grew to ~11 GB resident for ~1 GB of
/// live data; trimming after each run keeps the pool near its live size.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim only releases free memory at the allocator's discretion;
        // it takes no pointers and is thread-safe in glibc.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Drops a run's per-flow series and quantile vectors and the bottleneck's series
/// (`Job::lean`).
fn slim(r: &mut RunResult) {
    for f in &mut r.flows {
        f.goodput_series = Vec::new();
        f.rx_series = Vec::new();
        f.exchanges = Vec::new();
        f.rtt_series = Vec::new();
        f.cwnd_series = Vec::new();
        f.cc_series = Vec::new();
        f.rtt_quantiles = Vec::new();
        f.record_latency_quantiles = Vec::new();
        f.record_deliveries = Vec::new();
        f.record_first_tx = Vec::new();
        f.record_latency_tx_quantiles = Vec::new();
        f.ack_latency_quantiles = Vec::new();
    }
    r.bottleneck.queue_series = Vec::new();
    r.bottleneck.drop_records = Vec::new();
}

/// An experiment's plan as the runner holds it.
enum Planned {
    /// Its jobs' range in the pooled job list, and its analysis.
    Ready(std::ops::Range<usize>, crate::experiment::Analyse),
    Failed(String),
    Skipped(String),
}

/// Plans, runs (pooled) and analyses `exps`; one result per experiment, in order.
///
/// A simulated experiment is analysed by the worker that finishes its last run, one
/// without runs on the pool before the runs; real-time ones after the pool, one at a
/// time.
/// In line mode a heartbeat thread reports progress until everything is done.
pub fn run_experiments(
    exps: &[Experiment],
    quick: bool,
    progress: &Progress,
) -> Vec<ExperimentResult> {
    run_experiments_timed(exps, quick, progress).0
}

/// [`run_experiments`], and where the time went ([`Timings`]).
pub fn run_experiments_timed(
    exps: &[Experiment],
    quick: bool,
    progress: &Progress,
) -> (Vec<ExperimentResult>, Timings) {
    let (wall0, cpu0) = (Instant::now(), process_cpu());
    let mut plans = Vec::new();
    let mut jobs = Vec::new();
    // Job index -> experiment index.
    let mut owner = Vec::new();
    for (k, e) in exps.iter().enumerate() {
        if let Kind::RealTime { unsupported } = e.kind {
            if let Some(reason) = unsupported() {
                eprintln!("brisk repro: skipping {} (n/a): {reason}", e.id);
                plans.push(Planned::Skipped(reason));
                continue;
            }
        }
        match (e.plan)(quick) {
            Ok(p) => {
                let range = jobs.len()..jobs.len() + p.jobs.len();
                owner.extend(std::iter::repeat_n(k, p.jobs.len()));
                jobs.extend(p.jobs);
                plans.push(Planned::Ready(range, p.analyse));
            }
            Err(msg) => plans.push(Planned::Failed(msg)),
        }
    }
    progress.start(jobs.len());
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        if progress.lines {
            s.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(progress.heartbeat)
                {
                    progress.beat();
                }
            });
        }
        let (out, mut t) = run_planned(exps, quick, plans, &jobs, &owner, progress);
        drop(stop);
        t.total_wall = wall0.elapsed();
        t.total_cpu = process_cpu().saturating_sub(cpu0);
        (out, t)
    })
}

/// The pool, the analyses and the real-time phase of [`run_experiments`].
fn run_planned(
    exps: &[Experiment],
    quick: bool,
    plans: Vec<Planned>,
    jobs: &[Job],
    owner: &[usize],
    progress: &Progress,
) -> (Vec<ExperimentResult>, Timings) {
    let timing: Vec<Mutex<Timing>> = exps
        .iter()
        .enumerate()
        .map(|(k, e)| {
            Mutex::new(Timing {
                id: e.id,
                runs: owner.iter().filter(|&&o| o == k).count(),
                real_time: matches!(e.kind, Kind::RealTime { .. }),
                ..Timing::default()
            })
        })
        .collect();
    let time_of = |k: usize| timing[k].lock().unwrap_or_else(|p| p.into_inner());
    let slots: Mutex<Vec<Option<Result<RunResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let out: Mutex<Vec<Option<ExperimentResult>>> = Mutex::new(exps.iter().map(|_| None).collect());
    let remaining: Vec<AtomicUsize> = plans
        .iter()
        .map(|p| match p {
            Planned::Ready(range, _) => AtomicUsize::new(range.len()),
            _ => AtomicUsize::new(0),
        })
        .collect();
    let plans: Vec<Mutex<Option<Planned>>> =
        plans.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let take_plan = |k: usize| plans[k].lock().unwrap_or_else(|p| p.into_inner()).take();
    let take_runs = |range: std::ops::Range<usize>| -> Result<Vec<RunResult>, String> {
        let mut g = slots.lock().unwrap_or_else(|p| p.into_inner());
        g[range]
            .iter_mut()
            .map(|r| r.take().unwrap_or_else(|| Err("run did not finish".into())))
            .collect()
    };
    let store = |k: usize, r: ExperimentResult| {
        progress.done(&r);
        out.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(r);
    };
    // Analyses a simulated experiment whose runs are all done; `on_pool` picks the
    // thread's CPU clock (other workers run beside it) over the process's.
    let analyse_now = |k: usize, on_pool: bool| {
        if matches!(exps[k].kind, Kind::RealTime { .. }) {
            return;
        }
        let cpu = if on_pool { thread_cpu } else { process_cpu };
        let (wall0, cpu0) = (Instant::now(), cpu());
        let r = match take_plan(k) {
            Some(Planned::Ready(range, analyse)) => match take_runs(range) {
                Ok(runs) => analyse(&runs),
                Err(msg) => failed(&exps[k], &msg),
            },
            Some(Planned::Failed(msg)) => failed(&exps[k], &msg),
            Some(Planned::Skipped(reason)) => skipped(&exps[k], &reason),
            None => return,
        };
        {
            let mut t = time_of(k);
            t.analysis_wall = wall0.elapsed();
            t.analysis_cpu = cpu().saturating_sub(cpu0);
        }
        store(k, r);
    };
    // Experiments without runs (own-driver ones simulate in their analysis, for tens of
    // seconds) are analysed on the pool, first, beside the runs: after the pool, one at
    // a time, they left a core idle.
    let early: Vec<usize> = (0..exps.len())
        .filter(|&k| {
            !matches!(exps[k].kind, Kind::RealTime { .. })
                && remaining[k].load(Ordering::Relaxed) == 0
        })
        .collect();
    let threads = threads();
    let pool0 = Instant::now();
    let first = |t: usize| analyse_now(early[t], true);
    run_pool_timed(jobs, threads, progress, (early.len(), &first), &|i,
                                                                     r,
                                                                     (
        wall,
        cpu,
    )| {
        slots.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
        let k = owner[i];
        {
            let mut t = time_of(k);
            t.run_wall += wall;
            t.run_cpu += cpu;
        }
        if remaining[k].fetch_sub(1, Ordering::AcqRel) == 1 {
            analyse_now(k, true);
        }
    });
    let pool_wall = pool0.elapsed();
    // Anything not analysed yet (none: every simulated experiment was, on the pool).
    let after0 = Instant::now();
    for k in 0..exps.len() {
        analyse_now(k, false);
    }
    let after_pool_wall = after0.elapsed();
    // The pool is done and every other analysis has run: real time, up to
    // `real_phase::parallel()` experiments at once (real_phase.rs says when not).
    let real0 = Instant::now();
    let mut real = Vec::new();
    for (k, e) in exps.iter().enumerate() {
        let waiting = plans[k].lock().unwrap_or_else(|p| p.into_inner());
        let ready = matches!(*waiting, Some(Planned::Ready(..)));
        drop(waiting);
        if ready {
            real.push(k);
            continue;
        }
        match take_plan(k) {
            Some(Planned::Failed(msg)) => store(k, failed(e, &msg)),
            Some(Planned::Skipped(reason)) => store(k, skipped(e, &reason)),
            _ => {}
        }
    }
    // The simulator runs behind each real-time experiment, kept for a re-run.
    let kept_runs: Vec<Mutex<Option<Vec<RunResult>>>> =
        exps.iter().map(|_| Mutex::new(None)).collect();
    let run_real = |k: usize| -> (ExperimentResult, Duration, Duration) {
        let e = &exps[k];
        let (wall0, cpu0) = (Instant::now(), process_cpu());
        let r = match take_plan(k) {
            Some(Planned::Ready(range, analyse)) => match take_runs(range) {
                Ok(runs) => {
                    progress.message(&format!("{} (real time)", e.id));
                    let r = analyse(&runs);
                    *kept_runs[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(runs);
                    r
                }
                Err(msg) => failed(e, &msg),
            },
            Some(Planned::Failed(msg)) => failed(e, &msg),
            Some(Planned::Skipped(reason)) => skipped(e, &reason),
            // Again, alone: a fresh plan (its analysis is consumed) over the same runs.
            None => {
                let runs = kept_runs[k]
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take();
                match ((e.plan)(quick), runs) {
                    (Ok(p), Some(runs)) if p.jobs.len() == runs.len() => {
                        progress.message(&format!("{} (real time, again alone)", e.id));
                        (p.analyse)(&runs)
                    }
                    (Err(msg), _) => failed(e, &msg),
                    _ => failed(e, "re-run alone: its simulator runs are not kept"),
                }
            }
        };
        (r, wall0.elapsed(), process_cpu().saturating_sub(cpu0))
    };
    let keep = |k: usize,
                (mut r, wall, cpu): (ExperimentResult, Duration, Duration),
                seen: Option<u64>| {
        if let Some(n) = seen {
            r.notes.push(format!(
                "Run again alone: while it ran beside another real-time experiment the emulator reported {n} warning(s), so that attempt was not used."
            ));
        }
        {
            let mut t = time_of(k);
            t.analysis_wall = wall;
            t.analysis_cpu = cpu;
        }
        store(k, r);
    };
    let phase = crate::real_phase::run_phase(
        &real,
        crate::real_phase::parallel(),
        &|k| ALONE.contains(&exps[k].id),
        &brisk_emu::emu::health::warnings_reported,
        &run_real,
        &keep,
    );
    let real_time_wall = real0.elapsed();
    progress.finish();
    let out = out.into_inner().unwrap_or_else(|p| p.into_inner());
    let results = exps
        .iter()
        .zip(out)
        .map(|(e, r)| r.unwrap_or_else(|| failed(e, "not analysed")))
        .collect();
    let t = Timings {
        experiments: timing
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
            .collect(),
        threads,
        pool_wall,
        after_pool_wall,
        real_time_wall,
        real_parallel: phase.parallel,
        real_reruns: phase.rerun.iter().map(|&k| exps[k].id).collect(),
        ..Timings::default()
    };
    (results, t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Claim, Verdict};
    use crate::experiment::Plan;
    use std::sync::Mutex;

    /// The order analyses ran in (tests in this module share it under `ORDER_LOCK`).
    static ORDER: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    static ORDER_LOCK: Mutex<()> = Mutex::new(());

    fn plan_logging(id: &'static str) -> Result<Plan, String> {
        Ok(Plan {
            jobs: Vec::new(),
            analyse: Box::new(move |_| {
                if let Ok(mut o) = ORDER.lock() {
                    o.push(id);
                }
                let mut r = ExperimentResult::new(id, "t");
                r.claims.push(Claim::new("X-1", "x").check(true));
                r
            }),
        })
    }

    fn plan_real(_: bool) -> Result<Plan, String> {
        plan_logging("real")
    }
    fn plan_sim(_: bool) -> Result<Plan, String> {
        plan_logging("sim")
    }
    fn supported() -> Option<String> {
        None
    }
    fn no_tun() -> Option<String> {
        Some("/dev/net/tun is missing".into())
    }

    fn exp(id: &'static str, kind: Kind, plan: fn(bool) -> Result<Plan, String>) -> Experiment {
        Experiment {
            id,
            title: "t",
            kind,
            claims: &["X-1", "X-2"],
            plan,
        }
    }

    #[test]
    fn real_time_analyses_run_after_simulated_ones_and_results_keep_order() {
        let _g = ORDER_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        ORDER.lock().unwrap().clear();
        let exps = [
            exp(
                "real",
                Kind::RealTime {
                    unsupported: supported,
                },
                plan_real,
            ),
            exp("sim", Kind::Simulated, plan_sim),
        ];
        let out = run_experiments(&exps, true, &Progress::hidden());
        assert_eq!(*ORDER.lock().unwrap(), vec!["sim", "real"]);
        assert_eq!(out[0].id, "real");
        assert_eq!(out[1].id, "sim");
    }

    /// Analyses of `noisy` so far; its first one reports an emulator warning.
    static NOISY_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn plan_sleeping(id: &'static str, warn_first: bool) -> Result<Plan, String> {
        Ok(Plan {
            jobs: Vec::new(),
            analyse: Box::new(move |_| {
                std::thread::sleep(std::time::Duration::from_millis(150));
                if warn_first && NOISY_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
                    brisk_emu::emu::health::note_reported(1);
                }
                std::thread::sleep(std::time::Duration::from_millis(150));
                let mut r = ExperimentResult::new(id, "t");
                r.claims.push(Claim::new("X-1", "x").check(true));
                r
            }),
        })
    }
    fn plan_noisy(_: bool) -> Result<Plan, String> {
        plan_sleeping("noisy", true)
    }
    fn plan_quiet(_: bool) -> Result<Plan, String> {
        plan_sleeping("quiet", false)
    }

    #[test]
    fn a_real_time_experiment_beside_an_emulator_warning_is_planned_again_and_run_alone() {
        let _g = ORDER_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        crate::real_phase::set_parallel(2).unwrap();
        let real = Kind::RealTime {
            unsupported: supported,
        };
        let exps = [
            exp("noisy", real, plan_noisy),
            exp("quiet", real, plan_quiet),
        ];
        let (out, t) = run_experiments_timed(&exps, true, &Progress::hidden());
        assert_eq!((out[0].id, out[1].id), ("noisy", "quiet"));
        assert!(out.iter().all(|r| r.claims[0].verdict == Verdict::Pass));
        if crate::real_phase::parallel() < 2 {
            return; // one CPU: nothing runs side by side
        }
        // It ran beside `quiet` when the warning came: dropped and run again alone
        // (so, normally, is `quiet`, which saw the same warning).
        assert_eq!(NOISY_CALLS.load(Ordering::SeqCst), 2);
        assert!(t.real_reruns.contains(&"noisy"), "{t:?}");
        assert!(out[0].notes.iter().any(|n| n.contains("Run again alone")));
        assert_eq!(t.real_parallel, 2);
    }

    #[test]
    fn unsupported_real_time_experiments_are_not_applicable_not_failed() {
        let _g = ORDER_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        ORDER.lock().unwrap().clear();
        let exps = [exp(
            "real",
            Kind::RealTime {
                unsupported: no_tun,
            },
            plan_real,
        )];
        let out = run_experiments(&exps, true, &Progress::hidden());
        assert!(
            ORDER.lock().unwrap().is_empty(),
            "must not be planned or run"
        );
        assert_eq!(out[0].claims.len(), 2);
        for c in &out[0].claims {
            assert_eq!(c.verdict, Verdict::NotApplicable);
            assert!(c.note.contains("/dev/net/tun is missing"), "{}", c.note);
        }
    }

    fn plan_slow(_: bool) -> Result<Plan, String> {
        Ok(Plan {
            jobs: Vec::new(),
            analyse: Box::new(|_| {
                std::thread::sleep(std::time::Duration::from_millis(400));
                let mut r = ExperimentResult::new("slow", "t");
                r.claims.push(Claim::new("X-1", "x").check(true));
                r
            }),
        })
    }

    /// Two one-second runs; the analysis sees both, in order.
    fn plan_runs(_: bool) -> Result<Plan, String> {
        let sc = brisk_sim::Scenario::from_toml_str(
            "name = \"t\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n",
        )
        .map_err(|e| e.to_string())?;
        Ok(Plan {
            jobs: vec![Job::new("a", sc.clone(), 1), Job::new("b", sc, 2)],
            analyse: Box::new(|runs| {
                let mut r = ExperimentResult::new("runs", "t");
                r.claims.push(
                    Claim::new("X-1", "two runs")
                        .check(runs.len() == 2 && runs.iter().all(|x| x.flows[0].stream_ok)),
                );
                r
            }),
        })
    }

    #[test]
    fn line_mode_prints_a_line_per_experiment_and_a_heartbeat() {
        let sink = std::sync::Arc::new(Mutex::new(Vec::new()));
        let p = Progress::lines_into(sink.clone(), std::time::Duration::from_millis(50));
        let exps = [
            exp("runs", Kind::Simulated, plan_runs),
            exp("slow", Kind::Simulated, plan_slow),
        ];
        let out = run_experiments(&exps, true, &p);
        assert_eq!(
            out[0].claims[0].verdict,
            Verdict::Pass,
            "{:?}",
            out[0].claims
        );
        let lines = sink.lock().unwrap().clone();
        for id in ["runs", "slow"] {
            let want = format!("brisk repro: {id} done (1 pass, 0 fail, 0 n/a) at ");
            assert!(lines.iter().any(|l| l.starts_with(&want)), "{lines:?}");
        }
        // The 400-ms analysis alone spans several 50-ms beats.
        let beats: Vec<&String> = lines
            .iter()
            .filter(|l| l.contains("/2 runs done"))
            .collect();
        assert!(beats.len() >= 3, "{lines:?}");
        assert!(
            beats
                .last()
                .is_some_and(|l| l.contains("2/2 runs done, analysing")),
            "{lines:?}"
        );
    }
}
