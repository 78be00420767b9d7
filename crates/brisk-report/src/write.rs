//! The CSV files both kinds of run write about the bottleneck, and writing a run's
//! files into a directory.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::result::BottleneckResult;

/// `queue.csv`: one row per sampling interval of the bottleneck's queue.
pub fn queue_csv(b: &BottleneckResult) -> String {
    let mut s = String::from(
        "time_s,queue_packets,queue_bytes,max_queue_packets,mean_delay_ms,max_delay_ms,drops\n",
    );
    for (t, r) in &b.queue_series {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            *t as f64 / 1e9,
            r.packets,
            r.bytes,
            r.max_packets,
            r.mean_delay_ns as f64 / 1e6,
            r.max_delay_ns as f64 / 1e6,
            r.drops
        );
    }
    s
}

/// Header of `records.csv` (simulated and real runs): one row per delivered record or
/// datagram; times in seconds since the run's start, latency (delivery − generation)
/// in ms; a column that does not apply to the app is empty (docs/scenarios.md).
pub const RECORDS_CSV_HEADER: &str =
    "flow,app,index,priority,generated_s,first_tx_s,delivered_s,latency_ms\n";

/// `drops.csv`: one row per recorded drop.
pub fn drops_csv(b: &BottleneckResult) -> String {
    let mut s = String::from("time_s,flow,reason\n");
    for d in &b.drop_records {
        let _ = writeln!(s, "{},{},{}", d.at.as_secs_f64(), d.flow, d.reason.name());
    }
    s
}

/// A file of a run's output that could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The directory (when creating it failed) or the file.
    pub path: PathBuf,
    /// Whether creating the directory failed (else writing the file).
    pub creating_dir: bool,
    pub source: io::Error,
}

/// Creates `dir` if missing and writes each `(name, text)` into it, in order.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<(), WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_path_buf(),
        creating_dir: true,
        source,
    })?;
    for (name, text) in files {
        let path = dir.join(name);
        let err = |source| WriteError {
            path: path.clone(),
            creating_dir: false,
            source,
        };
        let mut f = io::BufWriter::new(std::fs::File::create(&path).map_err(err)?);
        f.write_all(text.as_bytes()).map_err(err)?;
        f.flush().map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_net::meter::{DropRecord, QueueRow};
    use brisk_net::DropReason;
    use brisk_time::Instant;

    #[test]
    fn bottleneck_csvs_have_one_row_per_entry() {
        let b = BottleneckResult {
            utilization: 0.5,
            drops: 1,
            ce_marked: 0,
            first_drop: None,
            queue_delay: None,
            max_queue_packets: 3,
            queue_series: vec![(
                100_000_000,
                QueueRow {
                    packets: 3,
                    max_delay_ns: 1_500_000,
                    ..QueueRow::default()
                },
            )],
            drop_records: vec![DropRecord {
                at: Instant::from_nanos(250_000_000),
                id: 7,
                flow: 1,
                reason: DropReason::QueueFull,
            }],
        };
        assert!(queue_csv(&b).ends_with("\n0.1,3,0,0,0,1.5,0\n"));
        let d = drops_csv(&b);
        assert_eq!(d.lines().nth(1), Some("0.25,1,queue_full"));
    }
}
