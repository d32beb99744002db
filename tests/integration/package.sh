#!/bin/bash
# tests/integration/package.sh — the Debian package (issue 16): `make deb`
# (scripts/deb.sh: debhelper, then lintian with errors and warnings fatal)
# builds build/ringfence_VERSION_amd64.deb; apt installs it; the installed
# ringfence passes `doctor`, runs a command, loads its TLS module from the
# installed path (a run with an injection), and runs the demo from
# /usr/bin; the daemon's unit is installed but neither enabled nor started;
# the AppArmor profile installed is the one this host's parser accepts;
# an upgrade to a newer package keeps the state dir's keys, secret store
# and audit chain valid and an operator's changed conffile; purge leaves none of the package's files (and never touches
# /var/lib/ringfence). Skipped where a ringfence package is already
# installed (never replaced by a test), or without root or debhelper.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (apt installs the package)"
for c in dpkg-buildpackage dh lintian apt-get git; do
	command -v "$c" >/dev/null || skip_all "needs dpkg-buildpackage, debhelper, lintian, apt-get and git ($c is missing)"
done
[ -d "$RF_SRC/.git" ] || git -C "$RF_SRC" rev-parse >/dev/null 2>&1 || skip_all "needs a git checkout (scripts/deb.sh packs the tracked files)"
# the package holds release binaries built from the tree: once per suite
# run is enough (the sanitizer pass has nothing of its own to add here)
case "$RF_BIN" in *asan*) skip_all "the package is tested with the release build's pass" ;; esac
if dpkg-query -W -f='${Status}' ringfence 2>/dev/null | grep -q 'install ok'; then
	skip_all "a ringfence package is installed on this host: not replaced by a test"
fi
new_workspace

out=$("$RF_SRC/scripts/deb.sh" 2>&1)
rc=$?
is "$rc" 0 "make deb: the package builds and lintian reports no error or warning"
deb=$RF_SRC/$(tail -n 1 <<<"$out")
[ "$rc" = 0 ] && [ -f "$deb" ] || { diag "$out"; bail_out "no package to install"; }
like "$deb" '/build/ringfence_[0-9.]+_amd64\.deb$' "... into build/ ($deb)"
files=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's#^\.##')
for f in /usr/bin/ringfence /usr/bin/ringfence-secret /usr/bin/ringfence-oci \
	/usr/libexec/ringfence/ringfence-tls.so \
	/usr/share/man/man1/ringfence.1.gz \
	/usr/share/man/man1/ringfence-secret.1.gz /usr/share/man/man1/ringfence-oci.1.gz \
	/usr/share/bash-completion/completions/ringfence /usr/share/zsh/vendor-completions/_ringfence \
	/lib/systemd/system/ringfence.service /usr/share/ringfence/apparmor/ringfence.abi4 \
	/usr/share/ringfence/apparmor/ringfence.abi3 /etc/ringfence/daemon.json; do
	if grep -qxF "$f" <<<"$files"; then ok "the package holds $f"; else not_ok "the package holds $f"; fi
done

DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" >"$WS.apt" 2>&1
is "$?" 0 "apt installs it"
register_dir "$WS.state"
check "/usr/bin/ringfence is installed" test -x /usr/bin/ringfence
like "$(/usr/bin/ringfence --version)" '^ringfence [0-9]' "... and says its version"
out=$(/usr/bin/ringfence doctor --state-dir "$WS.state" 2>&1)
is "$?" 0 "ringfence doctor passes with the installed binary"
like "$out" "ok +tls_module +/usr/libexec/ringfence/ringfence-tls.so" "... finding the installed TLS module"
(cd "$WS" && /usr/bin/ringfence run --state-dir "$WS.state" -- sh -c 'echo installed-run') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "installed-run" "a run with the installed binary"
(cd "$WS" && K=pkg-test-value-0123456789 /usr/bin/ringfence run --state-dir "$WS.state" \
	--allow-host pkg.test --inject T=env:K@pkg.test -- sh -c 'test -s /run/ringfence/run-ca.crt && echo trust') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "trust" "a run with an injection: the installed TLS module made its CA"
out=$(RF_DEMO_BIN=/usr/bin/ringfence "$RF_SRC/scripts/demo.sh" 2>&1)
is "$?" 0 "the demo runs from /usr/bin"
like "$out" 'command ran: no' "... to its end"
if [ -d /etc/systemd/system ]; then
	check "the daemon's unit is not enabled" sh -c '! ls /etc/systemd/system/*/ringfence.service 2>/dev/null | grep -q .'
else
	ok "the daemon's unit is not enabled (no systemd here)"
fi
if [ -d /etc/apparmor.d ]; then
	check "the AppArmor profile is installed" test -f /etc/apparmor.d/ringfence
	if [ -e /etc/apparmor.d/abi/4.0 ]; then
		like "$(grep -v '^#' /etc/apparmor.d/ringfence)" 'userns,' "... the AppArmor 4 one (this parser has abi/4.0)"
	else
		unlike "$(grep -v '^#' /etc/apparmor.d/ringfence)" 'userns|abi/4' "... the AppArmor 3 one (this parser has no abi/4.0)"
	fi
	if command -v apparmor_parser >/dev/null; then
		apparmor_parser -Q -K /etc/apparmor.d/ringfence >/dev/null 2>&1
		is "$?" 0 "... and this host's parser accepts it"
	fi
fi

# an upgrade over this build keeps the state: its keys, secret store and
# audit chain (a newer package of the same tree, RF_DEB_VERSION)
printf 'upgrade-kept-value-0123456789' | /usr/bin/ringfence secret set --state-dir "$WS.state" kept >/dev/null 2>&1
(cd "$WS" && /usr/bin/ringfence run --state-dir "$WS.state" --secret K=store:kept -- sh -c 'test -n "$K" && echo before') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "before" "before the upgrade: a run with a secret from the store"
/usr/bin/ringfence audit head --state-dir "$WS.state" >"$WS.head" 2>/dev/null
check "... and the audit chain's head anchored" test -s "$WS.head"
printf '\n' >>/etc/ringfence/daemon.json # the operator's change to a conffile
conf=$(cat /etc/ringfence/daemon.json)
v1=$(dpkg-query -W -f='${Version}' ringfence)
out2=$(RF_DEB_VERSION="$v1+upgrade1" "$RF_SRC/scripts/deb.sh" 2>&1)
is "$?" 0 "a newer package ($v1+upgrade1) of the same tree builds"
deb2=$RF_SRC/$(tail -n 1 <<<"$out2")
DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Options::=--force-confold "$deb2" >>"$WS.apt" 2>&1
is "$?" 0 "apt upgrades to it"
is "$(dpkg-query -W -f='${Version}' ringfence)" "$v1+upgrade1" "... the newer version is installed"
out=$(/usr/bin/ringfence audit verify --state-dir "$WS.state" --head "$WS.head" 2>&1)
is "$?" 0 "after the upgrade the audit chain verifies against the head anchored before it"
(cd "$WS" && /usr/bin/ringfence run --state-dir "$WS.state" --secret K=store:kept -- sh -c 'test "$K" = upgrade-kept-value-0123456789 && echo after') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "after" "... the store and its key still give the secret to a run"
is "$(cat /etc/ringfence/daemon.json)" "$conf" "... and the operator's changed conffile is kept"
out=$(/usr/bin/ringfence audit verify --state-dir "$WS.state" --head "$WS.head" 2>&1)
is "$?" 0 "... and still does with the new binary's records on it"
rm -f -- "$deb2"

pkgfiles=$(dpkg -L ringfence | grep -v '^/\.$')
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q ringfence >>"$WS.apt" 2>&1
is "$?" 0 "apt purges it"
left=""
for f in $pkgfiles /etc/apparmor.d/ringfence /etc/ringfence/daemon.json; do
	[ -f "$f" ] && left="$left $f"
done
is "$left" "" "... and none of its files is left"
check "... /usr/bin/ringfence is gone" test ! -e /usr/bin/ringfence

done_testing
