#!/usr/bin/env bash
# Installs a pitchside .deb for real into a fresh Debian 12 (bookworm) chroot made
# with debootstrap, as an operator would with apt, and checks what the maintainer
# scripts did, then upgrades over an edited config and purges:
#   packaging/install-test.sh target/pgo/debian/pitchside_0.1.0-1_amd64.deb
# The chroot gets a fake /proc/device-tree/model ("Raspberry Pi 4 Model B Rev 1.4";
# /proc is not mounted there), so the postinst's board detection runs for real.
# For this machine's architecture only (no binfmt emulation). Debian 12, as root.
set -euo pipefail
deb=$(realpath "${1:?usage: packaging/install-test.sh <file.deb>}")
fail() { echo "install-test: $*" >&2; exit 1; }
ok() { echo "install-test: ok: $*"; }

command -v debootstrap > /dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
echo "== debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian > "$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/proc/device-tree"
printf 'Raspberry Pi 4 Model B Rev 1.4\0' > "$root/proc/device-tree/model"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

echo "== apt install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get update -qq
in_root apt-get install -y -qq "/tmp/$(basename "$deb")" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; fail "apt-get install failed"; }
grep 'pitchside:' "$work/install.log" || true

in_root pitchside --version | grep -q '^pitchside ' || fail "pitchside does not run after install"
ok "installed: $(in_root pitchside --version), with its dependencies from bookworm"
in_root id -nG pitchside | tr ' ' '\n' | grep -qx dialout || fail "user pitchside: $(in_root id pitchside)"
[ "$(in_root getent passwd pitchside | cut -d: -f6,7)" = /var/lib/pitchside:/usr/sbin/nologin ] \
  || fail "user pitchside: $(in_root getent passwd pitchside)"
ok "system user: $(in_root id pitchside)"
dropin=$root/etc/systemd/system/pitchside.service.d/board.conf
grep -qx 'MemoryMax=536870912' "$dropin" && grep -qx 'Environment="PITCHSIDE_BOARD=/usr/share/pitchside/boards/pi4.toml"' "$dropin" \
  || fail "board drop-in: $(cat "$dropin" 2>&1)"
ok "postinst detected the Pi 4 and wrote $dropin (MemoryMax=512M, PITCHSIDE_BOARD=pi4.toml)"
in_root dpkg-query -W -f='${Conffiles}\n' pitchside | grep -q '/etc/pitchside/pitchside.toml' \
  || fail "/etc/pitchside/pitchside.toml is not a conffile"
in_root pitchside check-config --config /etc/pitchside/pitchside.toml --board /usr/share/pitchside/boards/pi4.toml > /dev/null \
  || fail "the installed config does not validate"
[ -e "$root/usr/lib/systemd/system/pitchside.service" ] || fail "no unit installed"
in_root systemctl is-enabled pitchside.service > "$work/enabled" 2>&1 || true
grep -qx disabled "$work/enabled" || fail "the service should be installed disabled, is: $(cat "$work/enabled")"
ok "conffile registered, config validates, unit installed and left disabled until configured"

echo "== edit the config, reinstall (upgrade path), purge"
sed -i 's/^id = "my-venue"/id = "wankhede"/' "$root/etc/pitchside/pitchside.toml"
echo "# operator's own drop-in edit" >> "$dropin"
in_root dpkg -i "/tmp/$(basename "$deb")" > "$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log" >&2; fail "reinstall failed"; }
grep -q '^id = "wankhede"' "$root/etc/pitchside/pitchside.toml" || fail "the reinstall lost the operator's config edit"
grep -q "operator's own drop-in edit" "$dropin" || fail "the reinstall overwrote the operator's drop-in"
ok "a reinstall keeps the edited conffile and the operator's drop-in"
in_root dpkg --purge pitchside > "$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "purge failed"; }
[ ! -e "$root/usr/bin/pitchside" ] && [ ! -e "$dropin" ] && [ ! -e "$root/etc/pitchside/pitchside.toml" ] \
  || fail "purge left files behind"
ok "purge removes the binary, the conffile and the board drop-in"
echo "install-test: $deb: all checks passed"
