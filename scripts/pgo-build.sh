#!/usr/bin/env bash
# scripts/pgo-build.sh [--profile]: the release binary built with profile-guided
# optimization (PGO), for the Debian package (packaging/build-deb.sh).
#
# The compiler lays out and inlines the code by what a gateway runs, counted in
# link/<target>.profdata. On the venue mix that is 19 % fewer instructions an
# event raw off and 12 % raw on than `cargo build --release` (measured with
# scripts/compare-builds.sh, docs/src/performance.md). PGO moves code; it does
# not change what the code computes (no fast-math), and this script fails
# unless a replay's tables are byte for byte those of the debug build (the one
# the tests run; CI has it already, so CI builds no plain release binary).
#
# --profile first makes the profile again: the binary built with counters
# (target/pgo-generate) runs the gateway's work (scripts/pgo-profile.sh).
# scripts/release-profiles.sh does that, a release step, after a new rustc (the
# profile is not used then: scripts/pgo-flags.sh says so) or new code on the
# data path (a changed function keeps its plain build; CI warns when the
# profile is stale: scripts/made-from.sh).
#
# Prints the binary's path last. `cargo build --release` stays the plain build;
# the symbol list (scripts/symbol-order.sh) is made from this one, which ships.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '== %s\n' "$*" >&2; }
target=$(rustc -vV | sed -n 's/^host: //p')
profile=link/$target.profdata

if [ "${1:-}" = --profile ]; then
  say "PGO profile: the release binary with counters (target/pgo-generate)"
  # Constant flags, so that its dependencies are compiled once and kept; the
  # counts go where LLVM_PROFILE_FILE says.
  CARGO_TARGET_DIR=target/pgo-generate RUSTFLAGS=-Cprofile-generate=/tmp/pitchside-pgo \
    PITCHSIDE_SYMBOL_ORDER=off cargo build --release --quiet >&2
  say "PGO profile: the gateway's work, counted"
  scripts/pgo-profile.sh "$profile" 200000 target/pgo-generate/release/pitchside
fi

say "PGO: the release binary from $profile (target/pgo)"
flags=$(scripts/pgo-flags.sh "$profile")
# The profile may have changed but not the flags: cargo would keep pitchside's
# own objects. Its dependencies' code did not change, and they are kept.
cargo clean --release --quiet -p pitchside --target-dir target/pgo 2>/dev/null || true
CARGO_TARGET_DIR=target/pgo RUSTFLAGS="$flags" cargo build --release --quiet >&2
pgo=$PWD/target/pgo/release/pitchside

say "PGO check: the tables of a replay are those of the debug build, byte for byte"
cargo build --quiet >&2
debug=$PWD/target/debug/pitchside
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pgo" bench --mix venue --events 100000 --dir "$work/in" > /dev/null
printf '[venue]\nid = "v"\ngateway_id = "gw"\n[detector]\nmax_keys = 1000\n[output]\nstore = "file://%s/store"\nspool_dir = "%s/spool"\nraw = true\n[metrics]\nlisten = ""\n' \
  "$work" "$work" > "$work/check.toml"
for b in debug pgo; do
  rm -rf "$work/store" "$work/spool"
  "${!b}" replay --config "$work/check.toml" --input "$work/in/input.jsonl" --output "$work/$b" \
    --received-at 2026-12-01T10:00:00Z --received-step 1ms > /dev/null
done
# (`progress` rows say when they were written: wall-clock time.)
diff -r --exclude=progress "$work/debug" "$work/pgo" >&2 || {
  echo "the PGO binary's tables differ from the debug build's" >&2
  exit 1
}
echo "$pgo"
