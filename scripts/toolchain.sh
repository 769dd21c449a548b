#!/usr/bin/env bash
# scripts/toolchain.sh: makes sure rustup has the compiler that
# rust-toolchain.toml pins, without downloading anything.
#
# rustup installs a pinned release the first time cargo runs here; a machine
# that cannot reach static.rust-lang.org but whose installed toolchain (say
# `stable`) IS that release would fail instead. This names that toolchain as
# the pinned release (a link in $RUSTUP_HOME/toolchains, the directory rustup
# itself would have made: `rustup toolchain link` refuses release names), so
# that cargo finds it. When no installed toolchain is that release it fails,
# saying what to install. .ci/run and scripts/test.sh run it first; run it once
# by hand before the first `cargo` on such a machine. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

pinned=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
[ -n "$pinned" ] || { echo "rust-toolchain.toml names no channel" >&2; exit 1; }
command -v rustup >/dev/null || {
  echo "rustup is missing: rust-toolchain.toml pins rustc $pinned (https://rustup.rs)" >&2
  exit 1
}
# Every toolchain by name, outside this folder so that rust-toolchain.toml does
# not make rustup resolve (and try to download) the pinned one.
toolchains=$(cd / && rustup toolchain list | sed -e 's/ .*//')
version() { (cd / && rustup run "$1" rustc -V 2>/dev/null) || true; }

for tc in $toolchains; do
  case "$tc" in
    "$pinned"-*)
      have=$(version "$tc")
      case "$have" in
        "rustc $pinned "*) exit 0 ;;
        *) echo "toolchain $tc is not rustc $pinned but '${have:-nothing}': repair it (rustup toolchain install $pinned --force)" >&2
           exit 1 ;;
      esac
      ;;
  esac
done

for tc in $toolchains; do
  case "$(version "$tc")" in
    "rustc $pinned "*)
      sysroot=$(cd / && rustup run "$tc" rustc --print sysroot)
      host=$(cd / && rustup run "$tc" rustc -vV | sed -n 's/^host: //p')
      dir=${RUSTUP_HOME:-$HOME/.rustup}/toolchains
      ln -sfn "$sysroot" "$dir/$pinned-$host"
      echo "== toolchain: $tc is rustc $pinned; named $pinned-$host for rust-toolchain.toml" >&2
      # The components rust-toolchain.toml lists are those of $tc; rustup would
      # try to download a missing one.
      for c in $(sed -n 's/^components *= *\[\(.*\)\]/\1/p' rust-toolchain.toml | tr -d '",'); do
        (cd / && rustup component list --installed --toolchain "$pinned-$host") | grep -q "^$c" || {
          echo "toolchain $tc lacks $c, which rust-toolchain.toml lists: rustup component add $c --toolchain $pinned" >&2
          exit 1
        }
      done
      exit 0
      ;;
  esac
done

echo "rust-toolchain.toml pins rustc $pinned, and no installed toolchain is it" \
  "(installed: $(echo $toolchains)). Install it: rustup toolchain install $pinned" \
  "(needs static.rust-lang.org). A newer rustc builds the code too, but PGO" \
  "profiles and the layout list in link/ are made for $pinned (scripts/release-profiles.sh)." >&2
exit 1
