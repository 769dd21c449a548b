#!/usr/bin/env bash
# scripts/ci-cache.sh: links target/ and target-cross/ of the checkout it is run
# in to CI's build cache, ~/.cache/pitchside-ci/<key of Cargo.lock>/ (or
# $PITCHSIDE_CI_CACHE/<key>), made if missing. Called by .ci/run; tested by
# tests/ci_cache.rs (a fresh machine, a changed Cargo.lock, the same one).
set -euo pipefail
cd "$(dirname "$0")/.."

# Compiled dependencies are kept between CI runs on this machine, keyed by
# Cargo.lock, as CI services keep target/ (actions/cache, rust-cache): a clean
# clone still compiles pitchside itself for every target and runs every test and
# check; only dependencies that did not change are not compiled again. One key is
# kept, so the cache stays one set of targets big. A new Cargo.lock starts from
# the previous set, as rust-cache's restore keys do: cargo compiles again only
# the crates that changed (one new crate cost a whole cold run, 60 min, before).
# A previous set past $cache_max_gib is dropped instead: crates replaced by newer
# versions stay in it until then. PITCHSIDE_CI_CACHE=off: no cache.
cache_root=${PITCHSIDE_CI_CACHE:-$HOME/.cache/pitchside-ci}
cache_max_gib=40
if [ "$cache_root" != off ]; then
  key=$(sha256sum Cargo.lock | cut -c1-16)
  if [ -d "$cache_root" ] && [ ! -d "$cache_root/$key" ]; then
    previous=$(find "$cache_root" -mindepth 1 -maxdepth 1 -type d -print -quit)
    if [ -n "$previous" ] && [ "$(du -s --block-size=1G "$previous" | cut -f1)" -le "$cache_max_gib" ]; then
      echo "== build cache: Cargo.lock changed; starting from the previous set ($previous)"
      mv "$previous" "$cache_root/$key"
    fi
  fi
  mkdir -p "$cache_root/$key/target" "$cache_root/$key/target-cross"
  find "$cache_root" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf {} +
  for d in target target-cross; do
    [ -e "$d" ] || ln -s "$cache_root/$key/$d" "$d"
  done
  echo "== build cache: $cache_root/$key ($(du -sh "$cache_root/$key" | cut -f1))"
fi
