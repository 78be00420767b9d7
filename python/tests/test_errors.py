"""Bad input raises brisk.ScenarioError naming the field or grid key, never a crash."""

import pytest

import brisk

GOOD = {
    "name": "t",
    "duration": "1s",
    "bottleneck": {"rate": "10Mbit"},
    "flow": [{"rtt": "10ms", "app": {"kind": "bulk"}}],
}


def with_(path, value):
    import copy

    d = copy.deepcopy(GOOD)
    *head, last = path
    t = d
    for k in head:
        t = t[k]
    t[last] = value
    return d


@pytest.mark.parametrize(
    "path, value, field, words",
    [
        (("bottleneck", "rate"), "fast", "bottleneck.rate", "expected a rate"),
        (("duration",), "0s", "duration", "must be > 0"),
        (("flow", 0, "cc"), "nv", "flow[0].cc", "nv"),
        (("flow", 0, "rtt"), None, "flow[0].rtt", "leave the field out"),
        (("bottleneck", "colour"), "red", "bottleneck.colour", "unknown field"),
        (("flow", 0, "tcp"), {"mptcp": {"subflows": 9}}, "flow[0].tcp.mptcp.subflows", "0..=8"),
        (("flow", 0, "tcp"), {"mptcp": {"scheduler": "fast"}}, "flow[0].tcp.mptcp.scheduler", "sttf"),
        (("flow", 0, "tcp"), {"mptcp": {"subflow": 2}}, "flow[0].tcp.mptcp.subflow", "unknown field"),
    ],
)
def test_a_bad_scenario_names_its_field(path, value, field, words):
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.run(with_(path, value))
    assert e.value.field == field, str(e.value)
    assert words in str(e.value)
    assert isinstance(e.value, ValueError)


def test_the_same_error_as_brisk_run_for_toml_text_and_files(tmp_path):
    text = 'name = "t"\nduration = "1s"\n[bottleneck]\nrate = "ten"\n[[flow]]\nrtt = "10ms"\napp = { kind = "bulk" }\n'
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.run(text)
    assert e.value.field == "bottleneck.rate"
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(brisk.ScenarioError) as e2:
        brisk.run(f)
    assert e2.value.field == "bottleneck.rate" and e2.value.file == str(f)
    with pytest.raises(brisk.ScenarioError) as e3:
        brisk.run(tmp_path / "missing.toml")
    assert "missing.toml" in str(e3.value)


def test_a_bad_grid_key_names_the_key():
    for key, words in [
        ("bottleneck.rat", "unknown field"),
        ("flow[3].rtt", "1 entries in flow"),
        ("flow[x].rtt", "whole number"),
        ("name.x", "not a table"),
    ]:
        with pytest.raises(brisk.ScenarioError) as e:
            brisk.sweep(GOOD, grid={key: [1]}, progress=False)
        assert e.value.field == f'grid."{key}"', str(e.value)
        assert words in str(e.value)


def test_a_bad_grid_value_names_the_key_and_the_value():
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.sweep(GOOD, grid={"bottleneck.rate": ["5Mbit", "fast"]}, progress=False)
    assert e.value.field == 'grid."bottleneck.rate"'
    assert '"fast"' in str(e.value) and "cell 1" in str(e.value)


def test_bad_seeds_backend_and_grid_shapes_say_why():
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.sweep(GOOD, grid={"bottleneck.rate": []}, progress=False)
    assert "1 to" in str(e.value)
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.sweep(GOOD, seeds=[1, 1], progress=False)
    assert e.value.field == "seeds" and "twice" in str(e.value)
    with pytest.raises(brisk.ScenarioError) as e:
        brisk.sweep(GOOD, seeds=[-1], progress=False)
    assert e.value.field == "seeds"
    with pytest.raises(ValueError, match="backend"):
        brisk.sweep(GOOD, backend="slurm", progress=False)
    with pytest.raises(brisk.ScenarioError, match="sweep file"):
        brisk.sweep("sweeps/bufferbloat-grid.toml", grid={"x": [1]}, progress=False)
    with pytest.raises(ValueError, match="unknown experiment"):
        brisk.repro(["no-such-experiment"], quick=True)


def test_mptcp_knobs_reach_the_run_without_a_warning():
    # Since MP_JOIN is wired the knobs act and the scenario has no warning; the
    # dumbbell sender takes the `addr` endpoint as a further address.
    import copy
    import warnings

    d = copy.deepcopy(GOOD)
    d["flow"][0]["cc"] = "lia+lisa"
    d["flow"][0]["tcp"] = {"mptcp": {"subflows": 3, "scheduler": "sttf", "endpoint": [{"addr": "198.18.9.1"}]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        r = brisk.run(d)
    assert r.summary["flows"][0]["bytes_delivered"] > 0
