//! brisk's Scalable, HighSpeed, Veno, YeAH and TCP-LP carry Linux's module names: a
//! brisk flow's `cc` builds brisk's controller, and a `stack = "linux"` flow with the
//! same name asks its kernel for the module of that name (`FlowSpec::kernel_cc`).

use brisk_scenario::Scenario;
use brisk_tcp::cc::CcAlgorithm;

fn flow(extra: &str) -> Scenario {
    Scenario::from_toml_str_named(
        &format!(
            "name = \"v\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n{extra}\n"
        ),
        "v.toml",
    )
    .unwrap()
}

#[test]
fn the_linux_module_names_build_brisk_controllers_and_name_kernel_modules() {
    for (name, alg) in [
        ("scalable", CcAlgorithm::Scalable),
        ("highspeed", CcAlgorithm::HighSpeed),
        ("veno", CcAlgorithm::Veno),
        ("yeah", CcAlgorithm::Yeah),
        ("lp", CcAlgorithm::Lp),
    ] {
        let sc = flow(&format!("cc = \"{name}\""));
        assert_eq!(sc.flows[0].cc, alg);
        assert_eq!(alg.name(), name);
        assert_eq!(alg.build().name(), name);
        let sc = flow(&format!("cc = \"{name}\"\nstack = \"linux\""));
        assert_eq!(sc.flows[0].kernel_cc(), name);
    }
}
