#!/usr/bin/env python3
"""brisk beside ns-3 on one Internet2 network scenario: the same flows, plain TCP.

Runs `brisk run SCENARIO --out DIR` (release build), then replays the flows.csv it
wrote in ns-3 (bench/ns3/internet2.py, with the scenario's rates, delays, queues and
IW), and prints for both: wall-clock and CPU seconds, events, peak RSS, mean and
byte-weighted FCT of the measured flows (brisk's warm-up excluded on both sides), per
size bin, and the ratios. Called by bench/ns3/compare.sh, which finds the ns-3 Python.

Usage: compare.py --ns3-python PY [--scenario bench/ns3/internet2.toml]
                  [--brisk target/release/brisk] [--work DIR]
                  [--ns3-cc TcpNewReno|TcpLinuxReno] [--device-queues]
Only the scenario keys bench/ns3/internet2.toml uses are translated for ns-3; anything
else is refused by name rather than guessed.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib

ap = argparse.ArgumentParser()
ap.add_argument("--ns3-python", required=True)
ap.add_argument("--scenario", default="bench/ns3/internet2.toml")
ap.add_argument("--brisk", default="target/release/brisk")
ap.add_argument("--work", default="target/ns3-compare")
ap.add_argument("--ns3-cc", default="TcpNewReno", choices=["TcpNewReno", "TcpLinuxReno"])
ap.add_argument("--device-queues", action="store_true",
                help="ns-3 drop-tail in device queues with flow control (internet2.py)")
args = ap.parse_args()

sc = tomllib.load(open(args.scenario, "rb"))
topo, wl = sc["topology"], sc["workload"]


def refuse(what):
    sys.exit(f"compare.py: {args.scenario}: {what} is not translated for ns-3")


if topo.get("kind") != "internet2":
    refuse(f"topology.kind = {topo.get('kind')!r}")
for k in topo:
    if k not in ("kind", "hosts_per_router", "rate", "hop_delay", "queue", "host_queue"):
        refuse(f"topology.{k}")
UNIT = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}


def rate_bps(s):
    m = re.fullmatch(r"([\d.]+)\s*([kmg]?)(bps|bit)", s.lower())
    if not m:
        refuse(f"rate {s!r}")
    return float(m[1]) * UNIT[m[2]]


def seconds(s):
    m = re.fullmatch(r"([\d.]+)\s*(ms|s)", s)
    if not m:
        refuse(f"duration {s!r}")
    return float(m[1]) * (1e-3 if m[2] == "ms" else 1)


def nbytes(s):
    m = re.fullmatch(r"([\d.]+)\s*([kmg]?)b", s.lower())
    if not m:
        refuse(f"size {s!r}")
    return int(float(m[1]) * UNIT[m[2]])


def queue_bytes(q, rate):
    if q.get("kind") != "droptail" or set(q) - {"kind", "time", "bytes"}:
        refuse(f"queue {q}")
    return nbytes(q["bytes"]) if "bytes" in q else int(rate * seconds(q["time"]) / 8)


rate = rate_bps(topo["rate"])
hpr = topo.get("hosts_per_router", 10)
tcp = wl.get("tcp", {})
ns3_args = [
    "--hosts-per-router", str(hpr),
    "--rate", f"{int(rate)}bps",
    "--hop-delay-ms", str(seconds(topo.get("hop_delay", "0ms")) * 1e3),
    "--queue-bytes", str(queue_bytes(topo["queue"], rate)),
    "--host-queue-bytes", str(queue_bytes(topo["host_queue"], rate)),
    "--iw", str(tcp.get("initial_cwnd", 10)),
    "--duration", str(seconds(sc["duration"])),
]
if wl.get("cc") != "reno" or wl.get("class"):
    refuse("workload.cc other than reno, or workload.class")


def timed(cmd):
    """Runs `cmd`; returns (stdout, wall s, CPU s, peak RSS KB) of that one process
    (wait4's own rusage: RUSAGE_CHILDREN would include cargo, run before the exec)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            sys.stderr.write(err.read()[-3000:])
            sys.exit(f"compare.py: {' '.join(cmd)} failed ({p.returncode})")
        return out.read(), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


os.makedirs(args.work, exist_ok=True)
bdir = os.path.join(args.work, "brisk")
print(f"brisk: {args.brisk} run {args.scenario} --out {bdir} --force", flush=True)
_, b_wall, b_cpu, b_rss = timed([args.brisk, "run", args.scenario, "--out", bdir, "--force"])
summary = json.load(open(os.path.join(bdir, "summary.json")))
flows_csv = os.path.join(bdir, "flows.csv")
nfile = os.path.join(args.work, "ns3-flows.csv")
ns3_cmd = [args.ns3_python, os.path.join(os.path.dirname(__file__), "internet2.py"),
           "--flows", flows_csv, "--out", nfile] + ns3_args
ns3_cmd += ["--cc", args.ns3_cc]
if args.device_queues:
    ns3_cmd.append("--device-queues")
print("ns-3: " + " ".join(ns3_cmd), flush=True)
out, n_wall, n_cpu, n_rss = timed(ns3_cmd)
nj = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])

# Per-flow FCTs, measured flows only; brisk's must also be intact. Handshakes: SYN
# to the first data byte (the connect() to connected time), not part of the FCT.
brisk, ns3, sizes, start = {}, {}, {}, {}
hs_b, hs_n = [], []
for r in csv.DictReader(open(flows_csv)):
    if r["warmup"] == "true":
        continue
    sizes[int(r["id"])] = int(r["size"])
    start[int(r["id"])] = float(r["start_s"])
    if r["first_byte_s"]:
        hs_b.append(float(r["first_byte_s"]) - float(r["start_s"]))
    if r["fct_s"] and r["intact"] == "true":
        brisk[int(r["id"])] = float(r["fct_s"])
for r in csv.DictReader(open(nfile)):
    if r["warmup"] == "false" and r["first_byte_s"]:
        hs_n.append(float(r["first_byte_s"]) - start[int(r["id"])])
    if r["warmup"] == "false" and r["fct_s"]:
        ns3[int(r["id"])] = float(r["fct_s"])


def stats(fct, ids=None):
    ids = sorted(fct) if ids is None else ids
    if not ids:
        return None, None, 0
    mean = sum(fct[i] for i in ids) / len(ids)
    bw = sum(sizes[i] * fct[i] for i in ids) / sum(sizes[i] for i in ids)
    return mean, bw, len(ids)


bm, bbw, bn = stats(brisk)
nm, nbw, nn = stats(ns3)
both = sorted(set(brisk) & set(ns3))
pbm, pbbw, _ = stats(brisk, both)
pnm, pnbw, _ = stats(ns3, both)


def pct(a, b):
    return f"{(a / b - 1) * 100:+.1f} %" if a and b else "n/a"


events_b = summary["sim"]["events"]
print()
print(f"scenario {summary['scenario']}: {summary['topology']['hosts']} hosts, "
      f"{len(sizes)} measured flows of {nj['flows']}, seed {summary['seed']}")
print(f"{'':34}{'brisk':>12}{'ns-3':>12}{'ns-3 / brisk':>15}")
rows = [
    ("completed measured flows", bn, nn, None),
    ("mean FCT ms", bm * 1e3, nm * 1e3, pct(nm, bm)),
    ("byte-weighted FCT ms", bbw * 1e3, nbw * 1e3, pct(nbw, bbw)),
    (f"mean FCT ms, {len(both)} flows done in both", pbm * 1e3, pnm * 1e3, pct(pnm, pbm)),
    ("byte-weighted FCT ms, same flows", pbbw * 1e3, pnbw * 1e3, pct(pnbw, pbbw)),
    ("mean handshake ms (not in FCT)", sum(hs_b) / len(hs_b) * 1e3,
     sum(hs_n) / len(hs_n) * 1e3, pct(sum(hs_n) / len(hs_n), sum(hs_b) / len(hs_b))),
    ("packets dropped, all links", summary["utilisation"]["core_drops"]
     + summary["utilisation"]["access_drops"],
     nj["router_drops"] + nj["host_drops"] + nj["device_queue_drops"] + nj["qdisc_drops"],
     None),
    ("simulated s", summary["duration_s"], nj["sim_s"], None),
    ("events", events_b, nj["events"], f"{nj['events'] / events_b:.2f}x"),
    ("wall s, whole process", b_wall, n_wall, f"{n_wall / b_wall:.1f}x"),
    ("CPU s, whole process", b_cpu, n_cpu, f"{n_cpu / b_cpu:.1f}x"),
    ("wall s, ns-3 Simulator::Run only", b_wall, nj["wall_run_s"],
     f"{nj['wall_run_s'] / b_wall:.1f}x"),
    ("CPU s, ns-3 Simulator::Run only", b_cpu, nj["cpu_run_s"],
     f"{nj['cpu_run_s'] / b_cpu:.1f}x"),
    ("peak RSS MB", b_rss / 1024, n_rss / 1024, None),
]
for name, b, n, r in rows:
    fmt = (lambda x: f"{x:12.0f}") if isinstance(b, int) else (lambda x: f"{x:12.2f}")
    print(f"{name:34}{fmt(b)}{fmt(n)}{r or '':>15}")

# Per size bin (brisk's default bins: 4, 10, 40, 100, 440, 1000, 4440 packets of 1460 B).
edges = [4, 10, 40, 100, 440, 1000, 4440]
print()
print(f"{'size (packets of 1460 B]':26}{'flows':>7}{'brisk ms':>11}{'ns-3 ms':>11}{'diff':>10}")
lo = 0
for hi in edges + [None]:
    ids = [i for i in both if sizes[i] > lo * 1460 and (hi is None or sizes[i] <= hi * 1460)]
    if ids:
        b = sum(brisk[i] for i in ids) / len(ids)
        n = sum(ns3[i] for i in ids) / len(ids)
        label = f"({lo}, {hi}]" if hi else f"> {lo}"
        print(f"{label:26}{len(ids):7}{b * 1e3:11.1f}{n * 1e3:11.1f}{pct(n, b):>10}")
    lo = hi
print()
print("Speed is CPU and wall seconds of each whole process: brisk's includes building the "
      "network and writing flows.csv;\nns-3's includes Python start-up and the import of "
      "ns-3 (several seconds), so the Run-only rows are also given.")
