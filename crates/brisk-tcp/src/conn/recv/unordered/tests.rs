//! The checks live in `checks.rs` so that `brisk repro` runs the same code for its
//! design rows; each test here runs one of them.

use super::checks as c;

#[test]
fn arrivals_1_3_2_read_as_1_then_3_ooo_then_2_and_3_in_order() {
    c::arrivals_1_3_2_read_as_1_then_3_ooo_then_2_and_3_in_order();
}

#[test]
fn large_buffer_reads_filled_hole_and_redelivery_as_one_in_order_run() {
    c::large_buffer_reads_filled_hole_and_redelivery_as_one_in_order_run();
}

#[test]
fn reads_take_the_lowest_undelivered_run_and_skip_delivered_bytes() {
    c::reads_take_the_lowest_undelivered_run_and_skip_delivered_bytes();
}

#[test]
fn unordered_reads_leave_window_sack_and_store_untouched() {
    c::unordered_reads_leave_window_sack_and_store_untouched();
}

#[test]
fn hostile_peer_cannot_grow_unordered_bookkeeping_beyond_its_cap() {
    c::hostile_peer_cannot_grow_unordered_bookkeeping_beyond_its_cap();
}

#[test]
fn duplicate_and_dropped_arrivals_do_not_reopen_handed_out_bytes() {
    c::duplicate_and_dropped_arrivals_do_not_reopen_handed_out_bytes();
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// UT-4's properties under random segmentation, arrival order, duplication and
    /// reader buffer sizes (`checks::ut4_case`).
    #[test]
    fn every_byte_arrives_at_least_once_and_ooo_bytes_exactly_once_more_in_order(
        total in 1u64..3000,
        cuts in proptest::collection::vec(any::<u64>(), 0..40),
        order in proptest::collection::vec(any::<u32>(), 0..120),
        dups in proptest::collection::vec(any::<u32>(), 0..20),
        bufsizes in proptest::collection::vec(1usize..400, 1..20),
        reads_per_arrival in 0usize..4,
    ) {
        let case = c::Ut4Case { total, cuts, order, dups, bufsizes, reads_per_arrival };
        c::ut4_case(&case).map_err(TestCaseError::fail)?;
    }
}
