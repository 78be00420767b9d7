"""brisk from Python: the deterministic simulator of brisk (wire-compatible,
low-latency TCP research) in-process, parameter sweeps with confidence intervals on
this machine or on a Ray cluster, and the reproduction suite's claims as DataFrames.

    >>> import brisk
    >>> r = brisk.run("scenarios/bufferbloat-cubic.toml")
    >>> r.flows[["cc", "goodput_bps", "rtt_ms.mean"]]
    >>> r.rtt.plot(x="time_s", y="mean_ms")
    >>> s = brisk.sweep("sweeps/bufferbloat-grid.toml")            # or backend="ray"
    >>> brisk.repro(["dc-micro"], quick=True)

Scenario files, sweep files and their fields: docs/scenarios.md and docs/sweeps.md.
"""

from __future__ import annotations

import os
import warnings
from typing import Optional, Union

from . import _brisk
from ._brisk import ScenarioError
from ._repro import experiments, repro
from ._result import RunResult
from ._scenario import ScenarioLike, scenario_text
from ._sweep import SweepResult, plan, sweep

__version__ = _brisk.__version__
#: The package version and the git commit the extension was built from.
__build__ = _brisk.__build__

__all__ = [
    "run",
    "sweep",
    "plan",
    "repro",
    "experiments",
    "RunResult",
    "SweepResult",
    "ScenarioError",
]


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> RunResult:
    """Simulates one scenario, in-process, with the GIL released while it runs.

    Args:
        scenario: a dict (the keys of a scenario file, e.g.
            ``{"name": "x", "duration": "10s", "bottleneck": {"rate": "10Mbit"},
            "flow": [{"rtt": "20ms", "cc": "cubic", "app": {"kind": "bulk"}}]}``),
            TOML text, or the path of a scenario file. Dumbbell and network
            (``[workload]``) scenarios both work.
        seed: the seed (default: the scenario's ``seed``). The same scenario and seed
            give the same result, byte for byte.
        out: also write what ``brisk run --out DIR`` writes (summary.json and the CSV
            time series) into this directory.

    Returns:
        A :class:`RunResult`: ``summary`` (dict, as ``brisk run --json``), ``flows``
        (DataFrame), and the time series as DataFrames (``goodput``, ``rtt``, ``cwnd``,
        ``queue``, ``drops``, ``records``; ``series`` has them all).

    Raises:
        ScenarioError: the scenario is invalid; ``e.field`` names the field (e.g.
            ``bottleneck.rate``) and the message says what it accepts.
    """
    text, label = scenario_text(scenario)
    out_s = os.fspath(out) if out is not None else None
    summary, files = _brisk.run(text, label, seed, out_s)
    # What the scenario asks for and the run did not do (as `brisk run` warns on
    # stderr), e.g. MPTCP on a brisk flow before brisk's MPTCP connection exists.
    for w in _brisk.scenario_warnings(text, label):
        warnings.warn(w, UserWarning, stacklevel=2)
    return RunResult(summary, dict(files), _brisk.scenario_kind(text))
