//! AFL++ wrapper of [`brisk_fuzz::mptcp`] (build with `fuzz/campaign.sh`).

fn main() {
    afl::fuzz!(|data: &[u8]| {
        brisk_fuzz::mptcp(data);
    });
}
