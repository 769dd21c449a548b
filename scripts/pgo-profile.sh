#!/usr/bin/env bash
# scripts/pgo-profile.sh PROFILE EVENTS BINARY [RUNNER...]: runs the gateway's
# work with BINARY, a build with counters (rustc -Cprofile-generate), and merges
# the counts into PROFILE (link/<target>.profdata) for builds from them
# (-Cprofile-use), with the compiler's version beside it (PROFILE.rustc). RUNNER
# runs another architecture's binary (qemu); RUSTC names the compiler (rustc by
# default). Called by `scripts/pgo-build.sh --profile` (this machine) and
# `boards/cross-build.sh <triple> --profile` (Raspberry Pi, under qemu).
#
# The work: `bench --mix venue` of EVENTS lines raw off and raw on, `replay` of
# that input raw off and raw on, and `run` on the demo (simulator → folder,
# console, metrics) for 15 s. Code none of it runs (MQTT, serial, object
# stores) is compiled as in a plain build.
#
# Needs llvm-profdata of that LLVM: Debian's llvm-<major>, installed here when
# missing (as root).
set -euo pipefail
profile=$(realpath -m "${1:?usage: scripts/pgo-profile.sh PROFILE EVENTS BINARY [RUNNER...]}")
events=${2:?events}
bin=$(realpath "${3:?binary}")
shift 3
runner=("$@")
repo=$(cd "$(dirname "$0")/.." && pwd)

major=$("${RUSTC:-rustc}" -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=llvm-profdata-$major
if ! command -v "$profdata" >/dev/null; then
  echo "== installing llvm-$major (for $profdata)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$major"; } >&2 || {
    echo "$profdata is needed (Debian: apt-get install llvm-$major)" >&2
    exit 1
  }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export LLVM_PROFILE_FILE=$work/raw/%p.profraw
gateway() { "${runner[@]}" "$bin" "$@"; }
gateway bench --mix venue --events "$events" --dir b1 > bench.log
gateway bench --mix venue --events "$events" --raw --dir b2 >> bench.log
for raw in false true; do
  printf '[venue]\nid = "v"\ngateway_id = "gw"\n[output]\nstore = "file://%s/store"\nspool_dir = "%s/spool"\nraw = %s\n[metrics]\nlisten = ""\n' \
    "$work" "$work" "$raw" > replay.toml
  gateway replay --config replay.toml --input b1/input.jsonl --output "out-$raw" > replay.log
done
# The demo with its console and metrics on free ports, so that this runs beside
# a gateway that holds 8080 and 9898.
sed -e 's|^listen = "127.0.0.1:9898"|listen = "127.0.0.1:0"|' \
  -e 's|^listen = "127.0.0.1:8080"|listen = "127.0.0.1:0"|' \
  "$repo/config/demo.toml" > demo.toml
timeout -s TERM 15 "${runner[@]}" "$bin" run --config demo.toml > run.log 2>&1 || true
if ! grep -q "Pipeline drained" run.log || grep -q " ERROR " run.log; then
  echo "run on the demo failed; its log:" >&2
  cat run.log >&2
  exit 1
fi
mkdir -p "$(dirname "$profile")"
# Sparse: only the functions that ran (1 MB instead of 12).
"$profdata" merge --sparse -o "$profile" raw/*.profraw
"${RUSTC:-rustc}" -V > "$profile.rustc"
echo "== $(ls raw | wc -l) runs counted: $profile" >&2
