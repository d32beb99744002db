#!/bin/bash
# scripts/apparmor4-parser.sh — an AppArmor 4 `apparmor_parser` on a host
# whose own is older (Debian 12 has 3.0.8), to check the profile that
# Ubuntu 24.04 and later load (contrib/apparmor/ringfence.abi4: `abi
# <abi/4.0>,` and `userns,`, which parser 3.0 rejects).
#
#   scripts/apparmor4-parser.sh [--rebuild]
#
# Prints, as its last line, a directory holding
#   apparmor_parser   the parser (libapparmor linked in statically)
#   apparmor.d/       the matching abi/ and tunables/ (the parser's --base)
#   features.userns   a kernel feature set that mediates user namespaces
#                     (from the source's own parser tests)
#   parser.conf       empty: the host's /etc/apparmor/parser.conf is for its
#                     own parser, never read by this one (--config-file)
#   VERSION           the Debian source version it was built from
#
# Where it comes from: Debian's own source package `apparmor` of the next
# release (RF_APPARMOR4_SUITE, default trixie), fetched by apt-get source
# with an apt configuration of this script's own (a deb-src entry for the
# same Debian archive the host's apt already uses, lists and cache in a
# temporary directory: /etc/apt is not touched), checked by apt against
# the archive's signed index. Only libapparmor (static) and the parser are
# built (~1.5 min on 2 CPUs). The result is cached per machine in
# RF_APPARMOR4_CACHE (default ~/.cache/ringfence/apparmor4) and reused
# without the network until --rebuild.
#
# Exit: 0 with the directory printed; 2 where it cannot be had here (a
# build tool missing, no Debian archive in apt's sources, the source not
# fetchable), with the reason on stderr; 1 when the build itself failed.
set -euo pipefail

suite=${RF_APPARMOR4_SUITE:-trixie}
home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cache=${RF_APPARMOR4_CACHE:-${XDG_CACHE_HOME:-$home/.cache}/ringfence/apparmor4}
rebuild=0
case "${1:-}" in
--rebuild) rebuild=1 ;;
"") ;;
*)
	echo "usage: scripts/apparmor4-parser.sh [--rebuild]" >&2
	exit 2
	;;
esac

cannot() {
	echo "apparmor4-parser: $*" >&2
	exit 2
}

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # another caller building the same cache

# a parser 4 already built, whichever version: no network needed
if [ "$rebuild" = 0 ] && [ -x "$cache/current/apparmor_parser" ] &&
	"$cache/current/apparmor_parser" --version 2>/dev/null | grep -q 'version [4-9]'; then
	(cd "$cache/current" && pwd -P)
	exit 0
fi

for t in flock apt-get dpkg-source make gcc g++ bison flex autoconf automake libtoolize aclocal; do
	command -v "$t" >/dev/null 2>&1 || cannot "needs $t (scripts/deps.sh installs the build tools)"
done
[ -d /usr/share/aclocal ] && ls /usr/share/aclocal/ax_*.m4 >/dev/null 2>&1 ||
	cannot "needs autoconf-archive (libapparmor's configure uses its macros)"

# The Debian archive the host's apt already uses for its own release (the
# main archive: o=Debian, l=Debian, a codename without a suffix)
uri=$(apt-cache policy 2>/dev/null | awk '
	/^ *[0-9]+ [a-z]+:\/\// { u = $2; next }
	/release .*o=Debian,.*n=[a-z]+,l=Debian,c=main/ { if (u != "") { print u; exit } }')
[ -n "$uri" ] || cannot "no Debian archive among apt's sources (apt-cache policy): the source package cannot be fetched"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

work=$(mktemp -d /tmp/rf-apparmor4.XXXXXXXX)
trap 'rm -rf -- "$work"' EXIT
mkdir -p "$work/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
: >"$work/sources.list"
{
	printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n' "$uri" "$suite"
	[ -f "$keyring" ] && printf 'Signed-By: %s\n' "$keyring"
} >"$work/sources.list.d/rf-apparmor4.sources"
apt_own=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/sources.list.d"
	-o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
apt-get "${apt_own[@]}" -q update >"$work/apt.log" 2>&1 ||
	cannot "apt-get update of $suite's sources failed: $(tail -n 3 "$work/apt.log" | tr '\n' ' ')"
version=$(apt-cache "${apt_own[@]}" showsrc apparmor 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)
[ -n "$version" ] || cannot "$suite has no source package apparmor"
case "$version" in [4-9].*) ;; *) cannot "$suite's apparmor is $version, not AppArmor 4" ;; esac
(cd "$work/src" && apt-get "${apt_own[@]}" -q source --only-source "apparmor=$version") >>"$work/apt.log" 2>&1 ||
	cannot "apt-get source apparmor=$version failed: $(tail -n 3 "$work/apt.log" | tr '\n' ' ')"
src=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'apparmor-*' | head -n 1)
[ -n "$src" ] && [ -d "$src/parser" ] || cannot "apt-get source gave no apparmor tree"

log=$work/build.log
echo "apparmor4-parser: building apparmor_parser $version (libapparmor, parser only)" >&2
if ! (
	set -e
	cd "$src/libraries/libapparmor"
	sh ./autogen.sh
	sh ./configure --with-perl=no --with-python=no --with-ruby=no --disable-shared
	make -j"$(nproc)"
	cd "$src/parser"
	make -j"$(nproc)" apparmor_parser
) >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "apparmor4-parser: the build failed" >&2
	exit 1
fi

out=$cache/$version
rm -rf -- "$out.new"
mkdir -p "$out.new/apparmor.d"
cp "$src/parser/apparmor_parser" "$out.new/"
cp -r "$src/profiles/apparmor.d/abi" "$src/profiles/apparmor.d/tunables" "$out.new/apparmor.d/"
feat=$(grep -l 'userns_create' "$src"/parser/tst/features_files/* 2>/dev/null | head -n 1 || true)
[ -n "$feat" ] && cp "$feat" "$out.new/features.userns"
: >"$out.new/parser.conf"
printf '%s\n' "$version" >"$out.new/VERSION"
"$out.new/apparmor_parser" --version | grep -q 'version [4-9]' || {
	echo "apparmor4-parser: the parser built is not AppArmor 4: $("$out.new/apparmor_parser" --version | head -n 1)" >&2
	exit 1
}
rm -rf -- "$out"
mv "$out.new" "$out"
ln -sfn "$version" "$cache/current"
(cd "$cache/current" && pwd -P)
