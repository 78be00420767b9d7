//! Unordered receive (uTCP) in the simulator, claim UT-1: the checks live in
//! `brisk_sim::claim_checks` so that `brisk repro design` runs the same code.

use brisk_sim::claim_checks as c;

#[test]
fn lossy_bulk_transfer_is_wire_identical_and_delivers_bytes_no_later() {
    eprintln!(
        "{}",
        c::lossy_bulk_transfer_is_wire_identical_and_delivers_bytes_no_later()
    );
}

#[test]
fn lossy_records_are_wire_identical_and_fewer_wait_a_round_trip() {
    eprintln!(
        "{}",
        c::lossy_records_are_wire_identical_and_fewer_wait_a_round_trip()
    );
}
