//! AFL++ wrapper of [`brisk_fuzz::conn`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::conn(data);
    });
}
