//! AFL++ wrapper of [`brisk_fuzz::mpctl`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::mpctl(data);
    });
}
