//! The draft's overhead formulas (§4), in exact rational arithmetic so the worked
//! numbers can be checked digit for digit (claim IS-6).
//!
//! P: share of connections that use extra option space; D: share of those using a
//! dual rather than a single handshake; R: mean state hold time in RTTs; H = h + 60 +
//! 12 octets (IP header, a TCP header full of options, the SYN=1 InSpace); J, K: mean
//! octets and packets per connection; Q: share keeping Inner Space after the
//! handshake; F: mean frame size; 8: a short InSpace per segment.

use super::{SHORT_LEN, SYN_LEN};

/// A non-negative fraction in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    pub num: u128,
    pub den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    /// `num / den`; a zero denominator gives 0/1 (the formulas' inputs are checked
    /// non-zero by [`Inputs::validate`]).
    pub fn new(num: u128, den: u128) -> Self {
        if den == 0 {
            return Ratio { num: 0, den: 1 };
        }
        let g = gcd(num, den).max(1);
        Ratio {
            num: num / g,
            den: den / g,
        }
    }

    pub fn times(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.num, self.den * o.den)
    }

    pub fn over(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.den, self.den * o.num)
    }

    pub fn int(n: u128) -> Ratio {
        Ratio::new(n, 1)
    }

    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// As a percentage with `decimals` digits, rounded half up, exactly.
    pub fn percent(self, decimals: u32) -> String {
        let scale = 10u128.pow(decimals);
        let v = (self.num * 100 * scale * 2 + self.den) / (self.den * 2);
        if decimals == 0 {
            format!("{v} %")
        } else {
            let w = decimals as usize;
            format!("{}.{:0w$} %", v / scale, v % scale)
        }
    }
}

/// The formulas' inputs, percentages as whole percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    pub p_pct: u128,
    pub d_pct: u128,
    pub r_rtts: u128,
    pub ip_header: u128,
    pub j_bytes: u128,
    pub k_packets: u128,
    pub q_pct: u128,
    pub f_bytes: u128,
}

/// Octets of a TCP header fully packed with options.
pub const FULL_TCP_HEADER: u128 = 60;

impl Inputs {
    /// The draft's worked example (IPv4).
    pub const DRAFT: Inputs = Inputs {
        p_pct: 80,
        d_pct: 10,
        r_rtts: 3,
        ip_header: 20,
        j_bytes: 50 * 1024,
        k_packets: 70,
        q_pct: 10,
        f_bytes: 750,
    };

    pub fn validate(&self) -> Result<(), &'static str> {
        if self.p_pct > 100 || self.d_pct > 100 || self.q_pct > 100 {
            return Err("P, D and Q are percentages in 0..=100");
        }
        if self.r_rtts == 0 || self.j_bytes == 0 || self.k_packets == 0 || self.f_bytes == 0 {
            return Err("R, J, K and F must be at least 1");
        }
        Ok(())
    }

    fn pd(&self) -> Ratio {
        Ratio::new(self.p_pct * self.d_pct, 100 * 100)
    }

    /// H = h + 60 + 12 (the SYN=1 InSpace's size).
    pub fn h(&self) -> u128 {
        self.ip_header + FULL_TCP_HEADER + SYN_LEN as u128
    }

    /// Connection rate: + P·D.
    pub fn connection_rate(&self) -> Ratio {
        self.pd()
    }

    /// Connection state: + P·D / R.
    pub fn state(&self) -> Ratio {
        self.pd().over(Ratio::int(self.r_rtts))
    }

    /// Handshake octets: 2·H·P·D / J.
    pub fn handshake_bytes(&self) -> Ratio {
        Ratio::int(2 * self.h())
            .times(self.pd())
            .over(Ratio::int(self.j_bytes))
    }

    /// Handshake packets: 2·P·D / K.
    pub fn handshake_packets(&self) -> Ratio {
        Ratio::int(2)
            .times(self.pd())
            .over(Ratio::int(self.k_packets))
    }

    /// Per-segment InSpace traffic: P·Q·8 / F.
    pub fn per_segment(&self) -> Ratio {
        Ratio::new(self.p_pct * self.q_pct * SHORT_LEN as u128, 100 * 100)
            .over(Ratio::int(self.f_bytes))
    }
}
