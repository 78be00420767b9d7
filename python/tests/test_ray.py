"""The Ray backend on a real two-node cluster on this machine: the same results as
locally, both nodes used, and a killed worker costs nothing but time."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest

import brisk

SWEEP = "sweeps/bufferbloat-grid.toml"


def test_a_sweep_on_two_ray_nodes_equals_the_local_run(ray_cluster):
    local = brisk.sweep(SWEEP, progress=False)
    remote = brisk.sweep(SWEEP, backend="ray", ray_address=ray_cluster.address, batch=2,
                         progress=False)
    assert remote.runs == local.runs  # byte-identical summaries, cell by cell
    assert remote.rows_csv == local.rows_csv
    assert remote.summary_csv == local.summary_csv
    assert len(remote.nodes) == 2, remote.nodes  # both nodes ran batches
    assert sum(remote.nodes.values()) == len(local.runs)


def test_a_worker_of_another_build_is_refused(ray_cluster):
    import ray

    from brisk import _ray

    with pytest.raises(ray.exceptions.RayTaskError, match="install the same brisk revision"):
        ray.get(ray.remote(_ray._run_batch).remote([], "0.0.0 someothercommit"))


def _cmdline(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _task_workers(temp_dir: str):
    """PIDs of this cluster's Ray workers executing a sweep batch (Ray sets the process
    title; a worker's raylet, its parent, names the cluster's temp dir), so no other Ray
    on the machine is touched."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        pid = int(d.name)
        if b"ray::_run_batch" in _cmdline(pid) and temp_dir.encode() in _cmdline(_parent(pid)):
            out.append(pid)
    return out


def test_a_killed_worker_is_retried_and_every_row_appears_once(ray_cluster):
    # Longer runs, one per task, so a task is surely running when we strike.
    grid = {"duration": ["40s"], "bottleneck.rate": ["20Mbit", "30Mbit", "40Mbit", "50Mbit"]}
    local = brisk.sweep("scenarios/bufferbloat-cubic.toml", grid=grid, seeds=range(3),
                        progress=False)
    killed = []
    started = threading.Event()

    def strike():
        started.wait(60)
        deadline = time.time() + 60
        while time.time() < deadline and not killed:
            for pid in _task_workers(ray_cluster.temp_dir):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    break
                except OSError:
                    pass
            time.sleep(0.05)

    t = threading.Thread(target=strike)
    t.start()
    try:
        remote = brisk.sweep(
            "scenarios/bufferbloat-cubic.toml", grid=grid, seeds=range(3), backend="ray",
            ray_address=ray_cluster.address, batch=1, progress=False,
            on_run=lambda r: started.set(),
        )
    finally:
        started.set()
        t.join()
    assert killed, "no running worker was found to kill"
    keys = [(c, s) for c, s, _, _ in remote.runs]
    assert len(keys) == len(set(keys)) == 12
    assert remote.runs == local.runs
    assert not remote.failures


def test_repro_on_ray_gives_the_local_claims_and_report(ray_cluster, tmp_path):
    ids = ["ut-bulk", "ut-records"]
    local = brisk.repro(ids, quick=True, out=tmp_path / "local", progress=False)
    remote = brisk.repro(ids, quick=True, out=tmp_path / "ray",
                         ray_address=ray_cluster.address, progress=False)
    assert local.equals(remote)
    assert set(local.id) >= {"UT-3a", "UT-3b", "UT-2a"}
    files = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert "index.html" in files
    for name in files:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name
