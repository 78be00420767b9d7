"""Shared fixtures: the repository root, the brisk binary (when cargo built it), and a
real two-node Ray cluster on this machine, removed at the end also on failure."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    # Scenario and sweep paths in the tests are relative to the repository root.
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def brisk_bin() -> Path:
    """The CLI built by `cargo test --release` / `cargo build --release`, if present."""
    p = ROOT / "target" / "release" / "brisk"
    if not p.exists():
        pytest.skip("target/release/brisk not built (cargo build --release)")
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_bin() -> str:
    exe = Path(sys.executable).parent / "ray"
    return str(exe) if exe.exists() else (shutil.which("ray") or "ray")


def _kill_session(temp_dir: str) -> None:
    """Kills every process whose command line names `temp_dir` (this cluster's raylets,
    GCS and workers, and nothing else on the machine: `ray stop` would stop every Ray)."""
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if temp_dir.encode() in cmd:
            try:
                os.kill(int(d.name), signal.SIGKILL)
            except OSError:
                pass


class RayCluster:
    def __init__(self, address: str, temp_dir: str):
        self.address = address
        self.temp_dir = temp_dir


@pytest.fixture(scope="session")
def ray_cluster():
    """`ray start --head --num-cpus 1` plus a second `ray start --address ...
    --num-cpus 1` on this machine: two nodes, one CPU each. Stopped at the end of
    the session, also on failure."""
    pytest.importorskip("ray")
    # Ray's socket paths must stay short: a short temp dir of our own.
    temp_dir = tempfile.mkdtemp(prefix="rb", dir="/tmp")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = [
        "--num-cpus", "1",
        "--object-store-memory", "80000000",
        "--disable-usage-stats",
    ]
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    try:
        subprocess.run(
            [_ray_bin(), "start", "--head", f"--port={port}", f"--temp-dir={temp_dir}",
             "--include-dashboard=false", *common],
            check=True, env=env, stdout=subprocess.DEVNULL, timeout=120,
        )
        subprocess.run(
            [_ray_bin(), "start", f"--address={address}", f"--temp-dir={temp_dir}", *common],
            check=True, env=env, stdout=subprocess.DEVNULL, timeout=120,
        )
        import ray

        ray.init(address=address, log_to_driver=False)
        deadline = time.time() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            if time.time() > deadline:
                raise RuntimeError("the second Ray node did not join within 60 s")
            time.sleep(0.5)
        yield RayCluster(address, temp_dir)
    finally:
        try:
            import ray

            ray.shutdown()
        except Exception:
            pass
        _kill_session(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
