#!/usr/bin/env bash
# scripts/release-profiles.sh [TRIPLE...]: makes the PGO profiles and the code
# layout list in link/ again from the committed code, and records next to each
# what it was made from (link/<triple>.made-from, scripts/made-from.sh).
#
# A release step, not a commit step: a change to the code does not need them
# made again. Builds use whatever in a profile or list still matches the code;
# CI says loudly when they are stale (scripts/made-from.sh --check) and never
# fails for it. What the .deb gains from fresh ones over a plain
# `cargo build --release` is measured in docs/src/performance.md.
#
# TRIPLE: this machine's (x86_64-unknown-linux-gnu: profile, PGO build checked
# against the debug build's tables, layout list; about 15 min on 2 cores with
# valgrind) and aarch64-unknown-linux-gnu (a build with counters run under
# qemu: much longer; Debian's toolchain, as root). Without one: both. armv7 has
# no profile: its std, built here, has no profiler runtime (boards/cross-build.sh).
#
# Commit the changed files in link/ afterwards, with the record.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/toolchain.sh

say() { printf '\n== %s\n' "$*" >&2; }
host=$(rustc -vV | sed -n 's/^host: //p')
[ $# -gt 0 ] || set -- "$host" aarch64-unknown-linux-gnu

# The record names the committed code: the files built must be those.
if ! git diff --quiet HEAD -- ':(glob)**/*.rs' ':(glob)**/Cargo.toml' Cargo.lock; then
  echo "the Rust sources differ from the last commit (git status): commit them first;" \
    "the profiles are recorded as made from a commit" >&2
  exit 1
fi

for triple; do
  if [ "$triple" = "$host" ]; then
    say "$triple: PGO profile, and the PGO build checked (scripts/pgo-build.sh --profile)"
    scripts/pgo-build.sh --profile > /dev/null
    say "$triple: code layout list of the PGO build (scripts/symbol-order.sh)"
    scripts/symbol-order.sh
  else
    say "$triple: PGO profile under qemu (boards/cross-build.sh $triple --profile)"
    boards/cross-build.sh "$triple" --only setup
    boards/cross-build.sh "$triple" --profile --only build
  fi
  scripts/made-from.sh "$triple" > "link/$triple.made-from"
  say "$triple: made; link/$triple.made-from:"
  cat "link/$triple.made-from" >&2
done
scripts/made-from.sh --check
