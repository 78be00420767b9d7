//! Kathleen Nichols' windowed running maximum, as Linux `lib/win_minmax.c`
//! (`minmax_running_max`, `minmax_subwin_update`): the best, second-best and
//! third-best samples in a window, each from a later sub-window, so the estimate
//! ages out in O(1) per sample. BBR's bandwidth filter counts time in rounds.

/// One sample: `t` (a round count), `v` (a value).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u32,
}

/// The windowed max filter (Linux `struct minmax`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    /// The current maximum (Linux `minmax_get`).
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// Forget everything: `meas` at `t` is the only sample (Linux `minmax_reset`).
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        self.s = [Sample { t, v: meas }; 3];
        meas
    }

    /// Linux `minmax_running_max`: `meas` at `t` into a window of `win`.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Linux `minmax_subwin_update`: age the best samples out as the window passes.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample is out of the window: promote the others.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed with no third choice: take one.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_max_replaces_everything() {
        let mut m = MinMax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 1, 5), 5);
        assert_eq!(m.running_max(10, 2, 9), 9);
        assert_eq!(m.running_max(10, 3, 4), 9);
    }

    #[test]
    fn the_max_ages_out_after_the_window() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        // Lower samples each round: the 100 holds for the window of 10 rounds...
        for t in 1..=10 {
            assert_eq!(m.running_max(10, t, 50), 100, "round {t}");
        }
        // ...and is gone at round 11, when the best later sample (50) takes over.
        assert_eq!(m.running_max(10, 11, 40), 50);
    }

    #[test]
    fn nothing_left_in_the_window_resets() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        m.running_max(10, 1, 90);
        // Round 30: every sample is older than the window.
        assert_eq!(m.running_max(10, 30, 10), 10);
    }
}
