#!/bin/bash
# tests/integration/package.sh — the Debian package (issue 16).
#
# (a) `make deb` (scripts/deb.sh: debhelper, then lintian with errors and
# warnings fatal) builds build/ringfence_VERSION_amd64.deb; apt installs it
# on a host without it; the installed ringfence passes `doctor`, runs a
# command, loads its TLS module from the installed path (a run with an
# injection), and runs the demo from /usr/bin; the daemon's unit is
# installed but neither enabled nor started; the AppArmor profile installed
# is the one this host's parser accepts, and where the parser has abi/4.0
# (a mount namespace with an AppArmor 4 parser's abi/, from
# scripts/apparmor4-parser.sh) the AppArmor 4 one, which that parser
# accepts as installed; purge leaves none of its files.
#
# (b) An upgrade from a genuinely older build: the package of an older
# commit of this repository (RF_DEB_OLD_COMMIT, default the first commit
# whose debian/ built; built in a temporary git worktree, once per commit:
# cached in build/deb-old/COMMIT/, ~20 s) is installed and used: a run, a
# stored secret, the audit chain (its head anchored), an operator's edit of
# /etc/ringfence/daemon.json, the daemon started as its unit would start it.
# Then the current package is installed over it: the state dir's keys and
# secret store are byte for byte the same and a run still gets the secret,
# the audit chain verifies against the head anchored by the old binary, the
# edited conffile is kept, and the running daemon was restarted on the new
# binary (a try-restart in the postinst: before, the preinst stopped it and
# nothing started it again). Purge then removes the package's files and
# stops the daemon, and leaves the operator's: the state dir (its chain
# still verifies), a profile in /etc/ringfence/profiles/, the AppArmor
# local include.
#
# The service manager is a stand-in: apt runs in a mount namespace of its
# own where /run/systemd/system exists (so debhelper's snippets act),
# policy-rc.d allows actions (a container's denies them) and `systemctl`
# (bind-mounted over the real one, and first on dpkg's PATH) is a script
# that runs the unit's ExecStart as a process (with the test's state dir
# for /var/lib/ringfence) and logs every call. The host's own service
# manager, if any, is never asked.
#
# Skipped where a ringfence package is already installed (never replaced by
# a test), or without root, debhelper, git, curl or unshare.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (apt installs the package)"
for c in dpkg-buildpackage dh lintian apt-get git curl unshare flock; do
	command -v "$c" >/dev/null || skip_all "needs dpkg-buildpackage, debhelper, lintian, apt-get, git, curl, unshare and flock ($c is missing)"
done
[ -d "$RF_SRC/.git" ] || git -C "$RF_SRC" rev-parse >/dev/null 2>&1 || skip_all "needs a git checkout (scripts/deb.sh packs the tracked files)"
# the package holds release binaries built from the tree: once per suite
# run is enough (the sanitizer pass has nothing of its own to add here)
case "$RF_BIN" in *asan*) skip_all "the package is tested with the release build's pass" ;; esac
if dpkg-query -W -f='${Status}' ringfence 2>/dev/null | grep -q 'install ok'; then
	skip_all "a ringfence package is installed on this host: not replaced by a test"
fi
OLD_COMMIT=${RF_DEB_OLD_COMMIT:-4e8c679cfd29cae897e03a7182c0febff03ea594}
git -C "$RF_SRC" cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null ||
	skip_all "the older commit $OLD_COMMIT is not in this checkout (a shallow clone?)"
new_workspace

# ---- cleanup: whatever this script installed, started or made outside its
# temp dirs goes at exit, also when it stops early
PKG_INSTALLED=0
SD=$WS.sd # the service manager stand-in: bin/systemctl, log, pid, daemon.log
OLD_WT=""
MADE=() # files of the operator's this script made (removed at exit)
MADE_DIRS=()
# /etc/ringfence without the package: only where an operator made it
[ -d /etc/ringfence ] || MADE_DIRS=(/etc/ringfence)
pkg_cleanup() {
	[ "$BASHPID" = "$$" ] || return 0
	local p f
	if [ -s "$SD/pid" ]; then
		p=$(cat "$SD/pid")
		# only the daemon this script's stand-in started (its state dir)
		if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "--state-dir $WS.state "; then
			kill -TERM "$p" 2>/dev/null
			for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
			kill -KILL "$p" 2>/dev/null
		fi
	fi
	if [ "$PKG_INSTALLED" = 1 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -q ringfence >/dev/null 2>&1
	fi
	if [ -n "$OLD_WT" ]; then
		git -C "$RF_SRC" worktree remove --force "$OLD_WT/src" >/dev/null 2>&1
		rm -rf -- "$OLD_WT"
		git -C "$RF_SRC" worktree prune >/dev/null 2>&1
	fi
	for f in "${MADE[@]}"; do rm -f -- "$f"; done
	for f in "${MADE_DIRS[@]}"; do rmdir -- "$f" 2>/dev/null; done
	_rf_cleanup
}
trap pkg_cleanup EXIT

apt_q() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Options::=--force-confold "$@" >>"$WS.apt" 2>&1; }

# ---- (a) the current package: build, install, use, purge

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
# the maintainer scripts' service handling (debian/rules, debian/ringfence.prerm)
ctl=$WS.control
mkdir -p "$ctl" && dpkg-deb -e "$deb" "$ctl"
like "$(cat "$ctl/postinst")" "deb-systemd-invoke try-restart 'ringfence.service'" \
	"the postinst restarts a running daemon on upgrade (try-restart: never starts one)"
unlike "$(cat "$ctl/preinst" 2>/dev/null)" 'deb-systemd-invoke stop' \
	"... and no preinst stops it before (which left it stopped)"
like "$(cat "$ctl/prerm" 2>/dev/null)" 'deb-systemd-invoke stop ringfence.service' "the prerm stops it on remove"

PKG_INSTALLED=1
apt_q install "$deb"
is "$?" 0 "apt installs it"
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

# where the parser has abi/4.0 (Ubuntu 24.04 and later) the postinst
# installs the AppArmor 4 profile, and an AppArmor 4 parser accepts what it
# installed: dpkg configures the package again in a mount namespace where
# /etc/apparmor.d/abi is that parser's (scripts/apparmor4-parser.sh, cached
# by apparmor4.sh, which runs first)
if [ -d /etc/apparmor.d/abi ] && [ ! -e /etc/apparmor.d/abi/4.0 ]; then
	aa4=$("$RF_SRC/scripts/apparmor4-parser.sh" 2>"$WS.aa4" | tail -n 1)
	if [ -n "$aa4" ] && [ -x "$aa4/apparmor_parser" ]; then
		unshare -m --propagation private sh -c 'mount --bind "$1/apparmor.d/abi" /etc/apparmor.d/abi &&
			dpkg -i "$2"' abi4 "$aa4" "$deb" >>"$WS.apt" 2>&1
		is "$?" 0 "on a host whose parser has abi/4.0 the package configures"
		like "$(grep -v '^#' /etc/apparmor.d/ringfence)" 'abi <abi/4\.0>,' "... with the AppArmor 4 profile"
		"$aa4/apparmor_parser" --config-file="$aa4/parser.conf" --base="$aa4/apparmor.d" -Q -K \
			/etc/apparmor.d/ringfence >"$WS.aa4" 2>&1
		is "$?" 0 "... which an AppArmor 4 parser ($(cat "$aa4/VERSION")) accepts as installed"
	else
		skip "the AppArmor 4 profile as installed where the parser has abi/4.0" \
			"no AppArmor 4 parser: $(tail -n 1 "$WS.aa4")"
	fi
fi

pkgfiles=$(dpkg -L ringfence | grep -v '^/\.$')
apt_q purge ringfence
is "$?" 0 "apt purges it"
PKG_INSTALLED=0
left=""
for f in $pkgfiles /etc/apparmor.d/ringfence /etc/ringfence/daemon.json; do
	[ -f "$f" ] && left="$left $f"
done
is "$left" "" "... and none of its files is left"
check "... /usr/bin/ringfence is gone" test ! -e /usr/bin/ringfence

# ---- (b) an upgrade from the package of an older commit

# old_deb COMMIT: REPLY = the package of COMMIT, versioned below it
# (VERSION~old.SHORT: an older build of the same release sorts first),
# built in a temporary worktree once and cached in build/deb-old/COMMIT/
old_deb() {
	local c=$1 cache=$RF_SRC/build/deb-old/$1 lk rc=0
	REPLY=""
	mkdir -p "$cache" || return 1
	exec {lk}>"$cache.lock"
	flock "$lk" # another run of this test building the same commit
	if ! compgen -G "$cache/ringfence_*_amd64.deb" >/dev/null; then
		OLD_WT=$(mktemp -d /tmp/rf-debold.XXXXXXXX)
		(
			set -e
			git -C "$RF_SRC" worktree add --detach "$OLD_WT/src" "$c"
			cd "$OLD_WT/src"
			v=$(dpkg-parsechangelog -S Version)~old.${c:0:7}
			{
				printf 'ringfence (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n' "$v" "$c"
				printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -S Maintainer)" "$(dpkg-parsechangelog -S Date)"
				cat debian/changelog
			} >debian/changelog.new
			mv debian/changelog.new debian/changelog
			dpkg-buildpackage -us -uc -b
			cp "$OLD_WT"/ringfence_"$v"_amd64.deb "$cache/"
		) >"$cache/build.log" 2>&1 || rc=1
		git -C "$RF_SRC" worktree remove --force "$OLD_WT/src" >/dev/null 2>&1
		rm -rf -- "$OLD_WT"
		git -C "$RF_SRC" worktree prune >/dev/null 2>&1
		OLD_WT=""
	fi
	exec {lk}>&-
	[ "$rc" = 0 ] || return 1
	REPLY=$(compgen -G "$cache/ringfence_*_amd64.deb" | head -n 1)
}

t0=$(date +%s)
old_deb "$OLD_COMMIT"
rc=$?
is "$rc" 0 "the package of the older commit ${OLD_COMMIT:0:7} builds (or is cached: $(($(date +%s) - t0)) s)"
olddeb=$REPLY
[ "$rc" = 0 ] && [ -f "$olddeb" ] || {
	diag "$(tail -n 30 "$RF_SRC/build/deb-old/$OLD_COMMIT/build.log" 2>/dev/null)"
	bail_out "no older package"
}
check "the worktree it was built in is gone" sh -c "! git -C '$RF_SRC' worktree list | grep -q rf-debold"
oldv=$(dpkg-deb -f "$olddeb" Version)
newv=$(dpkg-deb -f "$deb" Version)
check "... its version ($oldv) is older than the current one ($newv)" dpkg --compare-versions "$oldv" lt "$newv"

# the service manager stand-in (see the file's head)
mkdir -p "$SD/bin"
printf '#!/bin/sh\nexit 0\n' >"$SD/policy-rc.d"
chmod 0755 "$SD/policy-rc.d"
cat >"$SD/bin/systemctl" <<EOF
#!/bin/bash
# systemctl stand-in for ringfence.service: its ExecStart as a process
sd=$SD
state=$WS.state
EOF
cat >>"$SD/bin/systemctl" <<'EOF'
printf '%s\n' "$*" >>"$sd/log"
args=()
for a; do case $a in --system | --quiet | -q | --no-legend | --) ;; *) args+=("$a") ;; esac; done
active() { [ -s "$sd/pid" ] && kill -0 "$(cat "$sd/pid")" 2>/dev/null; }
stop() {
	local p
	if active; then
		p=$(cat "$sd/pid")
		kill -TERM "$p"
		for _ in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	fi
	rm -f "$sd/pid"
}
start() {
	local line fd
	active && return 0
	line=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/ringfence.service)
	read -ra cmd <<<"${line//\/var\/lib\/ringfence/$state}"
	# nothing of dpkg's or apt's stays open in the daemon (apt waits for
	# its status pipe to close)
	for fd in /proc/$$/fd/*; do
		fd=${fd##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	done 2>/dev/null
	setsid "${cmd[@]}" </dev/null >>"$sd/daemon.log" 2>&1 &
	echo $! >"$sd/pid"
}
case ${args[0]:-} in
start) start ;;
stop) stop ;;
restart) stop && start ;;
try-restart) if active; then stop && start; fi ;;
is-active) active ;;
is-enabled) echo disabled; exit 1 ;;
*) ;; # daemon-reload and the rest: nothing to do
esac
EOF
chmod 0755 "$SD/bin/systemctl"
# with_sd CMD...: CMD in a mount namespace where systemd seems to run
with_sd() {
	unshare -m --propagation private env PATH="$SD/bin:$PATH" SD="$SD" bash -c '
		mount -t tmpfs rf-test-sd /run/systemd 2>/dev/null || { mkdir -p /run/systemd && mount -t tmpfs rf-test-sd /run/systemd; } || exit 99
		mkdir /run/systemd/system || exit 99
		if [ -e /usr/sbin/policy-rc.d ]; then mount --bind "$SD/policy-rc.d" /usr/sbin/policy-rc.d || exit 99; fi
		if [ -e /usr/bin/systemctl ]; then mount --bind "$SD/bin/systemctl" /usr/bin/systemctl || exit 99; fi
		exec "$@"' with_sd "$@"
}
# apt runs dpkg with a PATH of its own (DPkg::Path): the stand-in first
SD_APT=(-o "DPkg::Path=$SD/bin:/usr/sbin:/usr/bin:/sbin:/bin")
daemon_pid() { cat "$SD/pid" 2>/dev/null; }
daemon_answers() {
	for _ in $(seq 1 200); do
		curl -s -m 2 -o /dev/null -w '%{http_code}' --unix-socket "$WS.state/control.sock" \
			http://ringfence/v1/runs 2>/dev/null | grep -q '^200$' && return 0
		sleep 0.05
	done
	return 1
}

# the older package, used
PKG_INSTALLED=1
apt_q install "$olddeb"
is "$?" 0 "apt installs the older package ($oldv)"
is "$(dpkg-query -W -f='${Version}' ringfence)" "$oldv" "... that version is installed"
rm -rf -- "$WS.state" && mkdir -m 0700 "$WS.state"
printf 'upgrade-kept-value-0123456789' | /usr/bin/ringfence secret set --state-dir "$WS.state" kept >/dev/null 2>&1
is "$?" 0 "the older binary stores a secret"
(cd "$WS" && /usr/bin/ringfence run --state-dir "$WS.state" --secret K=store:kept -- sh -c 'test "$K" = upgrade-kept-value-0123456789 && echo before') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "before" "... and gives it to a run"
# the operator's changes: the daemon's configuration (a conffile), a
# profile of their own, an AppArmor local include
printf '{"version": 1, "ceiling": {"max_timeout": "1h"}}\n' >/etc/ringfence/daemon.json
conf=$(cat /etc/ringfence/daemon.json)
for d in /etc/ringfence/profiles /etc/apparmor.d/local; do
	[ -d "$(dirname "$d")" ] || continue
	[ -d "$d" ] || { mkdir "$d" && MADE_DIRS=("$d" "${MADE_DIRS[@]}"); }
done
userprof=/etc/ringfence/profiles/rf-test-$$.toml
printf '# an operator profile (package.sh)\n' >"$userprof" && MADE+=("$userprof")
localaa=""
if [ -d /etc/apparmor.d/local ] && [ ! -e /etc/apparmor.d/local/ringfence ]; then
	localaa=/etc/apparmor.d/local/ringfence
	printf '# the operator'"'"'s additions (package.sh)\n' >"$localaa" && MADE+=("$localaa")
fi
# the daemon, started as its unit starts it, with that configuration
PATH="$SD/bin:$PATH" systemctl start ringfence.service
pid1=$(daemon_pid)
check "the older daemon runs ($pid1)" daemon_answers
/usr/bin/ringfence audit head --state-dir "$WS.state" >"$WS.head" 2>/dev/null
check "the older binary anchors the audit chain's head" test -s "$WS.head"
keys() { (cd "$WS.state" && find secrets.key audit/key audit/key.pub secrets -type f -print0 | sort -z | xargs -0 sha256sum); }
keys >"$WS.keys"
check "... beside its keys and secret store" test -s "$WS.keys"

# the current package over it
with_sd apt-get "${SD_APT[@]}" -y -q -o Dpkg::Options::=--force-confold install "$deb" >>"$WS.apt" 2>&1
rc=$?
is "$rc" 0 "apt upgrades it to the current package"
[ "$rc" = 0 ] || diag "$(tail -n 20 "$WS.apt")"
is "$(dpkg-query -W -f='${Version}' ringfence)" "$newv" "... $newv is installed"
check "... its postinst asked for a try-restart of the daemon" grep -qx 'try-restart ringfence.service' "$SD/log"
check "... and nothing stopped it for good" sh -c "! grep -qx 'stop ringfence.service' '$SD/log'"
pid2=$(daemon_pid)
check "the daemon was restarted ($pid1 -> $pid2)" test -n "$pid2" -a "$pid2" != "$pid1"
check "... the older one is gone" sh -c "! kill -0 '$pid1' 2>/dev/null"
check "... the new one runs the installed binary (not a deleted file)" test "/proc/$pid2/exe" -ef /usr/bin/ringfence
check "... and answers on its socket with the operator's configuration" daemon_answers
is "$(cat /etc/ringfence/daemon.json)" "$conf" "the operator's changed conffile is kept"
keys >"$WS.keys2"
is "$(cat "$WS.keys2")" "$(cat "$WS.keys")" "the state dir's keys and secret store are the same files"
out=$(/usr/bin/ringfence audit verify --state-dir "$WS.state" --head "$WS.head" 2>&1)
is "$?" 0 "the audit chain verifies against the head the older binary anchored"
(cd "$WS" && /usr/bin/ringfence run --state-dir "$WS.state" --secret K=store:kept -- sh -c 'test "$K" = upgrade-kept-value-0123456789 && echo after') >"$WS.out" 2>&1
is "$(tail -n 1 "$WS.out")" "after" "a run of the new binary gets the secret the older one stored"
out=$(/usr/bin/ringfence audit verify --state-dir "$WS.state" --head "$WS.head" 2>&1)
is "$?" 0 "... and the chain still verifies with the new binary's records on it"
if [ -d /etc/apparmor.d ]; then
	cmp -s /etc/apparmor.d/ringfence /usr/share/ringfence/apparmor/ringfence.abi3 ||
		cmp -s /etc/apparmor.d/ringfence /usr/share/ringfence/apparmor/ringfence.abi4
	is "$?" 0 "the AppArmor profile is the current package's"
fi

# purge: the package goes, the operator's files stay
pkgfiles=$(dpkg -L ringfence | grep -v '^/\.$')
with_sd apt-get "${SD_APT[@]}" -y -q purge ringfence >>"$WS.apt" 2>&1
is "$?" 0 "apt purges it"
PKG_INSTALLED=0
check "... its prerm stopped the daemon" grep -qx 'stop ringfence.service' "$SD/log"
check "... which is gone" sh -c "! kill -0 '$pid2' 2>/dev/null"
left=""
for f in $pkgfiles /etc/apparmor.d/ringfence /etc/ringfence/daemon.json; do
	[ -f "$f" ] && left="$left $f"
done
is "$left" "" "... none of its files is left"
unlike "$(dpkg-query -W -f='${Status}' ringfence 2>/dev/null)" 'ok (installed|config-files|half|unpacked)' \
	"... nor its dpkg record (purged, not config-files)"
check "... the operator's profile in /etc/ringfence/profiles is kept" test -f "$userprof"
if [ -n "$localaa" ]; then
	check "... and the AppArmor local include" test -f "$localaa"
fi
is "$(keys)" "$(cat "$WS.keys")" "... the state dir's keys and secret store are untouched"
out=$("$RF_BIN" audit verify --state-dir "$WS.state" --head "$WS.head" 2>&1)
is "$?" 0 "... and its audit chain still verifies (with the build's binary)"

done_testing
