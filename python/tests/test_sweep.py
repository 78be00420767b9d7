"""brisk.sweep on local threads: rows, confidence intervals, the sweep file, the CLI."""

import json
import math
import subprocess

import pandas as pd

import brisk

SWEEP = "sweeps/bufferbloat-grid.toml"
BASE = "scenarios/bufferbloat-cubic.toml"
# t(0.975, df), exact (R: qt(0.975, df)).
T95 = {1: 12.706204736175, 2: 4.302652729749, 3: 3.182446305284, 4: 2.776445105198}


def test_a_grid_gives_one_row_per_cell_seed_and_flow():
    r = brisk.sweep(
        BASE,
        grid={"bottleneck.rate": ["5Mbit", "10Mbit"], "flow[0].rtt": ["10ms", "40ms"]},
        seeds=range(3),
        progress=False,
    )
    assert len(r.runs) == 12 and not r.failures
    assert len(r.rows) == 12  # one flow
    assert list(r.rows.columns[:5]) == ["cell", "bottleneck.rate", "flow[0].rtt", "seed", "flow"]
    # Keys sorted, each key's values in the order given, the last key fastest.
    cells = r.rows.drop_duplicates("cell")[["bottleneck.rate", "flow[0].rtt"]]
    assert cells.values.tolist() == [
        ["5Mbit", "10ms"], ["5Mbit", "40ms"], ["10Mbit", "10ms"], ["10Mbit", "40ms"]
    ]
    assert len(r.summary) == 4 and (r.summary.seeds == 3).all()
    # Goodput follows the rate.
    g = r.summary.groupby("bottleneck.rate")["goodput_bps.mean"].min()
    assert g["10Mbit"] > 1.8 * r.summary.groupby("bottleneck.rate")["goodput_bps.mean"].max()["5Mbit"]
    assert "<table" in r._repr_html_()


def test_the_confidence_interval_is_students_t_across_seeds():
    r = brisk.sweep(
        "scenarios/two-cubic-fairness.toml", grid={"flow[0].rtt": ["20ms"]}, seeds=range(4),
        progress=False,
    )
    for (cell, flow), g in r.rows.groupby(["cell", "flow"]):
        xs = g["rtt_ms.mean"]
        s = r.summary[(r.summary.cell == cell) & (r.summary.flow == flow)].iloc[0]
        assert math.isclose(s["rtt_ms.mean.mean"], xs.mean(), rel_tol=1e-12)
        half = T95[len(xs) - 1] * xs.std(ddof=1) / math.sqrt(len(xs))
        assert math.isclose(s["rtt_ms.mean.ci95"], half, rel_tol=1e-9, abs_tol=1e-12)


def test_the_sweep_file_and_the_same_grid_from_python_agree():
    a = brisk.sweep(SWEEP, progress=False)
    b = brisk.sweep(
        BASE,
        grid={
            "flow[0].cc": ["cubic", "reno"],
            "bottleneck.rate": ["5Mbit", "10Mbit"],
            "bottleneck.loss": [{"kind": "bernoulli", "p": 0.0005},
                                {"kind": "bernoulli", "p": 0.002}],
        },
        seeds=[1, 2, 3],
        progress=False,
    )
    assert [x[2] for x in a.runs] == [x[2] for x in b.runs]
    pd.testing.assert_frame_equal(a.summary, b.summary)


def test_results_stream_and_do_not_depend_on_the_thread_count():
    seen = []
    one = brisk.sweep(SWEEP, workers=1, progress=False, on_run=seen.append)
    two = brisk.sweep(SWEEP, workers=2, progress=False)
    assert len(seen) == len(one.runs) == 24
    assert one.runs == two.runs
    assert one.rows_csv == two.rows_csv and one.summary_csv == two.summary_csv


def test_brisk_sweep_cli_writes_the_same_files(brisk_bin, tmp_path):
    subprocess.run(
        [brisk_bin, "sweep", SWEEP, "--out", tmp_path / "cli"], check=True,
        capture_output=True,
    )
    py = brisk.sweep(SWEEP, progress=False).to_dir(tmp_path / "py")
    for name in ["runs.jsonl", "rows.csv", "summary.csv"]:
        assert (tmp_path / "cli" / name).read_text() == (py / name).read_text(), name
    first = json.loads((py / "runs.jsonl").read_text().splitlines()[0])
    assert first["cell"] == 0 and first["summary"]["scenario"] == "bufferbloat-cubic"
