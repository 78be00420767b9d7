//! SBD-1 (the checks live in `checks.rs`, shared with `brisk repro sbd`), the
//! configuration's errors, and the detector's bounds.

use super::*;

#[test]
fn sbd1_parameters_and_weights() {
    checks::sbd1_parameters_and_weights();
}

#[test]
fn sbd1_mean_pdv_mad_and_loss_are_exact() {
    checks::sbd1_mean_pdv_mad_and_loss_are_exact();
}

#[test]
fn sbd1_skew_sign_on_synthetic_traces() {
    checks::sbd1_skew_sign_on_synthetic_traces();
}

#[test]
fn sbd1_freq_est_of_a_square_wave() {
    checks::sbd1_freq_est_of_a_square_wave();
}

#[test]
fn crossings_need_to_leave_the_band() {
    checks::crossings_need_to_leave_the_band();
}

#[test]
fn sbd1_weighted_skew_matches_the_formula() {
    checks::sbd1_weighted_skew_matches_the_formula();
}

#[test]
fn sbd1_grouping_separates_two_bottlenecks() {
    checks::sbd1_grouping_separates_two_bottlenecks();
}

#[test]
fn sbd1_hysteresis_keeps_a_previously_congested_flow() {
    checks::sbd1_hysteresis_keeps_a_previously_congested_flow();
}

#[test]
fn lossy_flows_group_by_relative_loss() {
    checks::lossy_flows_group_by_relative_loss();
}

#[test]
fn decisions_every_t_from_the_second() {
    checks::decisions_every_t_from_the_second();
}

#[test]
fn config_errors_name_the_field_and_range() {
    let bad = SbdConfig {
        m: 60,
        ..SbdConfig::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "m 60 is outside 1..=n"
    );
    let bad = SbdConfig {
        c_s: -3.0,
        ..SbdConfig::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "c_s -3 is outside -1..=1"
    );
    assert!(Sbd::new(SbdConfig {
        max_flows: 0,
        ..SbdConfig::default()
    })
    .is_err());
}

/// Bounded under hostile input: the flow table refuses past its limit, and a flood of
/// samples (including extreme values) changes no buffer size.
#[test]
fn the_detector_is_bounded() {
    let mut sbd = Sbd::new(SbdConfig {
        max_flows: 4,
        ..SbdConfig::default()
    })
    .unwrap();
    let f: Vec<SbdFlow> = (0..4).map(|_| sbd.register().unwrap()).collect();
    assert_eq!(sbd.register().unwrap_err(), SbdError::Full { limit: 4 });
    for k in 0..2_000u32 {
        for &g in &f {
            for x in [i64::MAX / 4, i64::MIN / 4, 0, i64::from(k)] {
                sbd.on_owd(g, x).unwrap();
            }
            sbd.on_packets(g, u32::MAX, u32::MAX).unwrap();
        }
        if k % 10 == 0 {
            sbd.close_all();
        }
    }
    for &g in &f {
        let e = sbd.flow(g).unwrap().estimates();
        assert!(e.skew_est.is_finite() && (-1.0..=1.0).contains(&e.skew_est));
        assert!((0.0..=1.0).contains(&e.freq_est));
        assert!((0.0..=1.0).contains(&e.pkt_loss));
    }
    assert_eq!(sbd.on_owd(SbdFlow(9), 1), Err(SbdError::UnknownFlow(9)));
    sbd.remove(f[0]);
    assert_eq!(sbd.group_of(f[0]), None, "a removed flow is in no group");
    assert!(sbd.register().is_ok(), "a freed slot is reused");
}
