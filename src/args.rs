//! Value parsers for command-line flags: each flag's own error, in the scenario files'
//! units, with the range it accepts (clap prefixes "invalid value 'X' for '--flag'").

use brisk_time::Duration;

/// A duration such as `10ms`, `1.5s`, `24h` or `1h30m`.
pub fn duration(s: &str) -> Result<Duration, String> {
    if s.trim_start().starts_with('-') {
        return Err("must not be negative: a duration like \"10ms\", \"20s\" or \"1h\"".into());
    }
    brisk_sim::units::parse_duration(s).ok_or_else(|| {
        "expected a duration like \"10ms\", \"20s\" or \"1h\" (units ns, us, ms, s, m, h, d)"
            .to_string()
    })
}

/// A duration greater than zero.
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err("must be greater than 0".into());
    }
    Ok(d)
}

/// A bit rate greater than zero, such as `100Mbit`; bits per second.
pub fn rate(s: &str) -> Result<u64, String> {
    // A flag taking this parser sets `allow_hyphen_values`, so "-5Mbit" arrives here
    // instead of becoming clap's "unexpected argument" with its `-- -5` tip.
    if s.trim_start().starts_with('-') {
        return Err(
            "must be a positive rate, greater than 0 bit/s, like \"100Mbit\" (units bit, kbit, Mbit, Gbit)"
                .into(),
        );
    }
    match brisk_sim::units::parse_rate(s) {
        Some(0) => Err("must be greater than 0 bit/s".into()),
        Some(r) => Ok(r),
        None => Err(
            "expected a rate like \"100Mbit\" (units bit, kbit, Mbit, Gbit; bits per second)"
                .into(),
        ),
    }
}

/// A size greater than zero, such as `20KB` or `20000`; bytes.
pub fn size(s: &str) -> Result<u64, String> {
    match brisk_sim::units::parse_size(s.trim()) {
        Some(0) => Err("must be greater than 0 bytes".into()),
        Some(b) => Ok(b),
        None => Err("expected a size like \"20KB\" (bytes; units B, KB, KiB, MB, MiB)".into()),
    }
}

/// A drop-tail queue limit: `1000` or `1000packets` (packets), or a size with a unit
/// such as `64KiB` or `1500000B` (bytes); at least 1 packet or 1500 bytes.
pub fn queue(s: &str) -> Result<brisk_scenario::link::QueueSpec, String> {
    let t = s.trim();
    let digits = t
        .trim_end_matches("packets")
        .trim_end_matches("pkts")
        .trim();
    if let Ok(n) = digits.parse::<u64>() {
        if n == 0 || n > 1_000_000 {
            return Err("must be from 1 to 1000000 packets".into());
        }
        return Ok(brisk_scenario::link::QueueSpec::droptail_packets(n));
    }
    match brisk_sim::units::parse_size(t) {
        Some(b) if (1500..=1 << 30).contains(&b) => Ok(brisk_scenario::link::QueueSpec::Droptail {
            packets: None,
            bytes: Some(brisk_sim::units::Size(b)),
            time: None,
            ecn_threshold_packets: None,
            ecn_threshold_bytes: None,
        }),
        Some(_) => Err("a byte limit must be from 1500B to 1GiB".into()),
        None => Err("expected packets like 1000 or a size like \"64KiB\"".into()),
    }
}

/// A jitter bound: a duration up to 10 s.
pub fn jitter(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d > Duration::from_secs(10) {
        return Err("must be at most 10s".into());
    }
    Ok(d)
}

/// A probability in [0, 1].
pub fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(_) => Err("must be a probability from 0 to 1".into()),
        Err(_) => Err("expected a probability from 0 to 1, like 0.01".into()),
    }
}

/// A load: a fraction greater than 0 and at most 1.
pub fn load(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        Ok(_) => Err("must be greater than 0 and at most 1".into()),
        Err(_) => Err("expected a load greater than 0 and at most 1, like 0.3".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parser_accepts_its_form_and_names_the_range() {
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(duration("10furlongs").unwrap_err().contains("duration"));
        assert!(positive_duration("0s")
            .unwrap_err()
            .contains("greater than 0"));
        assert_eq!(rate("100Mbit"), Ok(100_000_000));
        assert!(rate("0bit").unwrap_err().contains("greater than 0"));
        assert!(rate("fast").unwrap_err().contains("rate"));
        assert_eq!(probability("0.01"), Ok(0.01));
        assert!(probability("2").unwrap_err().contains("0 to 1"));
        assert!(probability("x").is_err());
        assert_eq!(load("1"), Ok(1.0));
        for bad in ["0", "7", "nan", "-0.5", "inf"] {
            assert!(load(bad).unwrap_err().contains("at most 1"), "{bad}");
        }
        assert_eq!(
            queue("1000"),
            Ok(brisk_scenario::link::QueueSpec::droptail_packets(1000))
        );
        assert_eq!(
            queue("50packets"),
            Ok(brisk_scenario::link::QueueSpec::droptail_packets(50))
        );
        assert!(matches!(
            queue("64KiB"),
            Ok(brisk_scenario::link::QueueSpec::Droptail { bytes: Some(_), .. })
        ));
        assert!(queue("0").unwrap_err().contains("from 1"));
        assert!(queue("lots").is_err());
        assert!(jitter("20s").unwrap_err().contains("10s"));
    }
}
