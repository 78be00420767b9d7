#!/usr/bin/env python3
"""Benchmark (not a test): the Ray backend of brisk.sweep against local threads.

Builds a 100-cell sweep (a 3 s simulated CUBIC bulk flow through a dumbbell, grid
bottleneck.rate × flow[0].rtt, one seed) and starts a real Ray cluster on this machine:
a head node with one CPU, later a second node with one CPU. With one node, then with
two, it measures (median of --reps; the configurations of a phase interleaved, so other
load falls on all of them alike):

  * the local backend with as many workers as the cluster has CPUs;
  * Ray with batch=1 (one run per task) and with the default batching (about four
    tasks per cluster CPU);
  * with Ray's default placement patched into the `ray.remote` call of brisk._ray,
    and, with two nodes, both again with brisk's own SPREAD placement.

It reports cells per second, the per-task overhead of Ray,
(Ray wall with batch=1 − local wall at the same parallelism) / runs, scaling from 1 to
2 CPUs, ratios against local, runs per node, and whether every configuration produced
byte-identical runs, rows.csv and summary.csv to the local run (exit status 1 if not).

    source /tmp/bpy/bin/activate            # a venv with brisk (maturin develop) and ray
    python bench/ray_sweep.py [--reps 3] [--json target/ray_sweep.json]

On a machine busy with other work, give the benchmark most of the CPU (root; Linux
autogroups) without touching the other processes:

    setsid bash -c 'echo -10 > /proc/self/autogroup; exec python bench/ray_sweep.py'

The Ray nodes use their own temp dir and ports (--temp-dir, --port) so they do not
collide with another Ray on the machine, stay in the benchmark's session, and are
stopped by process id on exit (never `ray stop`, which stops every Ray on the machine).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Optional

import brisk
from brisk import _ray as brisk_ray

RATES = [f"{r}Mbit" for r in range(6, 16)]  # 10 values
RTTS = [f"{r}ms" for r in range(10, 101, 10)]  # 10 values
BASE = {
    "name": "ray-bench",
    "seed": 1,
    "duration": "3s",
    "bottleneck": {"rate": "10Mbit", "queue": {"kind": "droptail", "packets": 100}},
    "flow": [{"rtt": "20ms", "cc": "cubic", "start": "0s", "app": {"kind": "bulk"}}],
}
GRID = {"bottleneck.rate": RATES, "flow[0].rtt": RTTS}


def sweep(**kw) -> "brisk.SweepResult":
    return brisk.sweep(BASE, grid=GRID, seeds=[1], progress=False, **kw)


@contextlib.contextmanager
def default_placement():
    """brisk's Ray tasks with Ray's default (hybrid) placement instead of the SPREAD
    strategy brisk._ray asks for: `ray.remote`, as brisk._ray calls it, with the
    option replaced. The benchmark measured both; SPREAD won (docs/cluster.md)."""
    import ray

    orig = ray.remote

    def remote(*args, **kw):
        if args:  # @ray.remote without options: not how brisk calls it
            return orig(*args, **kw)
        kw["scheduling_strategy"] = "DEFAULT"
        return orig(**kw)

    ray.remote = remote
    try:
        yield
    finally:
        ray.remote = orig


class Config:
    """One measured configuration: its sweeps' wall times and results."""

    def __init__(self, key, label, cpus, tasks, spread=False, **kw):
        self.key, self.label, self.cpus, self.tasks = key, label, cpus, tasks
        self.batch = kw.get("batch")
        self.spread, self.kw = spread, kw
        self.walls: List[float] = []
        self.per_node: List[List[int]] = []
        self.identical, self.failures = True, 0

    def once(self, ref) -> "brisk.SweepResult":
        ray_default = self.kw.get("backend") == "ray" and not self.spread
        with default_placement() if ray_default else contextlib.nullcontext():
            t = time.perf_counter()
            res = sweep(**self.kw)
            self.walls.append(time.perf_counter() - t)
        self.per_node.append(sorted(getattr(res, "nodes", {}).values()))
        self.failures += len(res.failures)
        if ref is not None and not same_runs(res, ref):
            self.identical = False
        return res

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)


def measure(configs: List[Config], reps: int, ref) -> None:
    """`reps` rounds, each running every configuration once: interleaved, so that other
    load on the machine falls on all of them alike."""
    for _ in range(reps):
        for c in configs:
            c.once(ref)
    for c in configs:
        print(f"  {c.label:<36} {c.wall:7.3f} s  ({', '.join(f'{w:.3f}' for w in c.walls)})",
              flush=True)


def same_runs(a, b) -> bool:
    return a.runs == b.runs and a.rows_csv == b.rows_csv and a.summary_csv == b.summary_csv


# --- a Ray cluster of our own, started and stopped by process id -------------------


class Cluster:
    def __init__(self, ray_bin: str, temp_dir: str, port: int):
        self.ray_bin, self.temp_dir, self.port = ray_bin, temp_dir, port
        self.procs: List[subprocess.Popen] = []
        self.address = f"127.0.0.1:{port}"

    def _start(self, args: List[str], log: str) -> None:
        env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
        env.pop("RAY_ADDRESS", None)
        out = open(os.path.join(self.temp_dir, log), "w")
        # --block keeps `ray start` in the foreground and its Ray processes its
        # children, which die with it. They stay in our session: with the kernel's
        # autogroup scheduling a new session would be a scheduling group of its own,
        # and on a busy machine Ray would get more CPU than the local threads it is
        # compared with.
        p = subprocess.Popen(
            [self.ray_bin, "start", "--block", "--disable-usage-stats", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.procs.append(p)

    def start_head(self) -> None:
        os.makedirs(self.temp_dir, exist_ok=True)
        self._start(
            [
                "--head",
                f"--port={self.port}",
                f"--temp-dir={self.temp_dir}",
                "--num-cpus=1",
                "--include-dashboard=false",
                "--object-store-memory=100000000",
                f"--ray-client-server-port={self.port + 4000}",
                f"--dashboard-agent-listen-port={self.port + 46000}",
                f"--min-worker-port={self.port + 17000}",
                f"--max-worker-port={self.port + 17099}",
            ],
            "bench-head.log",
        )

    def add_node(self) -> None:
        n = len(self.procs)
        self._start(
            [
                f"--address={self.address}",
                f"--temp-dir={self.temp_dir}",
                "--num-cpus=1",
                "--object-store-memory=100000000",
                f"--dashboard-agent-listen-port={self.port + 46000 + n}",
                f"--min-worker-port={self.port + 17000 + 100 * n}",
                f"--max-worker-port={self.port + 17099 + 100 * n}",
            ],
            f"bench-node{n}.log",
        )

    def check_alive(self) -> None:
        for p in self.procs:
            if p.poll() is not None:
                raise RuntimeError(
                    f"`ray start` exited with {p.returncode}; see {self.temp_dir}/bench-*.log"
                )

    def _ours(self) -> List[int]:
        """Every live process that descends from our `ray start`s or names our
        session directory (a Ray process that was reparented)."""
        roots = {p.pid for p in self.procs}
        parent: Dict[int, int] = {}
        mine: List[int] = []
        marker = os.path.join(os.path.realpath(self.temp_dir), "session_")
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            pid = int(d)
            try:
                with open(f"/proc/{pid}/stat") as f:
                    parent[pid] = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                if os.stat(f"/proc/{pid}").st_uid == os.getuid() and marker in cmd:
                    mine.append(pid)
            except (OSError, IndexError, ValueError):
                continue
        for pid in parent:
            q, seen = pid, 0
            while q in parent and q > 1 and seen < 64:
                if q in roots:
                    mine.append(pid)
                    break
                q, seen = parent[q], seen + 1
        return sorted(set(mine) - {os.getpid()})

    def stop(self) -> None:
        pids = self._ours()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.time() + 15
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pass
        for pid in set(pids) | set(self._ours()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        left = self._ours()
        if left:
            print(f"warning: Ray processes still alive: {left}", file=sys.stderr)


def wait_for(ray, cluster: Cluster, cpus: int, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        cluster.check_alive()
        alive = [n for n in ray.nodes() if n.get("Alive")]
        if len(alive) == cpus and ray.cluster_resources().get("CPU", 0) >= cpus:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the Ray cluster did not reach {cpus} nodes in {timeout} s")


def connect(ray, cluster: Cluster, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while True:
        cluster.check_alive()
        try:
            ray.init(address=cluster.address, log_to_driver=False)
            return
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(1)


# --- the benchmark -----------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions per configuration")
    ap.add_argument("--temp-dir", default="/tmp/rayb", help="Ray temp dir (keep it short)")
    ap.add_argument("--port", type=int, default=6391, help="the Ray head's GCS port")
    ap.add_argument("--json", help="also write the measurements here")
    a = ap.parse_args(argv)

    import ray

    ray_bin = shutil.which("ray") or os.path.join(os.path.dirname(sys.executable), "ray")
    n_runs = len(RATES) * len(RTTS)
    print(
        f"brisk {brisk.__version__}, ray {ray.__version__}, python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{datetime.datetime.now().astimezone().isoformat(timespec='seconds')}"
    )
    load = os.getloadavg()
    print("load average before: " + " ".join(f"{x:.2f}" for x in load))
    if load[0] > 0.5 * (os.cpu_count() or 1):
        print("warning: the machine is busy; wall times will be noisy", file=sys.stderr)
    print(
        f"sweep: {n_runs} cells × 1 seed: 3 s simulated CUBIC bulk flow, bottleneck "
        f"{RATES[0]}..{RATES[-1]} × rtt {RTTS[0]}..{RTTS[-1]}; median of {a.reps}"
    )

    # The reference results (local, every core), after a warm-up.
    sweep(workers=2)
    ref = sweep(workers=2)
    configs: Dict[str, Config] = {}
    default_of: Dict[int, int] = {}

    cluster = Cluster(ray_bin, a.temp_dir, a.port)
    cold: Dict[str, float] = {}
    started = time.perf_counter()
    try:
        cluster.start_head()
        connect(ray, cluster)
        wait_for(ray, cluster, 1)
        cold["head_up_s"] = time.perf_counter() - started
        for nodes in (1, 2):
            if nodes == 2:
                t = time.perf_counter()
                cluster.add_node()
                wait_for(ray, cluster, 2)
                cold["node2_up_s"] = time.perf_counter() - t
            # The first sweep on fresh workers pays for starting them and importing
            # brisk there: measured once, apart from the medians.
            t = time.perf_counter()
            sweep(backend="ray", batch=1)
            cold[f"first_sweep_{nodes}node_s"] = time.perf_counter() - t
            default = default_of[nodes] = brisk_ray.default_batch(n_runs, nodes)
            tasks = -(-n_runs // default)
            where = f"{nodes} node{'s' if nodes > 1 else ''}"
            phase = [
                Config(f"local{nodes}", f"local, workers={nodes}", nodes, None,
                       backend="local", workers=nodes),
                Config(f"ray{nodes}_b1", f"ray {where}, batch=1", nodes, n_runs,
                       backend="ray", batch=1),
                Config(f"ray{nodes}_bd", f"ray {where}, batch={default} (default)", nodes,
                       tasks, backend="ray"),
            ]
            if nodes == 2:
                phase += [
                    Config("ray2_b1_spread", f"ray {where}, batch=1, SPREAD", nodes,
                           n_runs, spread=True, backend="ray", batch=1),
                    Config("ray2_bd_spread", f"ray {where}, batch={default}, SPREAD", nodes,
                           tasks, spread=True, backend="ray"),
                ]
            measure(phase, a.reps, ref)
            configs.update((c.key, c) for c in phase)
    finally:
        try:
            ray.shutdown()
        finally:
            cluster.stop()

    rows: Dict[str, dict] = {
        k: dict(
            label=c.label,
            cpus=c.cpus,
            batch=c.batch or (None if c.kw["backend"] == "local" else default_of[c.cpus]),
            tasks=c.tasks,
            scheduling="SPREAD" if c.spread else ("-" if c.batch is None else "default"),
            wall_s=c.wall,
            best_s=min(c.walls),
            walls_s=c.walls,
            cells_per_s=n_runs / c.wall,
            identical=c.identical,
            failures=c.failures,
            runs_per_node=c.per_node,
        )
        for k, c in configs.items()
    }

    # --- the table ---
    local = {1: rows["local1"]["wall_s"], 2: rows["local2"]["wall_s"]}
    print()
    hdr = (
        f"{'configuration':<36} {'CPUs':>4} {'tasks':>5} {'median s':>8} {'best s':>7} "
        f"{'cells/s':>8} {'× local':>8} {'identical':>9}"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rows.values():
        ratio = r["wall_s"] / local[r["cpus"]]
        r["vs_local"] = ratio
        print(
            f"{r['label']:<36} {r['cpus']:>4} {r['tasks'] or '-':>5} {r['wall_s']:>8.3f} "
            f"{r['best_s']:>7.3f} {r['cells_per_s']:>8.1f} {ratio:>8.2f} "
            f"{'yes' if r['identical'] else 'NO':>9}"
        )
    print()
    per_run_ms = 1000 * local[1] / n_runs
    derived = {"per_run_ms_local1": per_run_ms}
    print(f"one run, locally (workers=1 wall / runs):          {per_run_ms:6.1f} ms")
    for n, key in [(1, "ray1_b1"), (2, "ray2_b1"), (2, "ray2_b1_spread")]:
        ov = 1000 * (rows[key]["wall_s"] - local[n]) / n_runs
        derived[f"overhead_ms_per_task_{key}"] = ov
        print(f"Ray per-task overhead, {rows[key]['label']:<26} (− local) / runs: {ov:6.1f} ms")
    for k1, k2 in [("local1", "local2"), ("ray1_b1", "ray2_b1"), ("ray1_bd", "ray2_bd"),
                   ("ray1_b1", "ray2_b1_spread"), ("ray1_bd", "ray2_bd_spread")]:
        w1, w2 = rows[k1]["wall_s"], rows[k2]["wall_s"]
        derived[f"scaling_{k2}"] = w1 / w2
        print(f"scaling 1 → 2 CPUs, {rows[k2]['label']:<36} {w1 / w2:5.2f}×")
    print(
        f"cold start: head node up {cold['head_up_s']:.2f} s, second node up "
        f"{cold['node2_up_s']:.2f} s; first sweep on fresh workers (batch=1): "
        f"{cold['first_sweep_1node_s']:.2f} s on 1 node, {cold['first_sweep_2node_s']:.2f} s on 2"
    )
    for r in rows.values():
        if r["cpus"] == 2 and r["runs_per_node"] and r["runs_per_node"][0]:
            each = "  ".join("/".join(map(str, s)) for s in r["runs_per_node"])
            print(f"runs per node, {r['label']}: {each}")
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    ok = all(r["identical"] and r["failures"] == 0 for r in rows.values())
    print(f"identical run summaries, rows and summary in every configuration: {'yes' if ok else 'NO'}")

    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(
                dict(
                    brisk=brisk.__version__,
                    ray=ray.__version__,
                    cpus=os.cpu_count(),
                    date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                    runs=n_runs,
                    reps=a.reps,
                    configs=rows,
                    derived=derived,
                    cold=cold,
                    identical=ok,
                    loadavg_after=os.getloadavg(),
                ),
                f,
                indent=1,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
