//! `records.csv` (`brisk run --out`): one row per delivered record or datagram, with
//! its generation, first transmission, delivery, priority and flow, so a record's
//! delay needs no pcap decoding.

use brisk_sim::output::{records_csv, RECORDS_CSV_HEADER};
use brisk_sim::{run, Scenario};

fn rows(csv: &str) -> Vec<Vec<String>> {
    let mut lines = csv.lines();
    assert_eq!(
        format!("{}\n", lines.next().unwrap()),
        RECORDS_CSV_HEADER,
        "header"
    );
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

#[test]
fn records_rows_are_ordered_in_time_and_count_the_delivered_records() {
    // Thin records through a lossy path beside a bulk flow: retransmissions and
    // head-of-line waits put delivery well after the first transmission.
    let sc = Scenario::from_toml_str(
        r#"
name = "rec"
duration = "10s"
[bottleneck]
rate = "5Mbit"
queue = { kind = "droptail", packets = 30 }
loss = { kind = "bernoulli", p = 0.05 }
[[flow]]
rtt = "80ms"
app = { kind = "records", size = 300, interval = "20ms", jitter = "4ms" }
[flow.tcp]
nagle = false
[[flow]]
rtt = "40ms"
app = { kind = "bulk" }
"#,
    )
    .unwrap();
    for seed in [1, 2, 3] {
        let r = run(&sc, seed).unwrap();
        let csv = records_csv(&r).expect("records were delivered");
        let rows = rows(&csv);
        let delivered = r.flows[0].record_latency.expect("latencies").count;
        assert_eq!(rows.len() as u64, delivered, "one row per delivered record");
        assert!(delivered > 300, "{delivered} records");
        let mut late = 0;
        for (k, row) in rows.iter().enumerate() {
            assert_eq!(row.len(), 8, "{row:?}");
            assert_eq!(row[0], "0");
            assert_eq!(row[1], "records");
            assert_eq!(row[2], k.to_string(), "index in generation order");
            assert_eq!(row[3], "", "records have no priority");
            let (g, tx, d, lat) = (num(&row[4]), num(&row[5]), num(&row[6]), num(&row[7]));
            assert!(tx >= g, "first transmission {tx} before generation {g}");
            assert!(d >= tx, "delivery {d} before first transmission {tx}");
            assert!((lat - (d - g) * 1e3).abs() < 1e-3, "{row:?}");
            // Over 80 ms RTT a delivery later than RTT/2 + 100 ms after the first
            // transmission waited for a retransmission.
            late += usize::from(d - tx > 0.14);
        }
        assert!(late > 0, "seed {seed}: losses delay some records");
        // Output settings observe: the file is a function of the result.
        assert_eq!(records_csv(&run(&sc, seed).unwrap()).unwrap(), csv);
    }
}

#[test]
fn datagram_rows_carry_their_priority() {
    let sc = Scenario::from_toml_str(
        r#"
name = "dg"
duration = "8s"
[bottleneck]
rate = "3Mbit"
queue = { kind = "droptail", packets = 40 }
loss = { kind = "bernoulli", p = 0.02 }
[[flow]]
rtt = "60ms"
app = { kind = "datagrams", size = "200B", interval = "20ms", count = 200, urgent_every = 5 }
[flow.tcp]
unordered = true
unordered_send = true
"#,
    )
    .unwrap();
    let r = run(&sc, 4).unwrap();
    let rows = rows(&records_csv(&r).expect("datagrams were delivered"));
    assert_eq!(rows.len(), 200, "every datagram once");
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row[1], "datagrams");
        assert_eq!(row[2], k.to_string());
        let urgent = (k + 1) % 5 == 0;
        assert_eq!(row[3], if urgent { "2" } else { "1" }, "{row:?}");
        assert_eq!(row[5], "", "no first transmission for datagrams");
        assert!(num(&row[6]) >= num(&row[4]));
    }
}

#[test]
fn no_records_no_file() {
    let sc = Scenario::from_toml_str(
        "name = \"b\"\nduration = \"2s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"20ms\"\napp = { kind = \"bulk\" }\n",
    )
    .unwrap();
    let r = run(&sc, 1).unwrap();
    assert!(records_csv(&r).is_none());
    assert!(!r.files().iter().any(|(n, _)| *n == "records.csv"));
}
