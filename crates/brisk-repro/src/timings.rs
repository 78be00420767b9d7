//! Where a suite run's time goes (`brisk repro --timings`, issue 36 §3): per experiment,
//! the wall and CPU time of its simulator runs and of its analysis, and the phases of the
//! whole run (the pool, the analyses after it, the real-time phase).
//!
//! The runs of all experiments share one pool, so an experiment's run time is the sum
//! over its runs (each run is one thread's work), not a stretch of the suite's clock.
//! CPU time is the running thread's (`CLOCK_THREAD_CPUTIME_ID`) for runs and for
//! analyses done on the pool; an analysis done after the pool (own-driver and real-time
//! experiments, which may start threads of their own) gets the process's CPU time over
//! its span (`CLOCK_PROCESS_CPUTIME_ID`), nothing else running then but the heartbeat,
//! except when real-time experiments run side by side (crate::real_phase): then each
//! one's analysis CPU includes whatever ran beside it, and only the total is exact.
//!
//! Timings are measurements of this host at this moment; they never enter a result.

use std::fmt::Write;
use std::time::Duration;

/// One experiment's time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timing {
    pub id: &'static str,
    /// Simulator runs (jobs) it planned.
    pub runs: usize,
    /// Sum of its runs' wall and CPU time.
    pub run_wall: Duration,
    pub run_cpu: Duration,
    /// Its analysis (for own-driver and real-time experiments, most of the work).
    pub analysis_wall: Duration,
    pub analysis_cpu: Duration,
    /// Analysed in the real-time phase.
    pub real_time: bool,
}

impl Timing {
    /// Wall time this experiment kept a thread busy.
    pub fn wall(&self) -> Duration {
        self.run_wall + self.analysis_wall
    }
    pub fn cpu(&self) -> Duration {
        self.run_cpu + self.analysis_cpu
    }
}

/// A suite run's time: per experiment, in the order they were given, and per phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    pub experiments: Vec<Timing>,
    /// Worker threads of the pool.
    pub threads: usize,
    /// The pool: every simulator run and the analyses done on it.
    pub pool_wall: Duration,
    /// Analyses of experiments without runs, one at a time after the pool.
    pub after_pool_wall: Duration,
    /// The real-time analyses (up to `real_parallel` at once).
    pub real_time_wall: Duration,
    /// Real-time experiments allowed at once (crate::real_phase).
    pub real_parallel: usize,
    /// Real-time experiments run again alone after an emulator warning beside another.
    pub real_reruns: Vec<&'static str>,
    /// The whole suite, and the process's CPU time over it.
    pub total_wall: Duration,
    pub total_cpu: Duration,
}

fn s(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64())
}

impl Timings {
    /// Rows by wall time a thread spent, largest first (ties by id).
    fn sorted(&self) -> Vec<&Timing> {
        let mut v: Vec<&Timing> = self.experiments.iter().collect();
        v.sort_by(|a, b| b.wall().cmp(&a.wall()).then(a.id.cmp(b.id)));
        v
    }

    /// How the real-time phase ran, when not one at a time.
    fn real_phase_note(&self) -> String {
        let mut n = String::new();
        if self.real_parallel > 1 {
            n = format!(" (up to {} at once", self.real_parallel);
            if !self.real_reruns.is_empty() {
                n += &format!(
                    "; run again alone after an emulator warning: {}",
                    self.real_reruns.join(", ")
                );
            }
            n += ")";
        }
        n
    }

    /// The phase lines under both tables.
    fn phases(&self) -> Vec<String> {
        let busy: Duration = self.experiments.iter().map(Timing::wall).sum();
        vec![
            format!(
                "pool ({} threads): {} s wall; analyses after the pool: {} s; real-time phase: {} s{}",
                self.threads,
                s(self.pool_wall),
                s(self.after_pool_wall),
                s(self.real_time_wall),
                self.real_phase_note()
            ),
            format!(
                "total: {} s wall, {} s CPU (process); sum of the rows: {} s wall",
                s(self.total_wall),
                s(self.total_cpu),
                s(busy)
            ),
        ]
    }

    /// A plain-text table for the terminal, largest first.
    pub fn table(&self) -> String {
        let header = [
            "experiment",
            "runs",
            "run wall s",
            "run CPU s",
            "analysis wall s",
            "analysis CPU s",
            "wall s",
            "share",
        ];
        let busy: f64 = self
            .experiments
            .iter()
            .map(|t| t.wall().as_secs_f64())
            .sum();
        let rows: Vec<[String; 8]> = self
            .sorted()
            .into_iter()
            .map(|t| {
                let share = if busy > 0.0 {
                    100.0 * t.wall().as_secs_f64() / busy
                } else {
                    0.0
                };
                [
                    format!("{}{}", t.id, if t.real_time { " (real time)" } else { "" }),
                    t.runs.to_string(),
                    s(t.run_wall),
                    s(t.run_cpu),
                    s(t.analysis_wall),
                    s(t.analysis_cpu),
                    s(t.wall()),
                    format!("{share:.1} %"),
                ]
            })
            .collect();
        let mut w = header.map(str::len);
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut l = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                let pad = w[i].saturating_sub(c.chars().count());
                if i == 0 {
                    l.push_str(c);
                    l.push_str(&" ".repeat(pad));
                } else {
                    l.push_str(&" ".repeat(pad));
                    l.push_str(c);
                }
                l.push_str("  ");
            }
            l.trim_end().to_string()
        };
        let mut o = String::from("timings (wall and CPU seconds per experiment, largest first)\n");
        let _ = writeln!(o, "{}", line(&header.map(String::from)));
        for r in &rows {
            let _ = writeln!(o, "{}", line(r));
        }
        for p in self.phases() {
            let _ = writeln!(o, "  {p}");
        }
        o
    }

    /// The same table in Markdown, for the report directory (`timings.md`).
    pub fn markdown(&self) -> String {
        let mut o = String::from(
            "# brisk repro: timings\n\nWall and CPU seconds per experiment, largest first. \
             Run time is the sum over the experiment's simulator runs (they share one pool); \
             analysis time is its analysis step (for own-driver and real-time experiments, \
             most of its work). Measured on the host that ran the suite: the numbers depend \
             on its load.\n\n\
             | experiment | runs | run wall s | run CPU s | analysis wall s | analysis CPU s | wall s |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        for t in self.sorted() {
            let _ = writeln!(
                o,
                "| {}{} | {} | {} | {} | {} | {} | {} |",
                t.id,
                if t.real_time { " (real time)" } else { "" },
                t.runs,
                s(t.run_wall),
                s(t.run_cpu),
                s(t.analysis_wall),
                s(t.analysis_cpu),
                s(t.wall())
            );
        }
        o.push('\n');
        for p in self.phases() {
            let _ = writeln!(o, "- {p}");
        }
        o
    }
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    clock(CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process (every thread), user plus system.
pub fn process_cpu() -> Duration {
    clock(CLOCK_PROCESS_CPUTIME_ID)
}

// Linux's clock ids (time.h).
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn clock(id: i32) -> Duration {
    /// `struct timespec` on 64-bit Linux: two longs.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, tp: *mut Timespec) -> i32;
    }
    let mut t = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the pointer, which points at a
    // live local laid out as the C struct; it keeps no pointer.
    let rc = unsafe { clock_gettime(id, &mut t) };
    if rc != 0 || t.tv_sec < 0 || !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Elsewhere CPU time is not measured (the tables show 0).
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn clock(_id: i32) -> Duration {
    Duration::ZERO
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &'static str, run: u64, ana: u64, real: bool) -> Timing {
        Timing {
            id,
            runs: 2,
            run_wall: Duration::from_secs(run),
            run_cpu: Duration::from_secs(run),
            analysis_wall: Duration::from_secs(ana),
            analysis_cpu: Duration::from_millis(ana * 100),
            real_time: real,
        }
    }

    #[test]
    fn tables_list_every_experiment_largest_first_with_the_phases() {
        let tm = Timings {
            experiments: vec![
                t("a", 1, 0, false),
                t("b", 10, 5, false),
                t("r", 0, 30, true),
            ],
            threads: 2,
            pool_wall: Duration::from_secs(6),
            after_pool_wall: Duration::ZERO,
            real_time_wall: Duration::from_secs(30),
            real_parallel: 2,
            real_reruns: vec!["r"],
            total_wall: Duration::from_secs(36),
            total_cpu: Duration::from_secs(15),
        };
        let txt = tm.table();
        let (r, b, a) = (
            txt.find("r (real time)").unwrap(),
            txt.find("  b ").unwrap(),
            txt.find("  a ").unwrap(),
        );
        assert!(r < b && b < a, "{txt}");
        assert!(txt.contains("real-time phase: 30.0 s (up to 2 at once; run again alone after an emulator warning: r)"), "{txt}");
        assert!(txt.contains("sum of the rows: 46.0 s wall"), "{txt}");
        let md = tm.markdown();
        assert!(
            md.contains("| b | 2 | 10.0 | 10.0 | 5.0 | 0.5 | 15.0 |"),
            "{md}"
        );
        assert_eq!(md.matches("\n| ").count(), 4, "{md}");
    }

    #[test]
    fn cpu_clocks_advance_with_work() {
        let (t0, p0) = (thread_cpu(), process_cpu());
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        if cfg!(all(target_os = "linux", target_pointer_width = "64")) {
            assert!(thread_cpu() > t0);
            assert!(process_cpu() > p0);
        }
    }
}
