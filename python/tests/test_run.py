"""brisk.run: the same results as `brisk run`, as dicts and DataFrames."""

import json
import subprocess
import threading

import brisk

SCEN = "scenarios/bufferbloat-cubic.toml"


def test_path_text_and_dict_give_the_same_summary():
    a = brisk.run(SCEN)
    text = open(SCEN).read()
    b = brisk.run(text)
    import tomllib

    c = brisk.run(tomllib.loads(text))
    assert a.summary_json == b.summary_json == c.summary_json
    assert a.summary["scenario"] == "bufferbloat-cubic"


def test_summary_is_brisk_run_json_byte_for_byte(brisk_bin):
    out = subprocess.run(
        [brisk_bin, "run", SCEN, "--seed", "3", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    r = brisk.run(SCEN, seed=3)
    assert json.loads(out) == r.summary
    assert out.strip() == r.summary_json


def test_flows_and_series_are_dataframes_with_the_cli_columns(tmp_path):
    r = brisk.run(SCEN, out=tmp_path)
    assert list(r.flows["cc"]) == ["cubic"]
    assert r.flows.loc[0, "goodput_bps"] > 9e6
    assert "rtt_ms.mean" in r.flows.columns
    assert set(r.series) >= {"goodput", "rtt", "cwnd", "queue", "drops", "records"}
    assert list(r.rtt.columns) == ["time_s", "flow", "samples", "min_ms", "mean_ms", "max_ms"]
    assert len(r.goodput) == 200  # 20 s at the default 100 ms sampling
    # The files brisk run --out writes, with the same CSV text as the frames.
    for name in ["summary.json", "goodput.csv", "rtt.csv", "cwnd.csv", "queue.csv", "drops.csv"]:
        assert (tmp_path / name).exists(), name
    assert (tmp_path / "rtt.csv").read_text() == r._files["rtt.csv"]
    html = r._repr_html_()
    assert "bufferbloat-cubic" in html and "<table" in html
    try:
        r.no_such_series
    except AttributeError as e:
        assert "series:" in str(e)


def test_record_latencies_come_as_a_frame():
    r = brisk.run("scenarios/records-example.toml")
    assert len(r.records) > 0
    assert list(r.records.columns) == [
        "flow",
        "app",
        "index",
        "priority",
        "generated_s",
        "first_tx_s",
        "delivered_s",
        "latency_ms",
    ]
    assert (r.records.latency_ms >= 0).all()


def test_a_network_scenario_runs_too():
    import tomllib

    sc = tomllib.loads(open("scenarios/rc3-internet2-small.toml").read())
    sc["workload"]["flows"] = 40
    r = brisk.run(sc)
    assert r.kind == "network"
    assert len(r.flows) == 40
    assert "fct" in r.summary


def test_the_gil_is_released_while_simulating():
    # Another Python thread keeps running while a simulation is in progress: the
    # counter advances between the run's start and its end.
    sc = open(SCEN).read().replace('duration = "20s"', 'duration = "120s"')
    ticks = []
    done = threading.Event()

    def spin():
        while not done.is_set():
            ticks.append(1)

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = len(ticks)
        brisk.run(sc)
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    assert during > 1000, during
