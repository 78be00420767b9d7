//! The checks live in `crate::claim_checks::restart` so that `brisk repro` runs the same code
//! for its design rows; each test here runs one of them.

use crate::claim_checks::restart as c;

#[test]
fn rto_restart_retransmits_one_rtt_earlier_in_a_two_segment_tail() {
    eprintln!(
        "{}",
        c::rto_restart_retransmits_one_rtt_earlier_in_a_two_segment_tail()
    );
}

#[test]
fn rto_restart_stays_off_with_rrthresh_segments_outstanding() {
    c::rto_restart_stays_off_with_rrthresh_segments_outstanding();
}

#[test]
fn tlp_restart_probes_one_rtt_earlier() {
    eprintln!("{}", c::tlp_restart_probes_one_rtt_earlier());
}

#[test]
fn rack_repairs_the_tail_after_a_probe_also_when_the_fin_was_lost() {
    c::rack_repairs_the_tail_after_a_probe_also_when_the_fin_was_lost();
}
