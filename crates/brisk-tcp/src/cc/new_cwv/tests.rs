//! The checks live in `checks.rs` so that `brisk repro` runs the same code for its
//! design rows; each test here runs one of them.

use super::checks as c;

#[test]
fn starts_validated_with_pipeack_undefined_and_skips_the_first_round() {
    c::starts_validated_with_pipeack_undefined_and_skips_the_first_round();
}

#[test]
fn enters_non_validated_below_half_cwnd_and_stops_growing_unless_cwnd_limited() {
    c::enters_non_validated_below_half_cwnd_and_stops_growing_unless_cwnd_limited();
}

#[test]
fn cwnd_limited_sender_may_grow_while_non_validated() {
    c::cwnd_limited_sender_may_grow_while_non_validated();
}

#[test]
fn cwnd_is_kept_across_idle_and_the_phase_begins_when_the_bins_age_out() {
    c::cwnd_is_kept_across_idle_and_the_phase_begins_when_the_bins_age_out();
}

#[test]
fn w9_loss_in_the_non_validated_phase() {
    c::w9_loss_in_the_non_validated_phase();
}

#[test]
fn loss_in_the_validated_phase_is_the_base_controllers() {
    c::loss_in_the_validated_phase_is_the_base_controllers();
}

#[test]
fn the_loss_cwnd_never_falls_below_one_segment() {
    c::the_loss_cwnd_never_falls_below_one_segment();
}

#[test]
fn an_rto_exits_the_non_validated_phase_and_undefines_pipeack() {
    c::an_rto_exits_the_non_validated_phase_and_undefines_pipeack();
}

#[test]
fn an_undone_recovery_keeps_the_restored_window() {
    c::an_undone_recovery_keeps_the_restored_window();
}

#[test]
fn w9_nvp_closedown_one_reduction_per_elapsed_nvp() {
    c::w9_nvp_closedown_one_reduction_per_elapsed_nvp();
}

#[test]
fn the_filter_keeps_the_maximum_over_five_bins_of_the_sampling_period() {
    c::the_filter_keeps_the_maximum_over_five_bins_of_the_sampling_period();
}
