# Sourced by boards/cross-build.sh and packaging/build-deb.sh: for a target triple
# in $triple, sets deb_arch (Debian architecture), gnu (cross toolchain prefix) and
# qemu (the qemu-user command that runs its binaries here). Exits 2 on any other triple.
case "$triple" in
  aarch64-unknown-linux-gnu) deb_arch=arm64; gnu=aarch64-linux-gnu; qemu="qemu-aarch64 -cpu cortex-a53 -L /usr/aarch64-linux-gnu" ;;
  armv7-unknown-linux-gnueabihf) deb_arch=armhf; gnu=arm-linux-gnueabihf; qemu="qemu-arm -cpu cortex-a7 -L /usr/arm-linux-gnueabihf" ;;
  *) echo "unsupported target $triple (ARMv6 boards — Pi 1, Zero W — are out of reach of Debian's toolchain)" >&2; exit 2 ;;
esac
