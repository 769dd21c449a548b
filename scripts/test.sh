#!/usr/bin/env bash
# Runs every test of pitchside, setting up what the tests need first.
# Idempotent: safe to run again; installs only what is missing.
#   - Rust tests (unit, property, integration against the real binary)
#   - Python tests of the lakehouse side (ingest/: local Spark + delta-rs)
#   - browser tests of the venue console (tests/browser/: headless chromium)
#   - the book (docs/): built with mdbook, every relative link and anchor checked
# Servers the tests start bind to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }
# The compiler rust-toolchain.toml pins, named if an installed stable is it
# (no download); fails saying what to install otherwise.
scripts/toolchain.sh
# timed NAME COMMAND...: runs an install step and says how long it took.
timed() {
  local name=$1 t0=$SECONDS; shift
  "$@"
  printf '== %s took %d s\n' "$name" $((SECONDS - t0))
}

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
# MQTT and serial tests: a private mosquitto (started by the tests themselves,
# never as a system service), its clients, socat for pseudo-terminals, openssl
# for test certificates.
[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null 2>&1 || need_apt+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
command -v socat >/dev/null 2>&1 || need_apt+=(socat)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# The console's browser tests drive Debian's chromium headless over the DevTools protocol.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# The file:// store test checks the order of fsyncs and deletes with strace.
command -v strace >/dev/null 2>&1 || need_apt+=(strace)
# The clock-step test steps the gateway's wall clock with libfaketime (LD_PRELOAD).
compgen -G "/usr/lib/*/faketime/libfaketime.so.1" >/dev/null || need_apt+=(libfaketime)
# The unit file test runs `systemd-analyze verify` (no systemd needs to be running).
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing Debian packages: ${need_apt[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  timed "apt-get update" $SUDO apt-get update -qq
  timed "apt-get install" env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! python3 -c 'import pyspark, deltalake, pyarrow, pytest, yaml, databricks.bundles' >/dev/null 2>&1; then
  say "installing Python tools (ingest/requirements.txt)"
  timed "pip install (ingest)" python3 -m pip install -q -r ingest/requirements.txt
fi

if ! python3 -c 'import websocket' >/dev/null 2>&1; then
  say "installing websocket-client (the browser tests' DevTools connection)"
  timed "pip install websocket-client" python3 -m pip install -q "websocket-client==1.8.0"
fi

# Object-storage servers for the upload tests, each started by the tests on a
# free 127.0.0.1 port: s3s-fs (S3; checks signatures, conditional writes and the
# multipart minimum), moto (a second S3 opinion), Azurite (Azure Blob; 3.35 is the
# last release for Node 20). GCS has no local server speaking object_store's
# protocol: it is build-checked only.
if ! command -v s3s-fs >/dev/null 2>&1; then
  say "installing s3s-fs (cargo install, a few minutes)"
  # At opt-level 1: it serves the tests' small objects as well, and compiles in
  # much less time than at its release profile's 3.
  timed "cargo install s3s-fs" env CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    cargo install s3s-fs@0.14.1 --features binary --locked
fi
if ! command -v moto_server >/dev/null 2>&1; then
  say "installing moto"
  timed "pip install moto" python3 -m pip install -q "moto[s3,server]==5.2.5"
fi
if ! command -v azurite-blob >/dev/null 2>&1; then
  say "installing Azurite"
  timed "npm install azurite" npm install -g --silent azurite@3.35.0
fi

# The book (docs/): mdbook, pinned, into ~/.cargo/bin like s3s-fs. Without its
# default features (serve, watch, search): only `mdbook build` is used, which
# keeps the install small (1 m 48 s on 2 shared cores).
MDBOOK_VERSION=0.5.4
if [ "$(mdbook --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
  say "installing mdbook $MDBOOK_VERSION (cargo install, about 2 minutes)"
  timed "cargo install mdbook" cargo install "mdbook@$MDBOOK_VERSION" --locked --no-default-features --force
fi

say "the book (docs/): build and link check"
mdbook build docs
python3 scripts/check_links.py

say "cargo test"
cargo test --all-targets

say "console browser tests (tests/browser/)"
# Headless chromium against the binary cargo just built; saves docs/src/images/console.png.
PITCHSIDE_BIN="$(pwd)/target/debug/pitchside" python3 -m pytest tests/browser -q

say "lakehouse tests (ingest/)"
# The ingest tests replay with the binary cargo just built.
PITCHSIDE_BIN="$(pwd)/target/debug/pitchside" python3 -m pytest ingest/tests -q
