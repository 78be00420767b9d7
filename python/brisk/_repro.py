"""`brisk repro` from Python: the claims as a DataFrame, locally or on Ray."""

from __future__ import annotations

import json
import os
from typing import Iterable, Optional, Union

import pandas as pd

from . import _brisk


def experiments() -> pd.DataFrame:
    """The reproduction experiments: id, kind (``sim`` or ``real time``), claims, title."""
    return pd.DataFrame(_brisk.repro_list(), columns=["id", "kind", "claims", "title"])


def _frame(doc: str) -> pd.DataFrame:
    rows = []
    for e in json.loads(doc)["experiments"]:
        for c in e["claims"]:
            rows.append({"experiment": e["id"], **c})
    return pd.DataFrame(rows)


def repro(
    ids: Optional[Union[str, Iterable[str]]] = None,
    quick: bool = False,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    ray_address: Optional[str] = None,
    backend: Optional[str] = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Runs reproduction experiments and returns their claims, one row per claim.

    Args:
        ids: experiment ids (``brisk.experiments()`` lists them), or None for all.
        quick: fewer seeds and shorter runs, as ``brisk repro --quick``.
        out: write the HTML report with its figures here (``index.html``), the same
            report ``brisk repro --out`` writes.
        ray_address / backend: ``backend="ray"`` (implied by a ``ray_address``) runs
            each simulated experiment as a Ray task; real-time experiments run here,
            one at a time after them. The claims and report are the same as locally.
        progress: show progress.

    Returns:
        A DataFrame with columns experiment, id, description, paper, ours, unit,
        tolerance, verdict, accepted, accepted_reason (``brisk repro --json``'s fields).
    """
    if isinstance(ids, str):
        ids = [ids]
    ids = list(ids or [])
    out_s = os.fspath(out) if out is not None else None
    backend = backend or ("ray" if ray_address else "local")
    if backend == "local":
        return _frame(_brisk.repro(ids, quick, out_s))
    if backend != "ray":
        raise ValueError(f'backend must be "local" or "ray", got {backend!r}')
    from . import _ray

    known = [e[0] for e in _brisk.repro_list()]
    for i in ids:
        if i not in known and i != "all":
            raise ValueError(f"unknown experiment {i!r}; known: {', '.join(known)}, all")
    sel = known if not ids or "all" in ids else list(dict.fromkeys(ids))
    results = _ray.run_repro(sel, quick, address=ray_address, progress=progress)
    return _frame(_brisk.repro_report(results, quick, out_s))
