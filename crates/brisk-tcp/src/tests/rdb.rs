//! The checks live in `crate::claim_checks::rdb` so that `brisk repro` runs the same code
//! for its design rows; each test here runs one of them.

use crate::claim_checks::rdb as c;

#[test]
fn fig1_trace_is_reproduced_exactly() {
    c::fig1_trace_is_reproduced_exactly();
}

#[test]
fn bundling_sends_the_same_packets_bigger() {
    c::bundling_sends_the_same_packets_bigger();
}

#[test]
fn a_stream_that_is_not_thin_does_not_bundle() {
    c::a_stream_that_is_not_thin_does_not_bundle();
}

#[test]
fn the_fin_segment_carries_no_bundle() {
    c::the_fin_segment_carries_no_bundle();
}

#[test]
fn hidden_losses_reduce_the_window_once_per_window() {
    c::hidden_losses_reduce_the_window_once_per_window();
}

#[test]
fn without_the_loss_inference_hidden_losses_go_unanswered() {
    c::without_the_loss_inference_hidden_losses_go_unanswered();
}

#[test]
fn the_stream_survives_heavy_loss_with_unlimited_bundling() {
    c::the_stream_survives_heavy_loss_with_unlimited_bundling();
}

#[test]
fn the_dsack_refinement_ignores_a_delayed_ack_covering_a_bundle() {
    c::the_dsack_refinement_ignores_a_delayed_ack_covering_a_bundle();
}
