//! The checks live in `crate::claim_checks::rc3` so that `brisk repro` runs the same code
//! for its design rows; each test here runs one of them.

use crate::claim_checks::rc3 as c;

#[test]
fn rc3_worked_example_finishes_in_4_rtts_against_5() {
    c::rc3_worked_example_finishes_in_4_rtts_against_5();
}

#[test]
fn rc3_works_against_an_unmodified_receiver() {
    c::rc3_works_against_an_unmodified_receiver();
}

#[test]
fn an_rc3_receiver_behind_a_plain_sender_is_plain_tcp() {
    c::an_rc3_receiver_behind_a_plain_sender_is_plain_tcp();
}

#[test]
fn a_shared_write_sends_what_a_copied_one_does() {
    c::a_shared_write_sends_what_a_copied_one_does();
}
