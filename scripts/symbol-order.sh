#!/usr/bin/env bash
# scripts/symbol-order.sh [--check]: the code layout of the release binary
# that ships: the one built with profile-guided optimization into target/pgo
# (scripts/pgo-build.sh). PGO inlines differently: of 2,088 functions listed
# from the plain build, the PGO build had 1,754. The plain `cargo build
# --release` reads the same list and has most of its functions.
#
# The binary has 11 MB of code, and a gateway runs about 1.4 MB of it; but that
# code lies all over the 11 MB, and the kernel maps 64 KiB of the file around
# every page it faults in, so 7 MiB of it ended up resident. build.rs hands the
# linker (lld) link/<target>.order, the functions that `bench --mix venue`,
# `replay` (raw off and on) and `run` on the demo call, those of `run` alone
# last, so that they lie together (docs/src/performance.md).
#
# Without arguments: relinks the release binary with its symbols, runs those
# workloads under valgrind (callgrind) and writes link/<target>.order.
# With --check (CI): relinks and says how many of the listed functions are
# still in the binary, with a "WARNING:" line when fewer than 75 % are (exit 0:
# a stale list costs resident memory, never correctness). Names carry a hash of
# their crate and of the compiler version, and a local function's name one of
# its module's code too, so every change to the code wears the list down a
# little (7 % for a small change to one module) and a new Cargo.lock at once:
# scripts/release-profiles.sh makes it again, a release step. A list made by
# another rustc is not used at all (build.rs says so): a warning too.
set -euo pipefail
export LC_ALL=C   # one sort order for sort and comm
cd "$(dirname "$0")/.."

target=$(rustc -vV | sed -n 's/^host: //p')
order=link/$target.order
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The PGO build with its symbols: the same objects, only the bin built again.
flags=$(scripts/pgo-flags.sh "link/$target.profdata")
pgo() { CARGO_TARGET_DIR=target/pgo RUSTFLAGS="$flags" cargo "$@"; }
pgo rustc --release --bin pitchside --quiet -- -C strip=none
bin=$work/pitchside
cp target/pgo/release/pitchside "$bin"
# Its own functions (text symbols); libc's are not ours to order.
nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u > "$work/defined"
[ -s "$work/defined" ] || { echo "$bin has no symbols: was it relinked?" >&2; exit 1; }

# The build puts the stripped binary back in target/pgo.
restore() { pgo build --release --quiet; }

if [ "${1:-}" = --check ]; then
  restore
  [ -f "$order" ] || { echo "WARNING: no $order: the default code layout; make it: scripts/release-profiles.sh"; exit 0; }
  if ! head -1 "$order" | grep -qF "# $(rustc -V) "; then
    echo "WARNING: $order was made by another rustc than $(rustc -V): not used; make it again: scripts/release-profiles.sh"
    exit 0
  fi
  listed=$(grep -vc '^#' "$order")
  found=$(grep -v '^#' "$order" | sort -u | comm -12 - "$work/defined" | wc -l)
  echo "$order: $found of $listed functions are in the PGO release binary"
  [ $((found * 4)) -ge $((listed * 3)) ] ||
    echo "WARNING: $order is stale: only $found of its $listed functions are in the binary (new Cargo.lock, or much new code); make it again: scripts/release-profiles.sh"
  exit 0
fi

command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
calls() { # calls NAME: the functions a profile saw
  grep -oE '^c?fn=\([0-9]+\) .*' "$work/$1.cg" | sed -E 's/^c?fn=\([0-9]+\) //' >> "$work/calls"
}
callgrind() { # callgrind NAME ARGS...: runs the binary under callgrind in $work
  (cd "$work" && valgrind --tool=callgrind --demangle=no --callgrind-out-file="$1.cg" \
    "$bin" "${@:2}" > "$1.log" 2>&1) || { cat "$work/$1.log" >&2; return 1; }
  calls "$1"
}
: > "$work/calls"
callgrind venue bench --mix venue --events 200000 --dir b1
callgrind raw bench --mix venue --events 200000 --raw --dir b2
for raw in false true; do
  printf '[venue]\nid = "v"\ngateway_id = "gw"\n[output]\nstore = "file://%s/store"\nspool_dir = "%s/spool"\nraw = %s\n[metrics]\nlisten = ""\n' \
    "$work" "$work" "$raw" > "$work/replay.toml"
  callgrind "replay-$raw" replay --config replay.toml --input b1/input.jsonl --output "out-$raw"
done
# The daemon on the demo (simulator -> ./outbox) for a while, then SIGTERM's drain,
# its console and metrics on free ports (as scripts/pgo-profile.sh does), so that
# this runs beside a gateway that holds 8080 and 9898.
sed -e 's|^listen = "127.0.0.1:9898"|listen = "127.0.0.1:0"|' \
  -e 's|^listen = "127.0.0.1:8080"|listen = "127.0.0.1:0"|' config/demo.toml > "$work/demo.toml"
(cd "$work" && timeout -s TERM 40 valgrind --tool=callgrind --demangle=no \
  --callgrind-out-file=run.cg "$bin" run --config demo.toml > run.log 2>&1) || true
# It ends by SIGTERM, so its exit says nothing; a start-up error would leave the
# list without `run`.
if grep -qi "error" "$work/run.log"; then
  echo "run on the demo failed; the list lacks it:" >&2
  grep -i "error" "$work/run.log" | head -3 >&2
  exit 1
fi
mv "$work/calls" "$work/calls-replay"
calls run

mkdir -p link
{
  echo "# $(rustc -V) $target: generated by scripts/symbol-order.sh from Cargo.lock $(sha256sum Cargo.lock | cut -c1-16)"
  # Only functions of this binary: those of bench and replay first, then those
  # only `run` calls. Each set is sorted by name, so that a new list differs
  # from the old one only where the code did (callgrind's own order changes
  # from run to run; no order within a set moved the RSS measurably).
  sort -u "$work/calls-replay" | comm -12 - "$work/defined" | tee "$work/first"
  sort -u "$work/calls" | comm -12 - "$work/defined" | comm -23 - "$work/first"
} > "$order"
restore
echo "$order: $(grep -vc '^#' "$order") functions"
