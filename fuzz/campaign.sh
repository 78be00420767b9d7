#!/usr/bin/env bash
# The long fuzzing campaign of one target (issue 13 §3; docs/security.md "Fuzzing").
#
#   fuzz/campaign.sh TARGET SECONDS [OUTDIR]
#
# TARGET is wire, endpoint, conn, minion, mptcp or mpctl. Builds the AFL++ binary with cargo-afl
# (`cargo install cargo-afl`; its own AFL++ is used), writes the seed corpus, and runs
# ONE afl-fuzz instance (one core) for SECONDS. Run it again with the same OUTDIR to
# resume from the corpus found so far. Prints the executions, crashes, hangs and
# coverage from afl-fuzz's fuzzer_stats at the end. Crashing inputs are left in
# OUTDIR/default/crashes: replay one with `target/afl/release/afl-TARGET < FILE`, and
# save it under fuzz/regressions/TARGET/ once fixed, so the smoke tests keep it.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: fuzz/campaign.sh TARGET SECONDS [OUTDIR]}
secs=${2:?usage: fuzz/campaign.sh TARGET SECONDS [OUTDIR]}
out=${3:-target/fuzz/$target}
case $target in wire|endpoint|conn|minion|mptcp|mpctl) ;; *) echo "unknown target $target" >&2; exit 2 ;; esac

# A separate target directory: AFL's instrumentation flags would otherwise rebuild
# the workspace's ordinary artifacts.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/afl}
cargo afl build --release -p brisk-fuzz --features afl --bin "afl-$target" --bin seeds

if [ -f "$out/default/fuzzer_stats" ] || [ -d "$out/default/queue" ]; then
    input=-   # resume
else
    seeds_dir=target/fuzz/seeds
    "$CARGO_TARGET_DIR/release/seeds" "$seeds_dir" "$target" >/dev/null
    input=$seeds_dir/$target
fi
mkdir -p "$out"

# One instance, one core, left to the scheduler (the machine may be shared);
# -V bounds the run. Crash reports through a core_pattern pipe are not needed.
AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 \
AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_AUTORESUME=1 \
    cargo afl fuzz -V "$secs" -i "$input" -o "$out" \
    "$CARGO_TARGET_DIR/release/afl-$target" >"$out/afl.log" 2>&1 || {
    echo "afl-fuzz failed; see $out/afl.log" >&2
    tail -20 "$out/afl.log" >&2
    exit 1
}

stats=$out/default/fuzzer_stats
get() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
echo "target=$target seconds=$secs execs_done=$(get execs_done)" \
    "execs_per_sec=$(get execs_per_sec) corpus_count=$(get corpus_count)" \
    "saved_crashes=$(get saved_crashes) saved_hangs=$(get saved_hangs)" \
    "bitmap_cvg=$(get bitmap_cvg) edges_found=$(get edges_found)"
