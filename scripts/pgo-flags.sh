#!/usr/bin/env bash
# scripts/pgo-flags.sh PROFILE: the RUSTFLAGS of a build from PROFILE
# (link/<target>.profdata, written by scripts/pgo-profile.sh), or nothing, with
# a warning, when there is none or another compiler made it (RUSTC, rustc by
# default): a function's counts are found by its mangled name, which carries
# a hash of the compiler's version, so such a profile would match nothing.
set -euo pipefail
profile=$(realpath -m "${1:?usage: scripts/pgo-flags.sh PROFILE}")
rustc=$("${RUSTC:-rustc}" -V)
if [ ! -f "$profile" ]; then
  echo "warning: no $profile: a plain build (make one: scripts/release-profiles.sh)" >&2
elif [ "$(cat "$profile.rustc" 2>/dev/null)" != "$rustc" ]; then
  echo "warning: $profile was made by $(cat "$profile.rustc" 2>/dev/null || echo "an unknown rustc")," \
    "not $rustc: a plain build (make it again: scripts/release-profiles.sh)" >&2
else
  # rustc lists the profile in every crate's dep-info, and cargo compiles a
  # crate again when a file listed there is newer than its output: a clone gives
  # link/*.profdata a new time, so every clean clone (each CI run) compiled all
  # dependencies again. rustc reads a copy named by the profile's content
  # instead, kept under target/: the same profile keeps its path and time, a
  # new one changes the flags (and so compiles everything, as it must).
  # (Through target/'s link, in CI: the path, which is in the flags, is then
  # the cache's, the same whatever folder the clone is in.)
  copies=$(cd "$(dirname "$0")/.." && pwd)/target/pgo-profiles
  mkdir -p "$copies"
  copies=$(realpath "$copies")
  copy=$copies/$(sha256sum "$profile" | cut -c1-16)-$(basename "$profile")
  if [ ! -f "$copy" ]; then
    cp "$profile" "$copy.tmp.$$"
    mv "$copy.tmp.$$" "$copy"
  fi
  # A function changed since the profile was made keeps its plain build (a
  # mismatch, not an error); one the work did not run is not in the profile.
  echo "-Cprofile-use=$copy -Cllvm-args=-pgo-warn-missing-function=false -Cllvm-args=-no-pgo-warn-mismatch"
fi
