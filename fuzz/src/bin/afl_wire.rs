//! AFL++ wrapper of [`brisk_fuzz::wire`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::wire(data);
    });
}
