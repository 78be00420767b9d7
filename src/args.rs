//! Value parsers for command-line flags: each flag's own error, in the scenario files'
//! units, with the range it accepts (clap prefixes "invalid value 'X' for '--flag'").

use brisk_time::Duration;

/// A duration such as `10ms`, `1.5s`, `24h` or `1h30m`.
pub fn duration(s: &str) -> Result<Duration, String> {
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
    match brisk_sim::units::parse_rate(s) {
        Some(0) => Err("must be greater than 0 bit/s".into()),
        Some(r) => Ok(r),
        None => Err(
            "expected a rate like \"100Mbit\" (units bit, kbit, Mbit, Gbit; bits per second)"
                .into(),
        ),
    }
}

/// A probability in [0, 1].
pub fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(_) => Err("must be a probability from 0 to 1".into()),
        Err(_) => Err("expected a probability from 0 to 1, like 0.01".into()),
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
    }
}
