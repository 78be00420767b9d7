//! Exact serialisation time. A packet of `b` bytes at `rate_bps` takes
//! `b * 8 * 1e9 / rate_bps` ns; the division's remainder (in units of `1/rate_bps` ns)
//! is carried into the next back-to-back packet, so a train of packets ends exactly
//! when one packet of their total size would: no drift at any rate. This is neqo's
//! fixed-point carry, made exact by keeping the remainder as a rational.

const NS_PER_S: u128 = 1_000_000_000;

#[derive(Clone, Debug)]
pub(crate) struct Serializer {
    /// 0 means unlimited: no serialisation delay.
    rate_bps: u64,
    /// Sub-nanosecond remainder of the previous packet, `< rate_bps`.
    carry: u128,
}

impl Serializer {
    pub(crate) fn new(rate_bps: u64) -> Self {
        Serializer { rate_bps, carry: 0 }
    }

    pub(crate) fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// What [`tx_time_ns`](Self::tx_time_ns) would answer, without moving the carry.
    pub(crate) fn peek_tx_time_ns(&self, bytes: usize, back_to_back: bool) -> u64 {
        self.clone().tx_time_ns(bytes, back_to_back)
    }

    /// Serialisation time in ns of `bytes`. `back_to_back` says the packet starts the
    /// instant the previous one ended, so the remainder carries; otherwise it starts at
    /// a fresh integer nanosecond and the old remainder is void.
    pub(crate) fn tx_time_ns(&mut self, bytes: usize, back_to_back: bool) -> u64 {
        if self.rate_bps == 0 {
            return 0;
        }
        if !back_to_back {
            self.carry = 0;
        }
        // Any real packet's numerator fits 64 bits (up to 2.3 GB a packet), and a
        // 64-bit division is one instruction where the 128-bit one is a library call
        // (twice per packet per link): the same quotient and remainder, cheaper.
        if let Some(num) = (bytes as u64)
            .checked_mul(8 * NS_PER_S as u64)
            .and_then(|n| n.checked_add(self.carry as u64))
        {
            self.carry = u128::from(num % self.rate_bps);
            return num / self.rate_bps;
        }
        let rate = u128::from(self.rate_bps);
        // bytes < 2^64, so the product is < 2^97 and the sum cannot overflow.
        let num = (bytes as u128) * 8 * NS_PER_S + self.carry;
        self.carry = num % rate;
        u64::try_from(num / rate).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_size_packet_at_10_mbps_takes_1_2_ms() {
        assert_eq!(
            Serializer::new(10_000_000).tx_time_ns(1500, false),
            1_200_000
        );
    }

    #[test]
    fn unlimited_rate_takes_no_time() {
        assert_eq!(Serializer::new(0).tx_time_ns(1500, true), 0);
    }

    #[test]
    fn back_to_back_packets_accumulate_no_drift() {
        // 1 byte at 3 bit/s is 8/3 s: not an integer number of ns.
        let mut s = Serializer::new(3);
        let total: u64 = (0..1000).map(|_| s.tx_time_ns(1, true)).sum();
        assert_eq!(total, 8_000 * 1_000_000_000 / 3);
        // Each packet is floor or ceil of the exact value.
        let mut s = Serializer::new(3);
        for _ in 0..10 {
            let t = s.tx_time_ns(1, true);
            assert!(t == 2_666_666_666 || t == 2_666_666_667, "{t}");
        }
    }

    #[test]
    fn a_gap_voids_the_carry() {
        let mut s = Serializer::new(3);
        assert_eq!(s.tx_time_ns(1, false), 2_666_666_666);
        // Without the gap the carry (2/3 ns) would round this one up.
        assert_eq!(s.tx_time_ns(1, false), 2_666_666_666);
    }

    #[test]
    fn the_64_bit_path_and_the_128_bit_path_agree_across_their_boundary() {
        // 7 bit/s leaves remainders; from 2 305 843 010 bytes the numerator needs more
        // than 64 bits.
        let exact = |bytes: u64, carry: u128| {
            let num = u128::from(bytes) * 8 * NS_PER_S + carry;
            (u64::try_from(num / 7).unwrap_or(u64::MAX), num % 7)
        };
        let mut s = Serializer::new(7);
        let mut carry = 0u128;
        for bytes in [
            1u64,
            1500,
            2_305_843_009,
            2_305_843_010,
            1 << 32,
            1 << 40,
            3,
        ] {
            let (t, c) = exact(bytes, carry);
            assert_eq!(s.tx_time_ns(bytes as usize, true), t, "{bytes}");
            carry = c;
        }
    }
}
