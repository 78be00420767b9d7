#!/usr/bin/env bash
# The Python package's tests: builds the extension into a fresh virtualenv with maturin
# and runs pytest (brisk.run, sweeps, errors, and a real two-node Ray cluster on this
# machine, which the tests start and stop). Arguments go to pytest, e.g. -k "not ray".
#   python/test.sh            # from the repository root
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${BRISK_PYENV:-target/pyenv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
venv="$(cd "$venv" && pwd)"
"$venv/bin/pip" install -q --disable-pip-version-check \
  "maturin>=1.9,<2" "pandas>=2" "tqdm>=4.60" "pytest>=7" "ray>=2.60,<2.61"  # ray: as in pyproject.toml
# BRISK_PY_INSTALL_ONLY=1: stop after the installs (.ci/run runs them beside cargo's build:
# they wait on the network and the disk, the build on the CPU).
if [ "${BRISK_PY_INSTALL_ONLY:-0}" = 1 ]; then exit 0; fi
# The `ci` profile (release without LTO), as the Rust tests: it shares their build and
# skips the release profile's long fat-LTO link.
(cd python && VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --profile ci -q)
exec "$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider "$@"
