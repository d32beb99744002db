#!/bin/sh
# scripts/deb.sh — build build/ringfence_VERSION_amd64.deb with debhelper
# (debian/), then lintian it. The sources are copied (tracked files of the
# working tree) into build/deb/src, so dpkg-buildpackage's outputs, which
# land in the parent directory, stay inside build/. Exit 0 only when the
# package built and lintian reports no error or warning. RF_DEB_VERSION
# builds the same tree under another version.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
out=$top/build/deb
rm -rf "$out"
mkdir -p "$out/src"
# the tracked files as they are in the working tree
git ls-files -z | (cd "$top" && xargs -0 tar -cf -) | tar -xf - -C "$out/src"
cd "$out/src"
# RF_DEB_VERSION: package this tree under another version (a changelog
# entry on top; the upgrade test builds a "newer" package of the same tree)
if [ -n "${RF_DEB_VERSION:-}" ]; then
	{
		printf 'ringfence (%s) unstable; urgency=medium\n\n  * Rebuilt as %s.\n\n' \
			"$RF_DEB_VERSION" "$RF_DEB_VERSION"
		printf ' -- %s  %s\n\n' "$(sed -n 's/^ -- \(.*>\)  .*/\1/p' debian/changelog | head -n 1)" \
			"$(date -R)"
		cat debian/changelog
	} >debian/changelog.new && mv debian/changelog.new debian/changelog
fi
dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
cd "$out"
deb=$(ls ringfence_*_amd64.deb)
cp "$deb" "$top/build/"
if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error,warning --no-tag-display-limit "$deb" >"$out/lintian.log" 2>&1 || {
		cat "$out/lintian.log" >&2
		echo "deb: lintian reports the package ($out/lintian.log)" >&2
		exit 1
	}
fi
echo "build/$deb"
