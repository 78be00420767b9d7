//! brisk-repro: the reproduction suite behind `brisk repro`.
//!
//! Each [`Experiment`] is a set of simulator scenarios plus the claims of a paper it
//! checks (IDs from `shared/claims.md`). [`run_suite`] plans every selected
//! experiment, runs all their scenario runs on one thread pool ([`runner`]), and
//! analyses each experiment into claim rows ([`Claim`]: paper value, ours, tolerance,
//! verdict) and figures ([`figure`], drawn by [`svg`]). [`report`] prints the table and
//! the JSON document, [`html`] writes the self-contained `index.html` with each figure's
//! SVG and CSV beside it and the claims ledger ([`ledger`]), and [`accepted`] holds the claims known to
//! fail, with reasons, against which CI checks the quick suite. [`remote`] runs one
//! experiment in another process (a Ray worker) and carries its result back as JSON.
//!
//! Adding an experiment: write a module under `exp/` with `ID`, `TITLE`, `CLAIMS` and
//! `plan(quick) -> Plan` (jobs plus an analysis closure), and list it in [`REGISTRY`]
//! with its [`Kind`]. The `real-*` experiments and `aqm-vs-ns3` are
//! [`Kind::RealTime`]: they run real packets (brisk-emu) or ns-3 after the pool, one at a
//! time, or are `n/a` where they cannot.

pub mod accepted;
pub mod bands;
pub mod bufferbloat;
pub mod claim;
pub mod exp;
pub mod experiment;
pub mod figure;
pub mod html;
pub mod ledger;
pub mod plot;
pub mod real_phase;
pub mod remote;
pub mod report;
pub mod roster;
pub mod runner;
pub mod scen;
pub mod stats;
pub mod svg;
pub mod timings;

pub use claim::{Claim, Verdict};
pub use experiment::{Experiment, ExperimentResult, Job, Kind, Plan, Plot};
pub use runner::Progress;

/// Every experiment, in report order.
pub const REGISTRY: &[Experiment] = &[
    Experiment {
        id: exp::dc_micro::ID,
        title: exp::dc_micro::TITLE,
        kind: Kind::Simulated,
        claims: exp::dc_micro::CLAIMS,
        plan: exp::dc_micro::plan,
    },
    Experiment {
        id: exp::dc_sweep::ID,
        title: exp::dc_sweep::TITLE,
        kind: Kind::Simulated,
        claims: exp::dc_sweep::CLAIMS,
        plan: exp::dc_sweep::plan,
    },
    Experiment {
        id: exp::dc_compete::ID,
        title: exp::dc_compete::TITLE,
        kind: Kind::Simulated,
        claims: exp::dc_compete::CLAIMS,
        plan: exp::dc_compete::plan,
    },
    Experiment {
        id: exp::dc_video::ID,
        title: exp::dc_video::TITLE,
        kind: Kind::Simulated,
        claims: exp::dc_video::CLAIMS,
        plan: exp::dc_video::plan,
    },
    Experiment {
        id: exp::ut::BULK_ID,
        title: exp::ut::BULK_TITLE,
        kind: Kind::Simulated,
        claims: exp::ut::BULK_CLAIMS,
        plan: exp::ut::plan_bulk,
    },
    Experiment {
        id: exp::ut::RECORDS_ID,
        title: exp::ut::RECORDS_TITLE,
        kind: Kind::Simulated,
        claims: exp::ut::RECORDS_CLAIMS,
        plan: exp::ut::plan_records,
    },
    Experiment {
        id: exp::tlp_tail::ID,
        title: exp::tlp_tail::TITLE,
        kind: Kind::Simulated,
        claims: exp::tlp_tail::CLAIMS,
        plan: exp::tlp_tail::plan,
    },
    Experiment {
        id: exp::tlp_realistic::ID,
        title: exp::tlp_realistic::TITLE,
        kind: Kind::Simulated,
        claims: exp::tlp_realistic::CLAIMS,
        plan: exp::tlp_realistic::plan,
    },
    Experiment {
        id: exp::sbd::ID,
        title: exp::sbd::TITLE,
        kind: Kind::Simulated,
        claims: exp::sbd::CLAIMS,
        plan: exp::sbd::plan,
    },
    Experiment {
        id: exp::sbd_fse::ID,
        title: exp::sbd_fse::TITLE,
        kind: Kind::Simulated,
        claims: exp::sbd_fse::CLAIMS,
        plan: exp::sbd_fse::plan,
    },
    Experiment {
        id: exp::abe_model::ID,
        title: exp::abe_model::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_model::CLAIMS,
        plan: exp::abe_model::plan,
    },
    Experiment {
        id: exp::abe_motivation::ID,
        title: exp::abe_motivation::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_motivation::CLAIMS,
        plan: exp::abe_motivation::plan,
    },
    Experiment {
        id: exp::abe_single::ID,
        title: exp::abe_single::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_single::CLAIMS,
        plan: exp::abe_single::plan,
    },
    Experiment {
        id: exp::abe_short::ID,
        title: exp::abe_short::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_short::CLAIMS,
        plan: exp::abe_short::plan,
    },
    Experiment {
        id: exp::abe_convergence::ID,
        title: exp::abe_convergence::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_convergence::CLAIMS,
        plan: exp::abe_convergence::plan,
    },
    Experiment {
        id: exp::abe_mixed::ID,
        title: exp::abe_mixed::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_mixed::CLAIMS,
        plan: exp::abe_mixed::plan,
    },
    Experiment {
        id: exp::abe_pie_rule::ID,
        title: exp::abe_pie_rule::TITLE,
        kind: Kind::Simulated,
        claims: exp::abe_pie_rule::CLAIMS,
        plan: exp::abe_pie_rule::plan,
    },
    Experiment {
        id: exp::cdg::ID,
        title: exp::cdg::TITLE,
        kind: Kind::Simulated,
        claims: exp::cdg::CLAIMS,
        plan: exp::cdg::plan,
    },
    Experiment {
        id: exp::aqm_map::ID,
        title: exp::aqm_map::TITLE,
        kind: Kind::Simulated,
        claims: exp::aqm_map::CLAIMS,
        plan: exp::aqm_map::plan,
    },
    Experiment {
        id: exp::cc_map::ID,
        title: exp::cc_map::TITLE,
        kind: Kind::Simulated,
        claims: exp::cc_map::CLAIMS,
        plan: exp::cc_map::plan,
    },
    Experiment {
        id: exp::flent::ID,
        title: exp::flent::TITLE,
        kind: Kind::Simulated,
        claims: exp::flent::CLAIMS,
        plan: exp::flent::plan,
    },
    Experiment {
        id: exp::aqm_ns3::ID,
        title: exp::aqm_ns3::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::aqm_ns3::unsupported,
        },
        claims: exp::aqm_ns3::CLAIMS,
        plan: exp::aqm_ns3::plan,
    },
    Experiment {
        id: exp::tlp_web::ID,
        title: exp::tlp_web::TITLE,
        kind: Kind::Simulated,
        claims: exp::tlp_web::CLAIMS,
        plan: exp::tlp_web::plan,
    },
    Experiment {
        id: exp::rc3_base::ID,
        title: exp::rc3_base::TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_base::CLAIMS,
        plan: exp::rc3_base::plan,
    },
    Experiment {
        id: exp::rc3_sweep::LOAD_ID,
        title: exp::rc3_sweep::LOAD_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::LOAD_CLAIMS,
        plan: exp::rc3_sweep::plan_load,
    },
    Experiment {
        id: exp::rc3_sweep::IW_ID,
        title: exp::rc3_sweep::IW_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::IW_CLAIMS,
        plan: exp::rc3_sweep::plan_iw,
    },
    Experiment {
        id: exp::rc3_sweep::LEVELS_ID,
        title: exp::rc3_sweep::LEVELS_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::LEVELS_CLAIMS,
        plan: exp::rc3_sweep::plan_levels,
    },
    Experiment {
        id: exp::rc3_sweep::BDP_ID,
        title: exp::rc3_sweep::BDP_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::BDP_CLAIMS,
        plan: exp::rc3_sweep::plan_bdp,
    },
    Experiment {
        id: exp::rc3_sweep::LOSS_ID,
        title: exp::rc3_sweep::LOSS_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::LOSS_CLAIMS,
        plan: exp::rc3_sweep::plan_loss,
    },
    Experiment {
        id: exp::rc3_sweep::PARTIAL_ID,
        title: exp::rc3_sweep::PARTIAL_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::PARTIAL_CLAIMS,
        plan: exp::rc3_sweep::plan_partial,
    },
    Experiment {
        id: exp::rc3_sweep::TOPO_ID,
        title: exp::rc3_sweep::TOPO_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_sweep::TOPO_CLAIMS,
        plan: exp::rc3_sweep::plan_topologies,
    },
    Experiment {
        id: exp::rc3_compose::COMPOSE_ID,
        title: exp::rc3_compose::COMPOSE_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_compose::COMPOSE_CLAIMS,
        plan: exp::rc3_compose::plan_compose,
    },
    Experiment {
        id: exp::rc3_compose::DEPLOY_ID,
        title: exp::rc3_compose::DEPLOY_TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_compose::DEPLOY_CLAIMS,
        plan: exp::rc3_compose::plan_deploy,
    },
    Experiment {
        id: exp::rc3_video::ID,
        title: exp::rc3_video::TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_video::CLAIMS,
        plan: exp::rc3_video::plan,
    },
    Experiment {
        id: exp::rc3_critical::ID,
        title: exp::rc3_critical::TITLE,
        kind: Kind::Simulated,
        claims: exp::rc3_critical::CLAIMS,
        plan: exp::rc3_critical::plan,
    },
    Experiment {
        id: exp::new_cwv::ID,
        title: exp::new_cwv::TITLE,
        kind: Kind::Simulated,
        claims: exp::new_cwv::CLAIMS,
        plan: exp::new_cwv::plan,
    },
    Experiment {
        id: exp::rdb::LOSS_ID,
        title: exp::rdb::LOSS_TITLE,
        kind: Kind::Simulated,
        claims: exp::rdb::LOSS_CLAIMS,
        plan: exp::rdb::plan_loss,
    },
    Experiment {
        id: exp::rdb::RED_ID,
        title: exp::rdb::RED_TITLE,
        kind: Kind::Simulated,
        claims: exp::rdb::RED_CLAIMS,
        plan: exp::rdb::plan_redundancy,
    },
    Experiment {
        id: exp::rdb::FAIR_ID,
        title: exp::rdb::FAIR_TITLE,
        kind: Kind::Simulated,
        claims: exp::rdb::FAIR_CLAIMS,
        plan: exp::rdb::plan_fairness,
    },
    Experiment {
        id: exp::rdb::UT_ID,
        title: exp::rdb::UT_TITLE,
        kind: Kind::Simulated,
        claims: exp::rdb::UT_CLAIMS,
        plan: exp::rdb::plan_unordered,
    },
    Experiment {
        id: exp::mn_overhead::ID,
        title: exp::mn_overhead::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_overhead::CLAIMS,
        plan: exp::mn_overhead::plan,
    },
    Experiment {
        id: exp::mn_fallback::ID,
        title: exp::mn_fallback::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_fallback::CLAIMS,
        plan: exp::mn_fallback::plan,
    },
    Experiment {
        id: exp::mn_priority::ID,
        title: exp::mn_priority::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_priority::CLAIMS,
        plan: exp::mn_priority::plan,
    },
    Experiment {
        id: exp::mn_vpn::ID,
        title: exp::mn_vpn::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_vpn::CLAIMS,
        plan: exp::mn_vpn::plan,
    },
    Experiment {
        id: exp::sat_web::ID,
        title: exp::sat_web::TITLE,
        kind: Kind::Simulated,
        claims: exp::sat_web::CLAIMS,
        plan: exp::sat_web::plan,
    },
    Experiment {
        id: exp::inner_space::ID,
        title: exp::inner_space::TITLE,
        kind: Kind::Simulated,
        claims: exp::inner_space::CLAIMS,
        plan: exp::inner_space::plan,
    },
    Experiment {
        id: exp::mn_web::ID,
        title: exp::mn_web::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_web::CLAIMS,
        plan: exp::mn_web::plan,
    },
    Experiment {
        id: exp::mn_voip::ID,
        title: exp::mn_voip::TITLE,
        kind: Kind::Simulated,
        claims: exp::mn_voip::CLAIMS,
        plan: exp::mn_voip::plan,
    },
    Experiment {
        id: exp::fse::ID,
        title: exp::fse::TITLE,
        kind: Kind::Simulated,
        claims: exp::fse::CLAIMS,
        plan: exp::fse::plan,
    },
    Experiment {
        id: exp::fse_pause::ID,
        title: exp::fse_pause::TITLE,
        kind: Kind::Simulated,
        claims: exp::fse_pause::CLAIMS,
        plan: exp::fse_pause::plan,
    },
    Experiment {
        id: exp::ledbat::ID,
        title: exp::ledbat::TITLE,
        kind: Kind::Simulated,
        claims: exp::ledbat::CLAIMS,
        plan: exp::ledbat::plan,
    },
    Experiment {
        id: exp::mp_lisa::ID,
        title: exp::mp_lisa::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_lisa::CLAIMS,
        plan: exp::mp_lisa::plan,
    },
    Experiment {
        id: exp::mp_fattree::ID,
        title: exp::mp_fattree::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_fattree::CLAIMS,
        plan: exp::mp_fattree::plan,
    },
    Experiment {
        id: exp::real_bloat::ID,
        title: exp::real_bloat::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_bloat::unsupported,
        },
        claims: exp::real_bloat::CLAIMS,
        plan: exp::real_bloat::plan,
    },
    Experiment {
        id: exp::real_bbr::ID,
        title: exp::real_bbr::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_bbr::unsupported,
        },
        claims: exp::real_bbr::CLAIMS,
        plan: exp::real_bbr::plan,
    },
    Experiment {
        id: exp::real_map::ID,
        title: exp::real_map::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_map::unsupported,
        },
        claims: exp::real_map::CLAIMS,
        plan: exp::real_map::plan,
    },
    Experiment {
        id: exp::real_fse::ID,
        title: exp::real_fse::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_fse::unsupported,
        },
        claims: exp::real_fse::CLAIMS,
        plan: exp::real_fse::plan,
    },
    Experiment {
        id: exp::real_sbd::ID,
        title: exp::real_sbd::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_sbd::unsupported,
        },
        claims: exp::real_sbd::CLAIMS,
        plan: exp::real_sbd::plan,
    },
    Experiment {
        id: exp::real_mptcp::ID,
        title: exp::real_mptcp::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_mptcp::unsupported,
        },
        claims: exp::real_mptcp::CLAIMS,
        plan: exp::real_mptcp::plan,
    },
    Experiment {
        id: exp::real_lisa::ID,
        title: exp::real_lisa::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_lisa::unsupported,
        },
        claims: exp::real_lisa::CLAIMS,
        plan: exp::real_lisa::plan,
    },
    Experiment {
        id: exp::real_rdb::ID,
        title: exp::real_rdb::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_rdb::unsupported,
        },
        claims: exp::real_rdb::CLAIMS,
        plan: exp::real_rdb::plan,
    },
    Experiment {
        id: exp::real_tail::ID,
        title: exp::real_tail::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_tail::unsupported,
        },
        claims: exp::real_tail::CLAIMS,
        plan: exp::real_tail::plan,
    },
    Experiment {
        id: exp::real_ecn::ID,
        title: exp::real_ecn::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_ecn::unsupported,
        },
        claims: exp::real_ecn::CLAIMS,
        plan: exp::real_ecn::plan,
    },
    Experiment {
        id: exp::real_prio::ID,
        title: exp::real_prio::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_prio::unsupported,
        },
        claims: exp::real_prio::CLAIMS,
        plan: exp::real_prio::plan,
    },
    Experiment {
        id: exp::real_rc3::ID,
        title: exp::real_rc3::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_rc3::unsupported,
        },
        claims: exp::real_rc3::CLAIMS,
        plan: exp::real_rc3::plan,
    },
    Experiment {
        id: exp::real_sat_web::ID,
        title: exp::real_sat_web::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::real_sat_web::unsupported,
        },
        claims: exp::real_sat_web::CLAIMS,
        plan: exp::real_sat_web::plan,
    },
    Experiment {
        id: exp::mn_cpu::ID,
        title: exp::mn_cpu::TITLE,
        kind: Kind::RealTime {
            unsupported: exp::mn_cpu::unsupported,
        },
        claims: exp::mn_cpu::CLAIMS,
        plan: exp::mn_cpu::plan,
    },
    Experiment {
        id: exp::design::ID,
        title: exp::design::TITLE,
        kind: Kind::Simulated,
        claims: exp::design::CLAIMS,
        plan: exp::design::plan,
    },
    Experiment {
        id: exp::design::NA_ID,
        title: exp::design::NA_TITLE,
        kind: Kind::Simulated,
        claims: exp::design::NA_CLAIMS,
        plan: exp::design::plan_not_reproducible,
    },
    Experiment {
        id: exp::mp_sttf::ID,
        title: exp::mp_sttf::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_sttf::CLAIMS,
        plan: exp::mp_sttf::plan,
    },
    Experiment {
        id: exp::mp_b1::ID,
        title: exp::mp_b1::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_b1::CLAIMS,
        plan: exp::mp_b1::plan,
    },
    Experiment {
        id: exp::mp_map::ID,
        title: exp::mp_map::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_map::CLAIMS,
        plan: exp::mp_map::plan,
    },
    Experiment {
        id: exp::mp_compose::ID,
        title: exp::mp_compose::TITLE,
        kind: Kind::Simulated,
        claims: exp::mp_compose::CLAIMS,
        plan: exp::mp_compose::plan,
    },
];

/// Looks up experiments by ID; `all` (or no IDs) selects every one.
pub fn select(ids: &[String]) -> Result<Vec<Experiment>, String> {
    if ids.is_empty() || ids.iter().any(|i| i == "all") {
        return Ok(REGISTRY.to_vec());
    }
    let mut out = Vec::new();
    for id in ids {
        let e = REGISTRY.iter().find(|e| e.id == id).ok_or_else(|| {
            let known: Vec<&str> = REGISTRY.iter().map(|e| e.id).collect();
            format!(
                "unknown experiment '{id}'; known: {}, all",
                known.join(", ")
            )
        })?;
        if !out.iter().any(|x: &Experiment| x.id == e.id) {
            out.push(*e);
        }
    }
    Ok(out)
}

/// Runs the selected experiments (pooled) and returns their results in order.
pub fn run_suite(exps: &[Experiment], quick: bool, progress: &Progress) -> Vec<ExperimentResult> {
    runner::run_experiments(exps, quick, progress)
}

/// [`run_suite`], and where its time went (`brisk repro --timings`).
pub fn run_suite_timed(
    exps: &[Experiment],
    quick: bool,
    progress: &Progress,
) -> (Vec<ExperimentResult>, timings::Timings) {
    runner::run_experiments_timed(exps, quick, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_selectable() {
        let all = select(&[]).unwrap();
        assert_eq!(all.len(), REGISTRY.len());
        let mut ids: Vec<&str> = REGISTRY.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), REGISTRY.len());
        assert_eq!(select(&["dc-micro".into()]).unwrap()[0].id, "dc-micro");
        assert!(select(&["nope".into()]).is_err());
    }

    #[test]
    fn every_plan_builds_valid_scenarios_in_both_modes() {
        for e in REGISTRY {
            for quick in [true, false] {
                let p = (e.plan)(quick).unwrap_or_else(|m| panic!("{}: {m}", e.id));
                // mn-vpn drives its own nested stacks (brisk_sim::vpn) in the analysis
                // and checks its configs in `plan`; it has no scenario jobs.
                // design and not-reproducible run unit-test checks or only state
                // reasons. sbd and sbd-fse build their own networks (brisk_sim's
                // engine, not a scenario file) in the analysis; mp-sttf and mp-b1 drive
                // two brisk endpoints over their own two-path links (mp_b1_net).
                let own_driver = [
                    exp::sbd::ID,
                    exp::sbd_fse::ID,
                    exp::mp_sttf::ID,
                    exp::mp_b1::ID,
                    exp::mp_map::ID,
                    exp::mp_compose::ID,
                    exp::real_mptcp::ID,
                    exp::mn_vpn::ID,
                    exp::sat_web::ID,
                    exp::real_sat_web::ID,
                    exp::inner_space::ID,
                    exp::mn_cpu::ID,
                    exp::design::ID,
                    exp::design::NA_ID,
                    exp::real_sbd::ID,
                    exp::real_bbr::ID,
                ]
                .contains(&e.id);
                assert!(!p.jobs.is_empty() || own_driver, "{}", e.id);
            }
        }
    }
}
