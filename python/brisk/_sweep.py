"""Sweeps: a base scenario, a grid of scenario fields and seeds, run locally or on Ray.

The sweep itself (cells, validation, rows, confidence intervals) is brisk-sweep's, the
same code as ``brisk sweep FILE``; this module only schedules its runs and turns the
results into DataFrames.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _brisk
from ._scenario import ScenarioLike, error, looks_like_toml

#: (cell, seed, summary JSON or None, error or None): one finished run.
Run = Tuple[int, int, Optional[str], Optional[str]]


class SweepResult:
    """A finished sweep.

    Attributes:
        rows: one row per (cell, seed, flow): ``cell``, one column per grid key,
            ``seed``, ``flow``, then the flow's results and the run-wide ones
            (``bottleneck.*``, ``sim.*``), as ``brisk sweep`` writes ``rows.csv``.
        summary: one row per (cell, flow): the grid values, ``seeds``,
            ``deterministic`` (every seed gave the same row: the scenario draws nothing
            at random; NaN from a single seed) and, for every numeric column,
            ``<column>.mean`` and ``<column>.ci95`` (the half-width of the two-sided
            95 % Student-t confidence interval across seeds; NaN from a single seed, 0
            when the value is the same in every seed).
        runs: every run as (cell, seed, summary JSON text or None, error or None),
            cell-major. The summary text is byte-identical for the same cell and seed
            on any backend.
        name, keys, seeds: the sweep's name, grid keys and seeds.
        table: the text table ``brisk sweep`` prints (headline metrics per cell).
    """

    def __init__(
        self, sweep: "_brisk.Sweep", runs: List[Run], nodes: Optional[Dict[str, int]] = None
    ):
        #: Runs per Ray node id (empty for the local backend).
        self.nodes: Dict[str, int] = dict(nodes or {})
        self.name = sweep.name
        self.keys: List[str] = sweep.keys
        self.seeds: List[int] = sweep.seeds
        (rows_json, summary_json, self.runs_jsonl, self.rows_csv, self.summary_csv,
         self.table) = sweep.assemble(runs)
        order = {s: i for i, s in enumerate(self.seeds)}
        self.runs: List[Run] = sorted(runs, key=lambda r: (r[0], order.get(r[1], 0)))
        # Values from the JSON (types kept), columns in the CSV files' order (cell,
        # grid keys, seed, flow, then the rest sorted).
        self.rows = _frame(rows_json, self.rows_csv)
        self.summary = _frame(summary_json, self.summary_csv)

    @property
    def failures(self) -> List[Run]:
        """The runs that raised an error (their error text is the fourth field)."""
        return [r for r in self.runs if r[3] is not None]

    def to_dir(self, path: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes rows.csv, summary.csv and runs.jsonl, as ``brisk sweep --out``."""
        d = Path(path)
        d.mkdir(parents=True, exist_ok=True)
        (d / "rows.csv").write_text(self.rows_csv)
        (d / "summary.csv").write_text(self.summary_csv)
        (d / "runs.jsonl").write_text(self.runs_jsonl)
        return d

    def __repr__(self) -> str:
        return (
            f"<brisk.SweepResult {self.name!r}: {len(self.summary)} (cell, flow) groups, "
            f"{len(self.runs)} runs, {len(self.failures)} failed>"
        )

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>brisk sweep</b> {html.escape(self.name)}: {len(self.runs)} runs "
            f"({len(self.seeds)} seeds per cell), mean ± 95 % CI</p>"
        )
        ids = [c for c in ["cell", *self.keys, "flow", "seeds", "deterministic"]
               if c in self.summary.columns]
        view = self.summary[ids].copy()
        metrics = [("goodput_bps", "goodput Mbit/s", 1e-6), ("rtt_ms.mean", "rtt mean ms", 1),
                   ("rtt_ms.p99", "rtt p99 ms", 1), ("fct_s", "fct s", 1),
                   ("stats.mean_fct_s", "mean FCT s", 1)]

        def pm(m: float, ci: float, scale: float) -> str:
            if m != m:  # NaN: no seed gave a number
                return "–"
            if ci != ci or ci == 0:  # one seed, or the same value in every seed
                return f"{m * scale:.4g}"
            return f"{m * scale:.4g} ± {ci * scale:.2g}"

        for key, label, scale in metrics:
            if f"{key}.mean" in self.summary.columns:
                view[label] = [pm(m, c, scale) for m, c in
                               zip(self.summary[f"{key}.mean"], self.summary[f"{key}.ci95"])]
        return head + view.to_html(index=False, na_rep="–")


def _frame(rows_json: str, csv_text: str) -> pd.DataFrame:
    header = next(csv.reader(io.StringIO(csv_text)), [])
    return pd.DataFrame(json.loads(rows_json), columns=header)


def _is_sweep_file(text: str) -> bool:
    """A sweep file names its base; a scenario never has a top-level `base`."""
    import tomllib

    try:
        return "base" in tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False


def plan(
    base: Union[ScenarioLike, "os.PathLike[str]"],
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    name: Optional[str] = None,
) -> "_brisk.Sweep":
    """The validated sweep (cells and seeds) without running it; see :func:`sweep`."""
    if isinstance(base, os.PathLike):
        base = os.fspath(base)
    if isinstance(base, str) and not looks_like_toml(base):
        p = Path(base)
        try:
            text = p.read_text()
        except OSError as e:
            raise error(str(p), "(file)", str(e.strerror or e)) from None
        if _is_sweep_file(text):
            if grid is not None or seeds is not None or name is not None:
                raise error(
                    str(p),
                    "(file)",
                    "is a sweep file, which has its own grid and seeds; "
                    "pass grid=, seeds= and name= only with a scenario",
                )
            return _brisk.Sweep.load(str(p))
    spec: dict = {"grid": {k: list(v) for k, v in (grid or {}).items()}}
    if seeds is not None:
        spec["seeds"] = [int(s) for s in seeds]
    if name is None:
        name = Path(base).stem if isinstance(base, str) and not looks_like_toml(base) else "sweep"
    spec["name"] = name
    if isinstance(base, Mapping):
        spec["base"] = dict(base)
    elif isinstance(base, str) and looks_like_toml(base):
        spec["base_toml"] = base
    elif isinstance(base, str):
        spec["base"] = base
    else:
        raise TypeError(
            f"base must be a dict, TOML text or a path, not {type(base).__name__}"
        )
    for k, v in spec["grid"].items():
        if not isinstance(k, str):
            raise error("<python>", f"grid.{k!r}", "grid keys are text, e.g. 'bottleneck.rate'")
    return _brisk.Sweep.from_json(json.dumps(spec), "<python>", os.getcwd())


def _bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run")


def run_local(
    sw: "_brisk.Sweep",
    workers: Optional[int] = None,
    progress: bool = True,
    on_run: Optional[Callable[[Run], None]] = None,
) -> List[Run]:
    """Runs every job of `sw` on this machine: `workers` threads (default: every
    core), each in the simulator with the GIL released."""
    jobs = sw.jobs()
    workers = workers or os.cpu_count() or 1
    label, kind = sw.label, sw.kind
    scen = [sw.scenario(i) for i in range(len(sw))]

    def one(cell: int, seed: int) -> Run:
        try:
            return (cell, seed, _brisk.run_summary(scen[cell], label, kind, seed), None)
        except Exception as e:  # a failed run is a result, not the end of the sweep
            return (cell, seed, None, str(e))

    out: List[Run] = []
    bar = _bar(len(jobs), f"brisk sweep {sw.name}", progress)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futs = [pool.submit(one, c, s) for c, s in jobs]
            for f in as_completed(futs):
                r = f.result()
                out.append(r)
                if on_run:
                    on_run(r)
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out


def sweep(
    base: Union[ScenarioLike, "os.PathLike[str]"],
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    backend: str = "local",
    ray_address: Optional[str] = None,
    *,
    name: Optional[str] = None,
    workers: Optional[int] = None,
    batch: Optional[int] = None,
    progress: bool = True,
    on_run: Optional[Callable[[Run], None]] = None,
) -> SweepResult:
    """Runs a scenario over a grid of parameter values and seeds.

    Args:
        base: the scenario to vary (a dict, TOML text or a scenario file's path), or
            the path of a sweep file (TOML with ``base``, ``[grid]`` and ``seeds``: the
            file ``brisk sweep FILE`` runs), which then brings its own grid and seeds.
        grid: scenario paths to their values, e.g.
            ``{"bottleneck.rate": ["10Mbit", "20Mbit"],
            "flow[0].tcp.abe.beta_ecn": [0.7, 0.85]}``. Cells are the cartesian product,
            keys in sorted order, the last key varying fastest. A path that is not a
            scenario field, or a value the field cannot take, raises
            :class:`ScenarioError` naming the key before anything runs.
        seeds: the seeds every cell runs with (e.g. ``range(10)``); default: the
            scenario's own seed.
        backend: ``"local"`` (threads on this machine) or ``"ray"`` (Ray tasks).
        ray_address: the Ray cluster to join (``"auto"``, ``"ray://host:10001"``, or
            ``"host:6379"``); default: an already initialised Ray, or a local one.
        workers: local threads (default: every core).
        batch: runs per Ray task (default: about four tasks per cluster CPU, so per-task
            overhead stays small while the load stays balanced).
        progress: show a progress bar (tqdm: in notebooks and terminals).
        on_run: called with each run ``(cell, seed, summary JSON, error)`` as it
            finishes, in finishing order (results stream back from Ray workers).

    Returns:
        A :class:`SweepResult` with ``rows`` (one per cell, seed and flow) and
        ``summary`` (per cell and flow: mean and 95 % CI across seeds) DataFrames.

    Example:
        >>> r = brisk.sweep("scenarios/bufferbloat-cubic.toml",
        ...                 grid={"bottleneck.rate": ["5Mbit", "10Mbit"]}, seeds=range(3))
        >>> r.summary[["bottleneck.rate", "rtt_ms.mean.mean", "rtt_ms.mean.ci95"]]
    """
    if backend not in ("local", "ray"):
        raise ValueError(f'backend must be "local" or "ray", got {backend!r}')
    sw = plan(base, grid, seeds, name)
    nodes: Dict[str, int] = {}
    if backend == "local":
        runs = run_local(sw, workers=workers, progress=progress, on_run=on_run)
    else:
        from . import _ray

        runs = _ray.run_sweep(
            sw, address=ray_address, batch=batch, progress=progress, on_run=on_run, nodes=nodes
        )
    return SweepResult(sw, runs, nodes)

