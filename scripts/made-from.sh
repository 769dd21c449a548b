#!/usr/bin/env bash
# scripts/made-from.sh: what the PGO profiles and the code layout list in link/
# were made from, and whether that is still this checkout.
#   scripts/made-from.sh TRIPLE    prints the record of TRIPLE for this checkout
#                                  (scripts/release-profiles.sh writes it to
#                                  link/TRIPLE.made-from)
#   scripts/made-from.sh --check   one line per profile or list: "ok: …" when its
#                                  record is this checkout's, else "WARNING: …"
#                                  saying what changed. Always exits 0: a stale
#                                  profile costs speed (about 12 % instructions on
#                                  the venue replay), never correctness (docs/src/performance.md);
#                                  CI repeats the warnings at the end.
#
# The record: the compiler (a function's counts are found by its mangled name,
# which carries a hash of the compiler's version: another compiler's build uses
# none of them), Cargo.lock (a crate's names carry a hash of its version), and
# the Rust sources that go into the binary (a changed function keeps its plain
# build), each as a hash of the committed files (git's blob ids). The commit is
# named for the reader; it is not compared.
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')

# The compiler that builds TRIPLE: the pinned rustup toolchain for this
# machine, Debian's for a Raspberry Pi (boards/cross-build.sh).
compiler() {
  if [ "$1" = "$host" ]; then rustc -V; else /usr/bin/rustc -V 2>/dev/null || echo "no /usr/bin/rustc"; fi
}

# The files the binary is built from: every Rust source and manifest but tests,
# examples, benches and fuzz targets.
sources() {
  git ls-files -s -- ':(glob)**/*.rs' ':(glob)**/Cargo.toml' Cargo.lock \
    ':(exclude,glob)**/tests/**' ':(exclude,glob)**/tests.rs' \
    ':(exclude,glob)**/examples/**' ':(exclude,glob)**/benches/**' ':(exclude)fuzz'
}

record() { # record TRIPLE
  echo "# What link/$1.profdata (and .order) were made from: scripts/release-profiles.sh."
  echo "rustc: $(compiler "$1")"
  echo "Cargo.lock: $(git ls-files -s Cargo.lock | awk '{print $2}')"
  echo "sources: $(sources | sha256sum | cut -c1-16)"
  echo "commit: $(git rev-parse HEAD)"
}

if [ "${1:-}" != --check ]; then
  record "${1:?usage: scripts/made-from.sh TRIPLE | --check}"
  exit 0
fi

field() { sed -n "s/^$1: //p" "$2"; }
for made in link/*.profdata link/*.order; do
  [ -e "$made" ] || continue
  triple=$(basename "$made"); triple=${triple%.*}
  rec=link/$triple.made-from
  if [ ! -f "$rec" ]; then
    echo "WARNING: $made: no $rec says what it was made from; make it again: scripts/release-profiles.sh $triple"
    continue
  fi
  now=$(record "$triple")
  stale=()
  for f in rustc Cargo.lock sources; do
    [ "$(field "$f" "$rec")" = "$(field "$f" <(echo "$now"))" ] || stale+=("$f")
  done
  if [ ${#stale[@]} -eq 0 ]; then
    echo "ok: $made was made from this checkout's code ($(field commit "$rec" | cut -c1-12))"
  elif [[ " ${stale[*]} " == *" rustc "* ]]; then
    echo "WARNING: $made was made by $(field rustc "$rec"), not $(compiler "$triple"): builds do not use it (a plain build); make it again: scripts/release-profiles.sh $triple"
  else
    echo "WARNING: $made is stale (${stale[*]} changed since $(field commit "$rec" | cut -c1-12)): builds use what still matches; make it again: scripts/release-profiles.sh $triple"
  fi
done
