//! AFL++ wrapper of [`brisk_fuzz::minion`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::minion(data);
    });
}
