#!/usr/bin/env bash
# A profile-guided (PGO) release build of the `brisk` binary, for long simulations and
# the speed benchmarks (docs/performance.md, "Profile-guided build").
#
# Same code, same results: PGO changes only how LLVM lays out, inlines and predicts
# the code, from counts taken while the instrumented binary runs a training set. The
# training set is every shipped scenario except `bench sim`'s own (bench-1g.toml), plus
# the network benchmark, so the layout is not tuned to the run it is measured on.
#
# Both builds use fat link-time optimisation in one codegen unit, so the profile is
# taken on the same functions it is applied to (a profile taken without LTO and
# applied with it matched poorly and was slower than either alone; docs/performance.md).
#
# Needs `llvm-profdata` of rustc's own LLVM: `rustup component add llvm-tools`.
# Takes two full release builds with LTO (about 2 x 4 min on 2 idle cores).
#
# Usage: scripts/pgo-build.sh      -> target/pgo/use/release/brisk
set -euo pipefail
cd "$(dirname "$0")/.."

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  echo "pgo-build: $profdata not found; install it with: rustup component add llvm-tools" >&2
  exit 1
fi

dir="$PWD/target/pgo"
rm -rf "$dir/profiles" "$dir/train" "$dir/merged.profdata"
mkdir -p "$dir/profiles" "$dir/train"
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

echo "== 1/3 instrumented build"
BRISK_PGO=gen RUSTFLAGS="-Cprofile-generate=$dir/profiles" \
  cargo build --release -p brisk --target-dir "$dir/gen"

echo "== 2/3 training runs"
# RUSTFLAGS instrument the build scripts and proc macros too, and they write their
# counts into $dir/profiles while cargo runs them (serde_derive, clap_derive, ... :
# ~55 M counts, 5 % of the merged profile's total, in 27 files). Only the training
# runs of `brisk` go into the profile: LLVM_PROFILE_FILE sends them to $dir/train.
export LLVM_PROFILE_FILE="$dir/train/brisk-%m.profraw"
gen="$dir/gen/release/brisk"
for s in scenarios/*.toml; do
  [ "$s" = scenarios/bench-1g.toml ] && continue
  echo "   $s"
  "$gen" run "$s" >/dev/null
done
echo "   bench net --flows 200"
"$gen" bench net --flows 200 >/dev/null
unset LLVM_PROFILE_FILE
"$profdata" merge -o "$dir/merged.profdata" "$dir/train"

echo "== 3/3 optimised build"
BRISK_PGO=use RUSTFLAGS="-Cprofile-use=$dir/merged.profdata" \
  cargo build --release -p brisk --target-dir "$dir/use"
echo "built $dir/use/release/brisk"
