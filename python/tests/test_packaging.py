"""The Ray version range is one: pyproject's `[ray]` extra, the `[test]` extra and what
python/test.sh installs agree, and the Ray these tests run with is inside it."""

import re

import pytest

from conftest import ROOT

tomllib = pytest.importorskip("tomllib")  # Python 3.11 and newer


def _ray_spec(reqs):
    return next(r for r in reqs if re.match(r"ray\b", r))


def test_the_ray_range_is_the_same_everywhere_and_installed():
    meta = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    spec = _ray_spec(extras["ray"])
    assert _ray_spec(extras["test"]) == spec
    assert f'"{spec}"' in (ROOT / "python" / "test.sh").read_text()
    ray = pytest.importorskip("ray")
    specifiers = pytest.importorskip("packaging.specifiers")
    assert ray.__version__ in specifiers.SpecifierSet(spec[len("ray"):]), ray.__version__
