//! AFL++ wrapper of [`brisk_fuzz::endpoint`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::endpoint(data);
    });
}
