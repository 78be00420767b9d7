"""The Ray backend: a sweep's runs (and `brisk repro`'s experiments) as Ray tasks.

Each task carries a batch of runs (a cell's scenario text, its seed) and calls the same
in-process simulator as the local backend; it returns each run's summary text, from
which the driver derives rows exactly as locally. Results are keyed by batch, so a task
that Ray retries after its worker died (``max_retries``) still contributes its runs
once; they stream back with ``ray.wait`` as tasks finish.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import _brisk

Run = Tuple[int, int, Optional[str], Optional[str]]
#: What a task receives: (cell, seed, scenario text, label, kind) per run.
Job = Tuple[int, int, str, str, str]

#: Retries of a task whose worker process or node died (Ray's default is 3).
MAX_RETRIES = 3


class RevisionMismatch(RuntimeError):
    """A Ray worker runs another brisk build than the driver."""


def _check_build(driver_build: str) -> None:
    if _brisk.__build__ != driver_build:
        raise RevisionMismatch(
            f"this Ray worker runs brisk {_brisk.__build__!r}, the driver {driver_build!r}: "
            "install the same brisk revision on every node (docs/cluster.md)"
        )


def _run_batch(jobs: Sequence[Job], driver_build: str) -> Tuple[str, List[Run]]:
    """Runs on a Ray worker: every run of the batch, in-process, errors as results.
    Returns the node that ran them too, for `SweepResult.nodes`."""
    import ray

    _check_build(driver_build)
    out: List[Run] = []
    for cell, seed, text, label, kind in jobs:
        try:
            out.append((cell, seed, _brisk.run_summary(text, label, kind, seed), None))
        except Exception as e:
            out.append((cell, seed, None, str(e)))
    return ray.get_runtime_context().get_node_id(), out


def _run_experiment(exp_id: str, quick: bool, driver_build: str) -> str:
    """Runs on a Ray worker: one reproduction experiment, its result as JSON."""
    _check_build(driver_build)
    return _brisk.repro_run_one(exp_id, quick)


def connect(address: Optional[str]):
    """Ray, initialised: joins `address` unless Ray already runs in this process.
    Returns (ray module, whether we started it and so should shut it down)."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            'backend="ray" needs Ray: pip install "ray>=2.60,<2.61" (or pip install "./python[ray]")'
        ) from None
    if ray.is_initialized():
        return ray, False
    # The workers must import the same brisk; in a shared environment they do.
    if address is None:
        # A local Ray just for this call: no dashboard to start and leave behind.
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    else:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    return ray, True


def default_batch(runs: int, cpus: float) -> int:
    """About four tasks per CPU: few enough that Ray's per-task cost (milliseconds)
    stays small against the runs, enough that a slow batch does not leave CPUs idle."""
    return max(1, math.ceil(runs / max(1.0, 4 * cpus)))


def run_sweep(
    sw: "_brisk.Sweep",
    address: Optional[str] = None,
    batch: Optional[int] = None,
    progress: bool = True,
    on_run: Optional[Callable[[Run], None]] = None,
    nodes: Optional[Dict[str, int]] = None,
) -> List[Run]:
    """Runs every job of `sw` as Ray tasks; returns each run exactly once. `nodes`,
    if given, receives how many runs each Ray node ran."""
    ray, started = connect(address)
    try:
        jobs = sw.jobs()
        label, kind = sw.label, sw.kind
        scen = [sw.scenario(i) for i in range(len(sw))]
        cpus = ray.cluster_resources().get("CPU", 1.0)
        size = batch or default_batch(len(jobs), cpus)
        if size < 1:
            raise ValueError(f"batch must be at least 1, got {size}")
        batches = [
            [(c, s, scen[c], label, kind) for c, s in jobs[i : i + size]]
            for i in range(0, len(jobs), size)
        ]
        # SPREAD: Ray's default placement packed batches unevenly on two nodes
        # (bench/ray_sweep.py, docs/cluster.md); spreading them ran at local speed.
        task = ray.remote(max_retries=MAX_RETRIES, scheduling_strategy="SPREAD")(_run_batch)
        build = _brisk.__build__
        pending: Dict[object, int] = {
            task.remote(b, build): i for i, b in enumerate(batches)
        }
        done: Dict[int, List[Run]] = {}
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(jobs), desc=f"brisk sweep {sw.name} (ray)", unit="run")
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    i = pending.pop(ref)
                    node, runs = ray.get(ref)
                    if i in done:  # never expected: one result per batch
                        continue
                    done[i] = runs
                    if nodes is not None:
                        nodes[node] = nodes.get(node, 0) + len(runs)
                    for r in runs:
                        if on_run:
                            on_run(r)
                    if bar is not None:
                        bar.update(len(runs))
        finally:
            if bar is not None:
                bar.close()
        return [r for i in sorted(done) for r in done[i]]
    finally:
        if started:
            ray.shutdown()


def run_repro(
    ids: Sequence[str],
    quick: bool,
    address: Optional[str] = None,
    progress: bool = True,
) -> List[str]:
    """Runs the simulated experiments of `ids` as Ray tasks (one experiment per task,
    its runs on that worker's cores) and the real-time ones here, one at a time after
    the rest, as the local runner does. Returns each result's JSON, in `ids` order."""
    kinds = {e[0]: e[1] for e in _brisk.repro_list()}
    ray, started = connect(address)
    try:
        task = ray.remote(max_retries=MAX_RETRIES, scheduling_strategy="SPREAD")(
            _run_experiment
        )
        sim = [i for i in ids if kinds.get(i) == "sim"]
        pending = {task.remote(i, quick, _brisk.__build__): i for i in sim}
        out: Dict[str, str] = {}
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(ids), desc="brisk repro (ray)", unit="experiment")
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    out[pending.pop(ref)] = ray.get(ref)
                    if bar is not None:
                        bar.update(1)
            # Real-time experiments need a quiet machine: here, after the pool.
            for i in ids:
                if i not in out:
                    out[i] = _brisk.repro_run_one(i, quick)
                    if bar is not None:
                        bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        return [out[i] for i in ids]
    finally:
        if started:
            ray.shutdown()
