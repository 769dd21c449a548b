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
  echo "warning: no $profile: a plain build (make one: scripts/pgo-build.sh --profile," \
    "boards/cross-build.sh <triple> --profile)" >&2
elif [ "$(cat "$profile.rustc" 2>/dev/null)" != "$rustc" ]; then
  echo "warning: $profile was made by $(cat "$profile.rustc" 2>/dev/null || echo "an unknown rustc")," \
    "not $rustc: a plain build (make it again: scripts/pgo-build.sh --profile," \
    "boards/cross-build.sh <triple> --profile)" >&2
else
  # A function changed since the profile was made keeps its plain build (a
  # mismatch, not an error); one the work did not run is not in the profile.
  echo "-Cprofile-use=$profile -Cllvm-args=-pgo-warn-missing-function=false -Cllvm-args=-no-pgo-warn-mismatch"
fi
