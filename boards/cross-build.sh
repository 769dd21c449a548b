#!/usr/bin/env bash
# Builds pitchside for a Raspberry Pi target with Debian packages only (no docker,
# no rustup target), and checks it under qemu:
#   boards/cross-build.sh aarch64-unknown-linux-gnu          # 64-bit Raspberry Pi OS
#   boards/cross-build.sh armv7-unknown-linux-gnueabihf      # 32-bit Raspberry Pi OS
# Steps: install Debian's Rust (rustc-web) and the cross linker and qemu; fetch
# Debian's standard library for the target at exactly the host compiler's version
# (as a single foreign package, without adding a dpkg architecture); build the
# release binary; run it under qemu; replay a simulated file with it and compare
# the tables with the host build's (windows byte for byte, alerts and readings
# row for row). With --test, also runs the library's unit tests under qemu. The
# release binary is built with profile-guided optimization from
# link/<triple>.profdata when the target's std has the profiler runtime (below);
# --profile makes that profile again first (a build with counters, run under qemu).
# Output: target-cross/<triple>/release/pitchside. Debian 12 (bookworm), as root.
# When Debian's prebuilt std for the target is not in a verified index (the armhf
# security index failed here every time), the std is built from Debian's rust-web-src
# of the same version with cargo -Z build-std instead.
# --only setup|build|check runs one phase (CI overlaps the compiling with the tests):
#   setup  the Debian packages and the target's standard library (apt; nothing built)
#   build  compiles only: the release binary and, with --test, the unit tests
#   check  runs them under qemu: the binary, the replay comparison (with the host's
#          debug build, which it builds if target/ has none) and, with --test, the
#          unit tests
# Exit 3: neither could be fetched from a verified package index right now (nothing
# was built); any other failure is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
triple=${1:?usage: boards/cross-build.sh <aarch64-unknown-linux-gnu|armv7-unknown-linux-gnueabihf> [--test] [--profile] [--only setup|build|check]}
shift
run_tests="" only="" make_profile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --test) run_tests=--test ;;
    --profile) make_profile=1 ;;
    --only) only=${2:?--only needs setup, build or check}; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
phase() { [ -z "$only" ] || [ "$only" = "$1" ]; }

. boards/targets.sh   # deb_arch, gnu, qemu

say() { printf '\n== %s\n' "$*"; }

pkgs=(rustc-web cargo-web libstd-rust-web-dev "gcc-$gnu" "libc6-dev-$deb_arch-cross" qemu-user)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  phase setup || { echo "missing ${missing[*]}: run boards/cross-build.sh $triple --only setup first" >&2; exit 1; }
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

version=$(dpkg-query -W -f='${Version}' libstd-rust-web-dev)
rustlib=/usr/lib/rustlib/$triple
build_std=()        # empty: Debian's prebuilt std for the target; else cargo -Z build-std flags

# Debian's prebuilt standard library for the target, as a single foreign package.
fetch_prebuilt_std() {
  local work opts
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial"
  opts=(-o "APT::Architecture=$deb_arch" -o "APT::Architectures=$deb_arch" -o "Dir::State::Lists=$work/lists")
  # A failed index (seen here for armhf, every time: "File has unexpected size … Mirror
  # sync in progress?") is reported; signature checks stay on.
  if ! apt-get "${opts[@]}" update 2>"$work/update.err"; then
    cat "$work/update.err" >&2
  fi
  if grep -q '^E:' "$work/update.err"; then
    grep '^E:' "$work/update.err" >&2
    echo "apt could not read every $deb_arch package index (above)." >&2
  fi
  (cd "$work" && apt-get "${opts[@]}" download "libstd-rust-web-dev:$deb_arch=$version") || return 1
  # Called in an `if`, where set -e is off: every step checks itself.
  dpkg -x "$work"/libstd-rust-web-dev_*_"$deb_arch".deb "$work/x" || return 1
  mkdir -p /opt/pitchside-rustlib || return 1
  rm -rf "/opt/pitchside-rustlib/$triple" || return 1
  cp -a "$work/x/usr/lib/rustlib/$triple" "/opt/pitchside-rustlib/$triple" || return 1
  ln -sfn "/opt/pitchside-rustlib/$triple" "$rustlib" || return 1
  rm -rf "$work"
}

# Debian's std from source with cargo -Z build-std (the fallback below), once chosen.
use_build_std() {
  # One std (unwinding) for the release binary and the unit tests; `test` is named
  # for the binary too, since a different set of std crates would make the test
  # build compile every dependency again.
  build_std=(-Z build-std=std,test)
  export RUSTC_BOOTSTRAP=1   # -Z build-std is unstable; Debian's compiler is the same 1.x release
}
have_std_source() {
  dpkg -s rust-web-src >/dev/null 2>&1 && [ "$(dpkg-query -W -f='${Version}' rust-web-src)" = "$version" ]
}

if [ -e "$rustlib/lib" ]; then
  :   # Debian's prebuilt std is in place
elif ! phase setup; then
  have_std_source || { echo "no standard library for $triple: run boards/cross-build.sh $triple --only setup first" >&2; exit 1; }
  use_build_std
else
  say "fetching libstd-rust-web-dev:$deb_arch=$version"
  if ! fetch_prebuilt_std; then
    # The fallback: build the standard library from Debian's own source package of the
    # same version (rust-web-src, architecture all, from the verified host index) with
    # cargo's -Z build-std. Same compiler, same sources; not measurably slower here (the std compiles alongside the crates).
    say "libstd-rust-web-dev:$deb_arch=$version is not available from a verified index;" \
      "building the standard library from Debian's rust-web-src=$version instead (cargo -Z build-std)"
    if ! have_std_source; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "rust-web-src=$version" || {
        echo "rust-web-src=$version is not available either: cannot build $triple now." >&2
        exit 3   # "the toolchain cannot be had right now", distinct from a build or check failure
      }
    fi
    use_build_std
  fi
fi
[ "$only" != setup ] || exit 0

# Debian's compiler with Debian's std (a rustup compiler rejects it: E0514), and a
# target dir of its own.
upper=$(echo "$triple" | tr 'a-z-' 'A-Z_')
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO_TARGET_DIR=target-cross
export "CC_${triple//-/_}=$gnu-gcc" "AR_${triple//-/_}=$gnu-ar"
export "CARGO_TARGET_${upper}_LINKER=$gnu-gcc" "CARGO_TARGET_${upper}_RUNNER=$qemu"

bin=target-cross/$triple/release/pitchside
# The unit tests' harness: pitchside itself and the test-only dependencies that
# take longest to compile at opt-level 1; every other dependency is the release
# build's own.
unit_test_opts=()
for p in pitchside proptest rustix linux-raw-sys tempfile; do
  unit_test_opts+=(--config "profile.release.package.$p.opt-level=1")
done
# Profile-guided optimization (docs/src/performance.md): the release binary and the
# unit tests (which share its dependencies) are built from link/<triple>.profdata,
# the counts of a build with counters that ran the gateway's work under qemu
# (--profile makes it again: scripts/pgo-profile.sh), where the target's std has
# the profiler runtime: Debian's prebuilt std does; one built here with
# -Z build-std (armv7, while its index fails) does not, and is built plainly.
profile=link/$triple.profdata
if phase build && [ -n "$make_profile" ]; then
  [ ${#build_std[@]} -eq 0 ] || { echo "--profile: the std built here has no profiler runtime" >&2; exit 1; }
  say "building $triple with counters (PGO profile)"
  CARGO_TARGET_DIR=target-cross/pgo-generate RUSTFLAGS=-Cprofile-generate=/tmp/pitchside-pgo \
    /usr/bin/cargo build --release --target "$triple"
  say "the gateway's work under qemu, counted (PGO profile)"
  scripts/pgo-profile.sh "$profile" 100000 "target-cross/pgo-generate/$triple/release/pitchside" $qemu
  # The profile changed but not the flags: pitchside's own objects are built again.
  /usr/bin/cargo clean --release --target "$triple" -p pitchside
fi
if [ ${#build_std[@]} -eq 0 ]; then
  export RUSTFLAGS
  RUSTFLAGS=$(scripts/pgo-flags.sh "$profile")
fi
if phase build; then
  say "building $triple"
  /usr/bin/cargo build --release --target "$triple" "${build_std[@]}"
  ls -l "$bin"
  if [ "$run_tests" = "--test" ]; then
    say "building the unit tests for $triple"
    # With the release profile: every dependency is the one the release build above
    # compiled, optimised (in a debug build the checkpoint round-trip test alone runs
    # for over 10 min under qemu-arm; the profile unwinds for this, see Cargo.toml),
    # so only the library's test harness is compiled here, at opt-level 1
    # ($unit_test_opts): it compiles in half the time, and the release binary's own
    # opt-level 3 code is what the replay above checks.
    /usr/bin/cargo test --release --target "$triple" --lib --no-run "${unit_test_opts[@]}" "${build_std[@]}"
  fi
fi
phase check || exit 0

# The comparison reads Parquet with pyarrow, an independent reader (scripts/test.sh
# installs it; on a stock Debian use a venv with ingest/requirements.txt).
python3 -c 'import pyarrow' 2>/dev/null || python3 -m pip install -q "$(grep '^pyarrow==' ingest/requirements.txt)" || {
  echo "python3 needs pyarrow for the comparison: python3 -m venv .venv && .venv/bin/pip install -r ingest/requirements.txt, then run again with .venv/bin on PATH" >&2
  exit 1
}
[ -x "$bin" ] || { echo "$bin is missing: run boards/cross-build.sh $triple --only build first" >&2; exit 1; }
$qemu "$bin" --version

say "replaying under qemu and comparing with the host build"
# The host build: the usual toolchain and target dir, not the cross settings above;
# its debug build, the one the tests run (CI has it already), so that the check
# also spans the optimizer (opt-level 0 against 3, and PGO on aarch64).
env -u RUSTC -u RUSTDOC -u RUSTC_BOOTSTRAP -u RUSTFLAGS CARGO_TARGET_DIR=target cargo build
work=$(mktemp -d)
./target/debug/pitchside simulate --count 20000 --start 2026-11-29T18:00:00Z --anomaly-rate 0.01 --output "$work/in.jsonl"
printf '[venue]\nid = "v"\ngateway_id = "g"\n[output]\nstore = "file://%s/store"\nspool_dir = "%s/spool"\n[metrics]\nlisten = ""\n' "$work" "$work" > "$work/c.toml"
./target/debug/pitchside replay --config "$work/c.toml" --input "$work/in.jsonl" --output "$work/host" >/dev/null
$qemu "$bin" replay --config "$work/c.toml" --input "$work/in.jsonl" --output "$work/target" >/dev/null
for t in windows_wearable windows_pitch windows_crowd windows_generic fatigue_alerts; do
  a=$(cd "$work/host" && find "$t" -name '*.parquet' | sort | xargs cat | sha256sum)
  b=$(cd "$work/target" && find "$t" -name '*.parquet' | sort | xargs cat | sha256sum)
  [ "$a" = "$b" ] || { echo "$t differs between host and $triple" >&2; exit 1; }
  echo "$t: byte-identical"
done
python3 - "$work" <<'PY'
import glob, sys
import pyarrow.parquet as pq
work = sys.argv[1]
for t in ["alerts", "raw", "late", "rejects"]:
    def load(d):
        rows = []
        for f in sorted(glob.glob(f"{work}/{d}/{t}/**/*.parquet", recursive=True)):
            tb = pq.read_table(f)
            cols = [c for c in tb.column_names if c not in ("detected_at", "received_at")]
            rows += [tuple(r[c] for c in cols) for r in tb.select(cols).to_pylist()]
        return rows
    a, b = load("host"), load("target")
    assert a == b, f"{t} differs between host and target"
    print(f"{t}: {len(a)} rows identical")
PY

if [ "$run_tests" = "--test" ]; then
  say "unit tests under qemu"
  # Built by the build phase; cargo only checks that they are fresh and runs them.
  /usr/bin/cargo test --release --target "$triple" --lib "${unit_test_opts[@]}" "${build_std[@]}"
fi
