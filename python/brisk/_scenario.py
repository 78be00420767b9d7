"""Turning what a user hands over (a dict, TOML text or a path) into scenario text."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Union

from . import _brisk

ScenarioLike = Union[Mapping[str, Any], str, "os.PathLike[str]"]


def looks_like_toml(s: str) -> bool:
    """TOML text has a line break or an `=`; a path has neither."""
    return "\n" in s or "=" in s


def scenario_text(scenario: ScenarioLike) -> tuple[str, str]:
    """(TOML text, label) of a scenario given as a dict, TOML text or a path.

    The label is what errors name as the file, and the directory relative trace paths
    resolve in: the path itself, `<string>` for TOML text (the working directory) or
    `<dict>`.
    """
    if isinstance(scenario, Mapping):
        return _brisk.toml_from_json(json.dumps(scenario)), "<dict>"
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if not isinstance(scenario, str):
        raise TypeError(
            f"scenario must be a dict, TOML text or a path, not {type(scenario).__name__}"
        )
    if looks_like_toml(scenario):
        return scenario, "<string>"
    path = Path(scenario)
    try:
        return path.read_text(), str(path)
    except OSError as e:
        raise error(str(path), "(file)", str(e.strerror or e)) from None


def error(file: str, field: str, detail: str) -> Exception:
    """A ScenarioError like the native ones: `file`, `field` and `detail` set."""
    e = _brisk.ScenarioError(f"{file}: {field}: {detail}")
    e.file, e.field, e.detail = file, field, detail
    return e
