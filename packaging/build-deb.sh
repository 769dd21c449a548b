#!/usr/bin/env bash
# Builds the Debian package with cargo-deb and checks it (packaging/check-deb.sh):
#   packaging/build-deb.sh                                  # this machine's architecture
#   packaging/build-deb.sh aarch64-unknown-linux-gnu        # after boards/cross-build.sh
#   packaging/build-deb.sh armv7-unknown-linux-gnueabihf    # after boards/cross-build.sh
# For this machine it packages the binary of scripts/pgo-build.sh (profile-guided
# optimization, target/pgo); for a Raspberry Pi target the binary
# boards/cross-build.sh left in target-cross/, checked under qemu. Prints the
# .deb's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
triple=${1:-}
cargo_deb_version=3.8.0

if ! cargo deb --version 2>/dev/null | grep -q "$cargo_deb_version"; then
  echo "== installing cargo-deb $cargo_deb_version" >&2
  # At opt-level 1, as scripts/test.sh installs s3s-fs: it packages a few files
  # once per build, and compiles in much less time than at its profile's 3.
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install cargo-deb --version "$cargo_deb_version" --locked >&2
fi

if [ -z "$triple" ]; then
  # The binary built with profile-guided optimization, checked against the
  # debug build (scripts/pgo-build.sh), in target/pgo.
  scripts/pgo-build.sh >&2
  out=$(CARGO_TARGET_DIR=target/pgo cargo deb --no-build --no-strip 2>&2 | tail -1)
  packaging/check-deb.sh "$out" >&2
else
  . boards/targets.sh   # qemu: the runner for the target
  bin=target-cross/$triple/release/pitchside
  [ -x "$bin" ] || { echo "$bin is missing: run boards/cross-build.sh $triple first" >&2; exit 1; }
  out=$(CARGO_TARGET_DIR=target-cross cargo deb --target "$triple" --no-build --no-strip 2>&2 | tail -1)
  packaging/check-deb.sh "$out" "$qemu" >&2
fi
echo "$out"
