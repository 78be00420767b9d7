"""The result of one simulated run, as dicts and pandas DataFrames."""

from __future__ import annotations

import html
import io
import json
from typing import Any, Dict, Optional

import pandas as pd


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


class RunResult:
    """One run of a scenario, as `brisk run` reports it.

    Attributes:
        summary: the summary as a dict: exactly the object `brisk run --json` prints.
        summary_json: that object as the compact JSON text the simulator produced
            (byte-identical for the same scenario and seed, wherever it ran).
        flows: the per-flow table (dumbbell: one row per flow, nested fields flattened
            as ``rtt_ms.mean``; network scenarios: one row per flow of ``flows.csv``).
        series: the time series by name (``goodput``, ``rtt``, ``cwnd``, ``queue``,
            ``drops``, ``records`` and, when a flow runs delay correlation, ``dc``), each
            a DataFrame with the columns of ``brisk run --out``'s CSV files. Also
            reachable as attributes: ``result.goodput``.
        kind: ``"dumbbell"`` or ``"network"``.
    """

    def __init__(self, summary_json: str, files: Dict[str, str], kind: str):
        self.summary_json = summary_json
        self.summary: Dict[str, Any] = json.loads(summary_json)
        self.kind = kind
        self._files = dict(files)
        self._frames: Dict[str, pd.DataFrame] = {}
        if kind == "network":
            self.flows = _csv(self._files["flows.csv"])
        else:
            self.flows = pd.json_normalize(self.summary.get("flows", []))

    @property
    def series(self) -> Dict[str, pd.DataFrame]:
        names = [n[: -len(".csv")] for n in self._files if n != "flows.csv"]
        return {n: self._frame(n) for n in names}

    def _frame(self, name: str) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = _csv(self._files[name + ".csv"])
        return self._frames[name]

    def __getattr__(self, name: str) -> pd.DataFrame:
        # Only called for attributes not found normally: the series by name.
        files = self.__dict__.get("_files", {})
        if name + ".csv" in files and name != "flows":
            return self._frame(name)
        raise AttributeError(
            f"RunResult has no attribute {name!r}; series: "
            + ", ".join(sorted(n[:-4] for n in files if n != "flows.csv"))
        )

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<brisk.RunResult scenario={s.get('scenario')!r} seed={s.get('seed')} "
            f"flows={len(self.flows)}>"
        )

    def _repr_html_(self) -> str:
        s = self.summary
        head = (
            f"<p><b>brisk run</b> {html.escape(str(s.get('scenario')))}, seed "
            f"{s.get('seed')}, {s.get('duration_s', 0):.3f} s simulated</p>"
        )
        if self.kind == "network":
            fct = s.get("fct", {})
            body = (
                f"<p>{len(self.flows)} flows; mean FCT "
                f"{html.escape(str(fct.get('mean_fct_s')))} s</p>"
            )
            return head + body
        cols = [
            c
            for c in [
                "id",
                "cc",
                "app",
                "goodput_bps",
                "rtt_ms.mean",
                "rtt_ms.p99",
                "retransmitted_packets",
                "fct_s",
                "record_latency_ms.p99",
                "stream_ok",
            ]
            if c in self.flows.columns
        ]
        view = self.flows[cols].copy()
        if "goodput_bps" in view:
            view["goodput_bps"] = view["goodput_bps"] / 1e6
        view = view.rename(columns={"goodput_bps": "goodput Mbit/s", "rtt_ms.mean": "rtt mean ms",
                                    "rtt_ms.p99": "rtt p99 ms", "retransmitted_packets": "retrans",
                                    "fct_s": "fct s", "record_latency_ms.p99": "record p99 ms",
                                    "stream_ok": "stream ok"})
        view = view.astype(object).where(view.notna(), "–")
        table = view.to_html(index=False, float_format=lambda x: f"{x:.4g}")
        b = s.get("bottleneck", {})
        foot = (
            f"<p>bottleneck: utilisation {100 * (b.get('utilization') or 0):.1f} %, "
            f"drops {b.get('drops')}</p>"
        )
        return head + table + foot


