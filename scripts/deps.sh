#!/bin/sh
# scripts/deps.sh — install the Debian packages ringfence needs to build, test
# and run its demo. Idempotent and quick when everything is present: it asks
# dpkg first and calls apt-get only for what is missing.
#
#   scripts/deps.sh            build + test + demo packages
#   scripts/deps.sh --build    only what `make` needs
#   scripts/deps.sh --bench    build + the peers of bench/ (never part of `make check`)
set -eu

build="gcc make meson ninja-build pkg-config libseccomp-dev libsodium-dev nettle-dev libgmp-dev libmnl-dev libnftnl-dev libssl-dev"
test="time clang libclang-rt-14-dev bubblewrap iproute2 util-linux procps python3 socat openssl git acl strace nftables
	curl wget nodejs chromium openjdk-17-jdk-headless openssh-server openssh-client python3-requests python3-pip
	debhelper lintian apparmor fakeroot dpkg-dev busybox-static podman conmon runc crun containerd catatonit
	containernetworking-plugins python3-grpcio bindfs
	g++ bison flex autoconf automake libtool autoconf-archive"

# bindfs: a FUSE volume source, which cannot be idmapped (oci_volumes.sh)
# g++ ... autoconf-archive: scripts/apparmor4-parser.sh builds an AppArmor 4
# parser from Debian's own source package (tests/integration/apparmor4.sh)

# the peers bench/ runs side by side with ringfence (bench/egress, bench/inject;
# srt comes from npm (Debian nodejs), installed by the bench scripts themselves)
bench="tinyproxy mitmproxy bubblewrap socat ripgrep nodejs curl openssl iproute2 util-linux"

want="$build"
case "${1:-}" in
--build) ;;
--bench) want="$build $bench" ;;
*) want="$build $test" ;;
esac
# npm fetches the real agents of tests/integration/agents_inject.sh and
# srt for bench/ (scripts/agents.sh, the bench scripts); a Node.js that
# brings its own npm needs no package (Debian's npm would conflict with it)
if [ "${1:-}" != "--build" ] && ! command -v npm >/dev/null 2>&1; then
	want="$want npm"
fi

missing=""
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "deps.sh: missing packages:$missing (run as root or install them)" >&2
		exit 1
	fi
else
	SUDO=""
fi
echo "deps.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# openssh-server is there for the tests' own sshd (started with a config of
# the test's, in a network namespace of the test's): the host's ssh service
# must not start because of it (Debian's unit honours this file)
case " $missing " in
*" openssh-server "*) $SUDO mkdir -p /etc/ssh && $SUDO touch /etc/ssh/sshd_not_to_be_run ;;
esac
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
	$SUDO apt-get update >/dev/null
	$SUDO apt-get install -y --no-install-recommends $missing
}
