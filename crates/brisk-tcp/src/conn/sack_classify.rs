//! Classifying the SACK blocks of one ACK (RFC 2018 §4, RFC 2883 §4, Linux
//! `tcp_sacktag_write_queue` / `tcp_check_dsack`): which blocks report new data to
//! tag, which one is a D-SACK, and which are invalid. A pure function of the blocks
//! (already unwrapped to send-sequence offsets) and the sender's edges, so it is
//! tested by table alone.

/// The sender's edges when the ACK arrived.
#[derive(Clone, Copy, Debug)]
pub(super) struct SackEdges {
    /// The ACK's cumulative acknowledgement.
    pub ack: u64,
    /// SND.UNA before this ACK.
    pub prior_una: u64,
    /// The highest sequence ever sent (`snd_max`): nothing above can be SACKed.
    pub snd_max: u64,
    /// The ACK is older than SND.UNA (reordered behind a newer one).
    pub old: bool,
}

/// What the blocks of one ACK say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SackClass {
    /// Blocks of newly reported data to tag, in arrival order.
    pub blocks: [(u64, u64); 4],
    pub len: usize,
    /// The first block, when it reports a duplicate (below the ACK, or inside the
    /// second block).
    pub dsack: Option<(u64, u64)>,
    /// Blocks ignored as invalid (empty, reversed, below the ACK or beyond snd_max).
    pub ignored: u64,
}

impl SackClass {
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len]
    }
}

/// Classifies up to four raw blocks `(left, right)` (offsets, possibly negative for
/// blocks before the ISS).
pub(super) fn classify(raw: &[(i64, i64)], e: SackEdges) -> SackClass {
    let mut out = SackClass::default();
    for (i, &(l, r)) in raw.iter().enumerate().take(4) {
        if l >= r || l < 0 {
            out.ignored += 1;
            continue;
        }
        let (l, r) = (l as u64, r as u64);
        if i == 0 {
            let below_ack = r <= e.ack;
            let inside_second = raw
                .get(1)
                .is_some_and(|&(l2, r2)| l as i64 >= l2 && r as i64 <= r2);
            if below_ack || inside_second {
                out.dsack = Some((l, r));
                continue;
            }
        }
        if e.old && r <= e.prior_una {
            // Reported before SND.UNA passed it: nothing left to tag.
            continue;
        }
        if l < e.ack || r > e.snd_max {
            out.ignored += 1;
            continue;
        }
        out.blocks[out.len] = (l, r);
        out.len += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: SackEdges = SackEdges {
        ack: 1000,
        prior_una: 1000,
        snd_max: 5000,
        old: false,
    };

    /// (blocks to tag, D-SACK, ignored).
    type Verdict = (Vec<(u64, u64)>, Option<(u64, u64)>, u64);

    fn run(raw: &[(i64, i64)], e: SackEdges) -> Verdict {
        let c = classify(raw, e);
        (c.blocks().to_vec(), c.dsack, c.ignored)
    }

    #[test]
    fn table() {
        let old = SackEdges {
            ack: 800,
            old: true,
            ..E
        };
        #[allow(clippy::type_complexity)]
        let cases: &[(
            &str,
            &[(i64, i64)],
            SackEdges,
            (Vec<(u64, u64)>, Option<(u64, u64)>, u64),
        )] = &[
            (
                "one new block",
                &[(2000, 3000)],
                E,
                (vec![(2000, 3000)], None, 0),
            ),
            (
                "blocks keep arrival order",
                &[(3000, 4000), (1500, 2000)],
                E,
                (vec![(3000, 4000), (1500, 2000)], None, 0),
            ),
            (
                "first block below the ACK is a D-SACK",
                &[(500, 900), (2000, 3000)],
                E,
                (vec![(2000, 3000)], Some((500, 900)), 0),
            ),
            (
                "first block inside the second is a D-SACK",
                &[(2100, 2200), (2000, 3000)],
                E,
                (vec![(2000, 3000)], Some((2100, 2200)), 0),
            ),
            (
                "a later block below the ACK is invalid, not a D-SACK",
                &[(2000, 3000), (500, 900)],
                E,
                (vec![(2000, 3000)], None, 1),
            ),
            (
                "empty and reversed blocks are invalid",
                &[(2000, 2000), (3000, 2000)],
                E,
                (vec![], None, 2),
            ),
            (
                "negative offsets are invalid",
                &[(-10, 20)],
                E,
                (vec![], None, 1),
            ),
            (
                "beyond snd_max is invalid",
                &[(4000, 5001)],
                E,
                (vec![], None, 1),
            ),
            (
                "up to snd_max is fine",
                &[(4000, 5000)],
                E,
                (vec![(4000, 5000)], None, 0),
            ),
            (
                "straddling the ACK is invalid",
                &[(900, 1200), (2000, 2500)],
                SackEdges { ack: 1000, ..E },
                (vec![(2000, 2500)], None, 1),
            ),
            (
                "old ACK: a block below SND.UNA is skipped silently, news above is tagged",
                &[(1500, 2000), (700, 900)],
                old,
                (vec![(1500, 2000)], None, 0),
            ),
            (
                "old ACK: news above SND.UNA is tagged",
                &[(2000, 3000)],
                old,
                (vec![(2000, 3000)], None, 0),
            ),
            (
                "at most four blocks are read",
                &[
                    (1100, 1200),
                    (1300, 1400),
                    (1500, 1600),
                    (1700, 1800),
                    (1900, 2000),
                ],
                E,
                (
                    vec![(1100, 1200), (1300, 1400), (1500, 1600), (1700, 1800)],
                    None,
                    0,
                ),
            ),
        ];
        for (name, raw, e, want) in cases {
            assert_eq!(&run(raw, *e), want, "{name}");
        }
    }
}
