#!/usr/bin/env bash
# Checks a pitchside .deb as a Debian tool and an operator would see it:
#   packaging/check-deb.sh pitchside_X_ARCH.deb [runner]
# control fields, file list, conffiles, maintainer scripts; then, unpacked: the
# binary runs (under the runner, e.g. qemu, for another architecture), the packaged
# config validates with every packaged board, the board drop-in for a detected
# model and the unit pass `systemd-analyze verify` together, and the sysusers
# file creates user pitchside in group dialout. Fails loudly on the first miss.
set -euo pipefail
deb=${1:?usage: packaging/check-deb.sh <file.deb> [runner]}
runner=${2:-}
fail() { echo "check-deb: $deb: $*" >&2; exit 1; }
ok() { echo "check-deb: ok: $*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Control fields.
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = pitchside ] || fail "Package is $(field Package)"
arch=$(field Architecture)
case "$arch" in amd64|arm64|armhf) ;; *) fail "unexpected Architecture $arch" ;; esac
field Depends | grep -q 'libc6 (>= 2.34)' || fail "Depends lacks libc6 (>= 2.34): $(field Depends)"
ok "control: pitchside $(field Version) $arch, Depends: $(field Depends)"

# Files.
dpkg-deb --contents "$deb" | awk '{print $1, $NF}' > "$work/list"
want=(
  "-rwxr-xr-x ./usr/bin/pitchside"
  "-rw-r--r-- ./usr/lib/systemd/system/pitchside.service"
  "-rw-r--r-- ./etc/pitchside/pitchside.toml"
  "-rw-r--r-- ./usr/lib/sysusers.d/pitchside.conf"
  "-rw-r--r-- ./usr/share/pitchside/boards/pi-zero-2w.toml"
  "-rw-r--r-- ./usr/share/pitchside/boards/pi3.toml"
  "-rw-r--r-- ./usr/share/pitchside/boards/pi4.toml"
  "-rw-r--r-- ./usr/share/pitchside/boards/pi5.toml"
  "-rw-r--r-- ./usr/share/pitchside/boards/cm4.toml"
  "-rw-r--r-- ./usr/share/doc/pitchside/README.md"
  "-rw-r--r-- ./usr/share/doc/pitchside/examples/example-venue.toml"
  "-rw-r--r-- ./usr/share/doc/pitchside/copyright"
)
for w in "${want[@]}"; do
  grep -qxF -- "$w" "$work/list" || { cat "$work/list" >&2; fail "missing or wrong mode: $w"; }
done
ok "files: ${#want[@]} expected paths with their modes"

# Maintainer scripts and conffiles.
dpkg-deb --control "$deb" "$work/DEBIAN"
grep -qx /etc/pitchside/pitchside.toml "$work/DEBIAN/conffiles" || fail "conffiles: $(cat "$work/DEBIAN/conffiles")"
for s in preinst postinst postrm; do
  [ -x "$work/DEBIAN/$s" ] || fail "no executable $s"
  sh -n "$work/DEBIAN/$s" || fail "$s: syntax error"
  ! grep -q '#DEBHELPER#' "$work/DEBIAN/$s" || fail "$s: #DEBHELPER# was not replaced"
done
grep -q 'systemd-sysusers .*pitchside.conf' "$work/DEBIAN/postinst" || fail "postinst does not create the user"
grep -q 'pitchside service-dropin --board auto' "$work/DEBIAN/postinst" || fail "postinst does not size the service"
grep -q 'daemon-reload' "$work/DEBIAN/postinst" || fail "postinst does not reload systemd"
grep -q 'armv6l' "$work/DEBIAN/preinst" || fail "preinst does not refuse ARMv6"
ok "conffiles: /etc/pitchside/pitchside.toml; preinst/postinst/postrm parse, ARMv6 refusal, user and drop-in steps present"

# Unpacked.
root=$work/root
dpkg-deb --extract "$deb" "$root"
bin=$root/usr/bin/pitchside
# shellcheck disable=SC2086  # the runner is a command with its options
run() { $runner "$bin" "$@"; }
# ELF e_machine (offset 18) must match the package's architecture.
machine=$(od -An -tx2 -j18 -N2 "$bin" | tr -d ' ')
case "$arch:$machine" in amd64:003e|arm64:00b7|armhf:0028) ;; *) fail "binary is ELF machine 0x$machine, package says $arch" ;; esac
run --version | grep -q '^pitchside ' || fail "the binary does not run${runner:+ under $runner}"
ok "binary runs${runner:+ under $runner}: $(run --version)"

for b in "$root"/usr/share/pitchside/boards/*.toml; do
  run check-config --config "$root/etc/pitchside/pitchside.toml" --board "$b" > /dev/null \
    || fail "the packaged config does not validate with $(basename "$b")"
done
ok "the packaged config validates with every packaged board"

printf 'Raspberry Pi 4 Model B Rev 1.4\0' > "$work/model"
units=$work/units
mkdir -p "$units/pitchside.service.d"
run service-dropin --board auto --boards-dir "$root/usr/share/pitchside/boards" --model-file "$work/model" \
  > "$units/pitchside.service.d/board.conf" || fail "service-dropin --board auto"
grep -qx 'MemoryMax=536870912' "$units/pitchside.service.d/board.conf" \
  && grep -qx "Environment=\"PITCHSIDE_BOARD=$root/usr/share/pitchside/boards/pi4.toml\"" "$units/pitchside.service.d/board.conf" || fail "drop-in: $(cat "$units/pitchside.service.d/board.conf")"
cp "$root/usr/lib/systemd/system/pitchside.service" "$units/"
if command -v systemd-analyze > /dev/null; then
  # verify checks that ExecStart exists: point the unit at the unpacked binary.
  sed -i "s|/usr/bin/pitchside|$bin|" "$units/pitchside.service"
  msg=$(SYSTEMD_UNIT_PATH="$units:" systemd-analyze verify --man=no "$units/pitchside.service" 2>&1) \
    || fail "systemd-analyze verify: $msg"
  [ -z "$msg" ] || fail "systemd-analyze verify warns: $msg"
  ok "unit + Pi 4 drop-in (MemoryMax=512M) pass systemd-analyze verify"
else
  echo "check-deb: systemd-analyze not installed: unit not verified" >&2
fi

if command -v systemd-sysusers > /dev/null; then
  mkdir -p "$work/sys/etc"
  printf 'root:x:0:0:root:/root:/bin/sh\n' > "$work/sys/etc/passwd"
  printf 'root:x:0:\ndialout:x:20:\n' > "$work/sys/etc/group"
  systemd-sysusers --root="$work/sys" "$root/usr/lib/sysusers.d/pitchside.conf"
  grep -q '^pitchside:x:[0-9]*:[0-9]*:[^:]*:/var/lib/pitchside:/usr/sbin/nologin$' "$work/sys/etc/passwd" \
    || fail "sysusers: $(cat "$work/sys/etc/passwd")"
  grep -qx 'dialout:x:20:pitchside' "$work/sys/etc/group" || fail "sysusers: $(cat "$work/sys/etc/group")"
  uid=$(grep '^pitchside:' "$work/sys/etc/passwd" | cut -d: -f3)
  [ "$uid" -lt 1000 ] || fail "pitchside got uid $uid, not a system uid"
  ok "sysusers: system user pitchside (uid $uid), home /var/lib/pitchside, in dialout"
else
  echo "check-deb: systemd-sysusers not installed: user creation not checked" >&2
fi
echo "check-deb: $deb: all checks passed"
