"""Shared fixtures: the repository root, the brisk binary (when cargo built it), and a
real two-node Ray cluster on this machine, removed at the end also on failure."""

from __future__ import annotations

import os
import secrets
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
    """The CLI built by `cargo test --profile ci` (target/ci) or `cargo build --release`
    (target/release), the newer of the two if both are present."""
    found = [p for p in (ROOT / "target" / d / "brisk" for d in ("ci", "release")) if p.exists()]
    if not found:
        pytest.skip("target/ci/brisk or target/release/brisk not built (cargo build --release)")
    return max(found, key=lambda p: p.stat().st_mtime)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_bin() -> str:
    exe = Path(sys.executable).parent / "ray"
    return str(exe) if exe.exists() else (shutil.which("ray") or "ray")


def _in_session(pid: Path, temp_dir: bytes) -> bool:
    """Whether process `pid` belongs to the cluster in `temp_dir`: its command line names
    the dir (raylets, GCS, workers), or its environment does (the cluster's HOME), or it
    holds a file there open (its log: the dashboard and runtime-env agents retitle
    themselves `ray::DashboardAgent`, which overwrites the command line and at times the
    environment, and outlive `ray stop`'s raylet)."""
    try:
        if temp_dir in (pid / "cmdline").read_bytes():
            return True
        if temp_dir in (pid / "environ").read_bytes():
            return True
        for fd in (pid / "fd").iterdir():
            if os.fsencode(os.readlink(fd)).startswith(temp_dir):
                return True
    except OSError:
        pass
    return False


def _kill_session(temp_dir: str) -> None:
    """Kills every process of the cluster in `temp_dir` (`_in_session`), and nothing else
    on the machine: `ray stop` would stop every Ray."""
    me = os.getpid()
    key = temp_dir.encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        if _in_session(d, key):
            try:
                os.kill(int(d.name), signal.SIGKILL)
            except OSError:
                pass


class RayCluster:
    def __init__(self, address: str, temp_dir: str):
        self.address = address
        self.temp_dir = temp_dir


def _ray_env(home: str) -> dict:
    """The environment of the test cluster, its nodes and the driver: nothing of the
    user's Ray state. Ray 2.52 and newer keep a token in ~/.ray/auth_token (a plain
    `ray.init()`, the README's local path, writes one) and `ray start` switches to token
    authentication when it finds one; the second node did not, and the cluster refused
    it ("InvalidAuthToken"). So: a HOME of the cluster's own, token authentication on,
    with a fresh token in the environment of every process of it."""
    return {
        "HOME": home,
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_USAGE_STATS_ENABLED": "0",
    }


# Set by the user, these would point the test cluster elsewhere.
_RAY_ENV_DROPPED = ("RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")

# The cluster's dir, its HOME inside, and the environment saved for the end of the
# session. Set before any test runs: Ray reads its auth settings once per process, when
# it is first used, and other tests may import it before the cluster starts.
_CLUSTER: dict = {}


def pytest_configure(config):
    # Ray's socket paths must stay short: a short temp dir of our own.
    temp_dir = tempfile.mkdtemp(prefix="rb", dir="/tmp")
    home = os.path.join(temp_dir, "home")
    os.mkdir(home)
    ray_env = _ray_env(home)
    _CLUSTER["dir"] = temp_dir
    _CLUSTER["saved"] = {k: os.environ.get(k) for k in [*ray_env, *_RAY_ENV_DROPPED]}
    os.environ.update(ray_env)
    for k in _RAY_ENV_DROPPED:
        os.environ.pop(k, None)


def pytest_unconfigure(config):
    temp_dir = _CLUSTER.pop("dir", None)
    if temp_dir:
        _kill_session(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
    for k, v in _CLUSTER.pop("saved", {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def ray_cluster():
    """`ray start --head --num-cpus 1` plus a second `ray start --address ...
    --num-cpus 1` on this machine: two nodes, one CPU each, with their own HOME and
    auth token (`_ray_env`, set for the session by `pytest_configure`). Stopped at the
    end of the session, also on failure."""
    pytest.importorskip("ray")
    temp_dir = _CLUSTER["dir"]
    port = _free_port()
    address = f"127.0.0.1:{port}"
    common = [
        "--num-cpus", "1",
        "--object-store-memory", "80000000",
        "--disable-usage-stats",
    ]
    env = dict(os.environ)
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
