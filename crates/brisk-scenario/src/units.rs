//! Human-readable quantities in scenario files: durations, bit rates and byte sizes.
//!
//! All parsing is exact integer arithmetic on the decimal digits (no `f64` round-off), so
//! `"1.5s"` is exactly 1 500 000 000 ns and `"2.5Mbit"` exactly 2 500 000 bit/s.
//!
//! Accepted units (case-sensitive for durations, case-insensitive for rates and sizes):
//! - durations: `ns`, `us` (or `µs`), `ms`, `s`, `m` or `min`, `h`, `d` — e.g. `"20s"`,
//!   `"1.5s"`, `"250us"`, `"24h"` — and sums of them, `"1h30m"` or `"1m 30s"` (as
//!   `humantime` writes them; that crate is not used because it has no fractions, and
//!   scenarios write `"1.5s"`);
//! - rates (always **bits** per second): `bit`, `kbit`, `Mbit`, `Gbit`, `Tbit`, optionally
//!   followed by `/s` or `ps`; `bps`, `kbps`, `Mbps`, `Gbps` mean the same (note: unlike
//!   `tc`, `Mbps` here is megabits, as in most papers);
//! - sizes: a bare integer (bytes) or `B`, `KB`/`kB` (1000), `KiB` (1024), `MB`, `MiB`,
//!   `GB`, `GiB` — e.g. `"64KiB"`, `"1MB"`.
//!
//! They live here with the link description ([`crate::link`]) written in them;
//! `brisk_sim::units` re-exports this module, so scenario code keeps its paths.

use brisk_time::Duration;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Parses `"<digits>[.<digits>]<unit>"` into `value * unit_scale`, exactly.
/// `units` maps suffixes to scale factors; the first suffix that matches wins, so list
/// longer suffixes first.
fn parse_scaled(s: &str, units: &[(&str, u64)], case_insensitive: bool) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    let scale = units.iter().find_map(|&(u, k)| {
        let hit = if case_insensitive {
            u.eq_ignore_ascii_case(unit)
        } else {
            u == unit
        };
        hit.then_some(k)
    })?;
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if frac.len() > 18 {
        return None;
    }
    let int_v: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut total = int_v.checked_mul(scale)?;
    if !frac.is_empty() {
        let frac_v: u128 = frac.parse().ok()?;
        let denom = 10u128.pow(frac.len() as u32);
        let part = frac_v.checked_mul(u128::from(scale))? / denom;
        total = total.checked_add(u64::try_from(part).ok()?)?;
    }
    Some(total)
}

const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("min", 60_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

const RATE_UNITS: &[(&str, u64)] = &[
    ("bit", 1),
    ("bit/s", 1),
    ("bps", 1),
    ("kbit", 1_000),
    ("kbit/s", 1_000),
    ("kbitps", 1_000),
    ("kbps", 1_000),
    ("mbit", 1_000_000),
    ("mbit/s", 1_000_000),
    ("mbitps", 1_000_000),
    ("mbps", 1_000_000),
    ("gbit", 1_000_000_000),
    ("gbit/s", 1_000_000_000),
    ("gbitps", 1_000_000_000),
    ("gbps", 1_000_000_000),
    ("tbit", 1_000_000_000_000),
    ("tbit/s", 1_000_000_000_000),
    ("tbps", 1_000_000_000_000),
];

const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("kb", 1_000),
    ("kib", 1 << 10),
    ("mb", 1_000_000),
    ("mib", 1 << 20),
    ("gb", 1_000_000_000),
    ("gib", 1 << 30),
];

/// Parses a duration such as `"10ms"`, `"1.5s"`, `"24h"` or `"1h30m"` (a sum of
/// terms, each a number with its unit; spaces between terms are allowed).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        // One term: digits and dots, then the unit up to the next digit or space.
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        // A space may stand between a number and its unit ("10 ms").
        let unit_start = num_end + (rest[num_end..].len() - rest[num_end..].trim_start().len());
        let unit_end = rest[unit_start..]
            .find(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
            .map_or(rest.len(), |i| unit_start + i);
        let term = parse_scaled(&rest[..unit_end], DURATION_UNITS, false)?;
        total = total.checked_add(term)?;
        rest = rest[unit_end..].trim_start();
    }
    Some(Duration::from_nanos(total))
}

/// Parses a bit rate such as `"10Mbit"`; returns bits per second.
pub fn parse_rate(s: &str) -> Option<u64> {
    parse_scaled(s, RATE_UNITS, true)
}

/// Parses a byte size such as `"64KiB"` or `"1500"`.
pub fn parse_size(s: &str) -> Option<u64> {
    parse_scaled(s, SIZE_UNITS, true)
}

/// Formats nanoseconds with the largest unit that keeps it an integer.
fn format_duration(d: Duration) -> String {
    let ns = brisk_time::dur_nanos(d);
    for &(u, k) in &[("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= k && (ns / k) * k == ns {
            return format!("{}{u}", ns / k);
        }
    }
    format!("{ns}ns")
}

/// A scenario duration (`"20s"`); deserializes from a string with a unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub Duration);

/// A bit rate in bit/s (`"10Mbit"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A byte count (`1448`, `"64KiB"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for &(u, k) in &[
            ("Gbit", 1_000_000_000u64),
            ("Mbit", 1_000_000),
            ("kbit", 1_000),
        ] {
            if b >= k && (b / k) * k == b {
                return write!(f, "{}{u}", b / k);
            }
        }
        write!(f, "{b}bit")
    }
}

/// Describes what the visitor got, for "expected X, got Y" messages.
fn got_str(v: &str) -> String {
    format!("{v:?}")
}

macro_rules! string_unit_de {
    ($ty:ident, $expect:literal, $parse:expr, $int_ok:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        #[allow(clippy::redundant_closure_call)]
                        ($parse)(v).ok_or_else(|| {
                            E::custom(format!("expected {}, got {}", $expect, got_str(v)))
                        })
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        match u64::try_from(v) {
                            Ok(u) => self.visit_u64(u),
                            Err(_) => Err(E::custom(format!("expected {}, got {v}", $expect))),
                        }
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        #[allow(clippy::redundant_closure_call)]
                        ($int_ok)(v)
                            .ok_or_else(|| E::custom(format!("expected {}, got {v}", $expect)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("expected {}, got {v}", $expect)))
                    }
                    fn visit_bool<E: de::Error>(self, v: bool) -> Result<$ty, E> {
                        Err(E::custom(format!("expected {}, got {v}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_unit_de!(
    Dur,
    "a duration like \"10ms\" (units ns, us, ms, s, m, h, d)",
    |v: &str| parse_duration(v).map(Dur),
    |_v: u64| None::<Dur>
);
string_unit_de!(
    Rate,
    "a rate like \"10Mbit\" (units bit, kbit, Mbit, Gbit; bits per second)",
    |v: &str| parse_rate(v).map(Rate),
    |_v: u64| None::<Rate>
);
string_unit_de!(
    Size,
    "a size like 1448 or \"64KiB\" (units B, KB, KiB, MB, MiB, GB, GiB)",
    |v: &str| parse_size(v).map(Size),
    |v: u64| Some(Size(v))
);

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly_in_every_unit() {
        assert_eq!(parse_duration("20s"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("10ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("7ns"), Some(Duration::from_nanos(7)));
        assert_eq!(parse_duration("2min"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration(".5ms"), Some(Duration::from_micros(500)));
        assert_eq!(parse_duration("0s"), Some(Duration::ZERO));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("24h"), Some(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("1d"), Some(Duration::from_secs(86_400)));
        assert_eq!(parse_duration("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1m 30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("10 ms"), Some(Duration::from_millis(10)));
        assert_eq!(parse_duration("1.5h"), Some(Duration::from_secs(5400)));
    }

    #[test]
    fn malformed_durations_are_rejected() {
        for bad in [
            "ten",
            "10",
            "10 parsecs",
            "-1s",
            "1.2.3s",
            "s",
            "",
            "1e3ms",
            "10MS",
            "1h30",
            "10furlongs",
            "1h-30m",
            "99999999999d",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(parse_duration("99999999999999999999s"), None);
    }

    #[test]
    fn rates_are_bits_per_second_in_any_spelling() {
        assert_eq!(parse_rate("10Mbit"), Some(10_000_000));
        assert_eq!(parse_rate("1Gbit"), Some(1_000_000_000));
        assert_eq!(parse_rate("500kbit"), Some(500_000));
        assert_eq!(parse_rate("10Mbps"), Some(10_000_000));
        assert_eq!(parse_rate("2.5Mbit/s"), Some(2_500_000));
        assert_eq!(parse_rate("100bit"), Some(100));
        assert_eq!(parse_rate("1.5Gbit/s"), Some(1_500_000_000));
        assert_eq!(parse_rate("64kbps"), Some(64_000));
        assert_eq!(parse_rate("10 mbit"), Some(10_000_000));
        assert_eq!(parse_rate("99999999999999Gbit"), None);
        assert_eq!(parse_rate("10"), None);
        assert_eq!(parse_rate("fast"), None);
    }

    #[test]
    fn sizes_accept_decimal_and_binary_prefixes() {
        assert_eq!(parse_size("1448"), Some(1448));
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("1MB"), Some(1_000_000));
        assert_eq!(parse_size("1.5KiB"), Some(1536));
        assert_eq!(parse_size("lots"), None);
    }

    #[test]
    fn display_round_trips_through_the_parser() {
        for s in ["20s", "10ms", "250us", "7ns", "1500ms"] {
            let d = Dur(parse_duration(s).unwrap());
            assert_eq!(parse_duration(&d.to_string()), Some(d.0));
        }
        assert_eq!(Rate(10_000_000).to_string(), "10Mbit");
        assert_eq!(Rate(1_500).to_string(), "1500bit");
    }
}
