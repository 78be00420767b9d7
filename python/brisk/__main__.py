"""python -m brisk: sweeps and the reproduction suite from the Python package, where
they can run on a Ray cluster (``--ray-address auto``).

    python -m brisk sweep sweeps/bufferbloat-grid.toml --ray-address auto --out DIR
    python -m brisk repro --quick --ray-address auto --out target/repro
"""

from __future__ import annotations

import argparse
import sys

from . import ScenarioError, repro, sweep


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m brisk", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run a sweep file (as brisk sweep), locally or on Ray")
    s.add_argument("file")
    s.add_argument("--ray-address", help='a Ray cluster ("auto", "host:6379"); default: local threads')
    s.add_argument("--batch", type=int, help="runs per Ray task")
    s.add_argument("--out", help="write rows.csv, summary.csv and runs.jsonl here")
    r = sub.add_parser("repro", help="run the reproduction suite, locally or on Ray")
    r.add_argument("ids", nargs="*")
    r.add_argument("--quick", action="store_true")
    r.add_argument("--ray-address")
    r.add_argument("--out", default="target/repro")
    a = p.parse_args(argv)
    try:
        if a.cmd == "sweep":
            res = sweep(a.file, backend="ray" if a.ray_address else "local",
                        ray_address=a.ray_address, batch=a.batch)
            if a.out:
                res.to_dir(a.out)
            print(res.table, end="")
            return 1 if res.failures else 0
        df = repro(a.ids, quick=a.quick, out=a.out, ray_address=a.ray_address)
        print(df[["experiment", "id", "ours", "verdict", "accepted"]].to_string(index=False))
        print(f"report: {a.out}/index.html")
        bad = df[(df.verdict == "fail") & (~df.accepted.astype(bool))]
        return 2 if len(bad) else 0
    except ScenarioError as e:
        print(f"brisk: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
