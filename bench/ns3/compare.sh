#!/bin/sh
# brisk beside ns-3 on the Internet2 network scenario (issue 11 §5): the same flows,
# plain TCP; prints both FCTs and speeds and their ratios (bench/ns3/compare.py).
#
# Usage (from the repository root): bench/ns3/compare.sh [compare.py options]
# The ns-3 side needs a Python with the `ns3` wheel: $BRISK_NS3_PYTHON if set, else
# the venv $NS3_VENV (default /tmp/ns3venv), created with `pip install ns3` when
# missing. If the wheel cannot be had, the comparison is skipped (exit 0) saying so.
# Takes about four minutes (ns-3 most of it). Not part of the test suite.
set -eu
cd "$(dirname "$0")/../.."

has_ns3() { "$1" -c "from ns import ns" >/dev/null 2>&1; }

py="${BRISK_NS3_PYTHON:-}"
if [ -z "$py" ]; then
    venv="${NS3_VENV:-/tmp/ns3venv}"
    py="$venv/bin/python"
    if ! has_ns3 "$py"; then
        echo "setting up $venv with the ns3 wheel (pip install ns3) ..."
        if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q ns3; } >/dev/null 2>&1; then
            echo "SKIP: the ns3 wheel could not be installed into $venv (pip install ns3 failed);"
            echo "      set BRISK_NS3_PYTHON to a Python that has it to run this comparison."
            exit 0
        fi
    fi
fi
if ! has_ns3 "$py"; then
    echo "SKIP: $py cannot import ns-3 (from ns import ns); set BRISK_NS3_PYTHON."
    exit 0
fi

cargo build --release -q --bin brisk
exec python3 bench/ns3/compare.py --ns3-python "$py" "$@"
