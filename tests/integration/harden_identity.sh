#!/bin/bash
# tests/integration/harden_identity.sh — who the run is (plan_identity() in
# src/sandbox/plan.c, hostuid.c, the id maps and idmapped trees in launch.c).
#
# Started by root, a run's processes never have host uid 0: each run gets
# its own host uid from [RF_RUN_UID_BASE, +RF_RUN_UID_COUNT) (meson options,
# read from the build's config.h), two runs at once get two uids. Inside,
# the run is the workspace owner (root-owned workspace: uid 0; a workspace
# owned by 65534: 65534), and what it writes lands owned by that owner on
# the host, never by the run's host uid; git's ownership check passes.
# Attacks, each with the errno of the layer that stops it and a legitimate
# control beside it:
#  - root-only host files (/etc/ssl/private, a 0600 file bound --ro) are
#    EACCES: the run is not host root (test build, RINGFENCE_TEST_SKIP=idmap:
#    the same read succeeds — the identity was the layer);
#  - a --rw path owned by someone else than the workspace owner would
#    collect files owned by the run's host uid: refused with 125;
#  - ringfence's command line (an --env value) does not show in
#    /proc/1/cmdline inside (wipe_cmdline());
#  - planting a setuid/setgid file in a root-owned workspace (chmod, open,
#    mkdir modes) is EPERM from seccomp; with the filter left out (test
#    build, RINGFENCE_TEST_SKIP=seccomp) the bit does reach the host on a
#    root-owned file — why the filter is needed.
# Rootless (uid 65534): the run is 65534 inside and on the host.
# A run uid that an account uses (an NSS userdb drop-in on the uid the test
# build's RINGFENCE_TEST_RUN_UID points the search at) is refused with 125
# before the command starts; the same uid without the account runs.
# Fail closed (test build): RINGFENCE_TEST_FAIL=idmap refuses with 125 and
# one line naming the idmap step.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

# ---- helpers ------------------------------------------------------------------------

have_test_bin=0
[ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] && have_test_bin=1

# The configured run uid range, from the build's config.h (meson leaves the
# binary in BUILD_DIR or BUILD_DIR/src/cli); the meson defaults otherwise.
UID_BASE=1879048192
UID_COUNT=65536
for cfg in "$(dirname "$RF_BIN")/config.h" "$(dirname "$RF_BIN")/../../config.h"; do
	[ -f "$cfg" ] || continue
	b=$(sed -n 's/^#define RF_RUN_UID_BASE \([0-9][0-9]*\).*/\1/p' "$cfg")
	c=$(sed -n 's/^#define RF_RUN_UID_COUNT \([0-9][0-9]*\).*/\1/p' "$cfg")
	[ -n "$b" ] && UID_BASE=$b
	[ -n "$c" ] && UID_COUNT=$c
	break
done
UID_END=$((UID_BASE + UID_COUNT))
diag "run uid range: [$UID_BASE, $UID_END)"

# tb_run ENV... -- RUN-ARGS... — rf_run with the test build, ENV set for
# ringfence itself.
tb_run() {
	local -a env=()
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	RF_ENV=("${env[@]}")
	RF_RUN_BIN=$RF_TEST_BIN rf_run "$@"
	RF_ENV=()
}

# one_line TEXT — TEXT is exactly one line.
one_line() { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | grep -c '')" = 1 ]; }

# Held runs: a run whose command creates $WS/NAME.ready, then waits until
# $WS/NAME.stop exists, so its processes can be inspected from the host.
declare -A H_PID=() H_OUT=() H_ERR=() H_WS=()
# shellcheck disable=SC2016 # expanded by the shell inside the run
HOLD_SH='touch "$1.ready" || exit 1; while [ ! -e "$1.stop" ]; do sleep 0.05; done'

# hold_start NAME [RUN-OPTIONS...] — start the held run; returns 1 if it
# never became ready (then it is stopped and RF_* describe it).
hold_start() {
	local name=$1
	shift
	rf_start "$@" -- /bin/sh -c "$HOLD_SH" sh "$WS/$name"
	register_pid "$RF_PID"
	H_PID[$name]=$RF_PID
	H_OUT[$name]=$_RF_OUTF
	H_ERR[$name]=$_RF_ERRF
	H_WS[$name]=$WS
	for _ in $(seq 1 1200); do
		[ -e "$WS/$name.ready" ] && return 0
		kill -0 "$RF_PID" 2>/dev/null || break
		sleep 0.05
	done
	hold_stop "$name"
	return 1
}

# hold_stop NAME — let the held run end; sets RF_RC, RF_OUT, RF_ERR.
hold_stop() {
	local name=$1
	touch "${H_WS[$name]}/$name.stop"
	RF_PID=${H_PID[$name]}
	_RF_OUTF=${H_OUT[$name]}
	_RF_ERRF=${H_ERR[$name]}
	rf_wait
}

# run_procs PID — every descendant of PID (the supervisor) that belongs to
# the run, one line each: "PID Uid(r e s fs) Gid(r e s fs) Groups...". The
# run's processes are those in another network namespace than the
# supervisor's; the run's egress process (ringfence's, outside the
# sandbox, in the host's namespace) is not one of them.
run_procs() {
	local c sup_net
	sup_net=$(readlink /proc/"$1"/ns/net 2>/dev/null)
	# shellcheck disable=SC2013 # the children files hold words (pids)
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		[ "$(readlink /proc/"$c"/ns/net 2>/dev/null)" = "$sup_net" ] && [ -z "${RUN_PROCS_INNER:-}" ] && continue
		awk -v p="$c" '/^Uid:/ {u = $2" "$3" "$4" "$5}
			/^Gid:/ {g = $2" "$3" "$4" "$5}
			/^Groups:/ {$1 = ""; gr = $0}
			END {if (u != "") print p, u, g, "groups:" gr}' /proc/"$c"/status 2>/dev/null
		RUN_PROCS_INNER=1 run_procs "$c"
	done
}

# run_host_uid NAME [any-groups] — HOST_UID: the one host uid every process
# of the held run has (real, effective, saved and fs uid and gid alike, and
# no supplementary groups unless any-groups is given), or "" with
# HOST_PROCS showing what was found. Needs the run's init and command.
run_host_uid() {
	local uids gids n
	HOST_PROCS=$(run_procs "${H_PID[$1]}")
	HOST_UID=""
	n=$(printf '%s\n' "$HOST_PROCS" | grep -c .)
	[ "$n" -ge 2 ] || return 1
	uids=$(printf '%s\n' "$HOST_PROCS" | awk '{for (i = 2; i <= 5; i++) print $i}' | sort -u)
	gids=$(printf '%s\n' "$HOST_PROCS" | awk '{for (i = 6; i <= 9; i++) print $i}' | sort -u)
	[ "$(printf '%s\n' "$uids" | grep -c .)" = 1 ] || return 1
	if [ $# -lt 2 ]; then
		# the host gid is the same number; no supplementary groups
		# (init drops root's)
		[ "$gids" = "$uids" ] || return 1
		printf '%s\n' "$HOST_PROCS" | grep -qv 'groups: *$' && return 1
	fi
	HOST_UID=$uids
}

# in_range UID — UID lies in the configured run uid range.
in_range() { [ "$1" -ge "$UID_BASE" ] && [ "$1" -lt "$UID_END" ]; }

# ---- rootless callers only ----------------------------------------------------------

if ! is_root; then
	rf_probe id
	is "$RF_OUT" "ok uid=$RF_UID gid=$RF_GID euid=$RF_UID egid=$RF_GID" \
		"rootless: the run is the caller's own uid/gid inside"
	if hold_start rl0; then
		# (a rootless run keeps the caller's supplementary groups)
		run_host_uid rl0 any-groups
		is "$HOST_UID" "$RF_UID" "rootless: the run's processes have the caller's host uid ($(printf '%s' "$HOST_PROCS" | tr '\n' ';'))"
		hold_stop rl0
	else
		not_ok "rootless: a held run starts" "$(_rf_last_run_diag)"
	fi
	skip "root-started runs" "the tests do not run as root"
	done_testing
fi

# ---- a root-started run never has host uid 0 ------------------------------------------

if hold_start a; then
	if run_host_uid a; then
		ok "root run: every process of the run has one host uid (uid = gid, no supplementary groups)"
	else
		not_ok "root run: every process of the run has one host uid (uid = gid, no supplementary groups)" \
			"processes (pid uid×4 gid×4 groups): $HOST_PROCS"
	fi
	UID_A=$HOST_UID
	isnt "${UID_A:-none}" 0 "root run: the run's host uid is not 0"
	if [ -n "$UID_A" ] && in_range "$UID_A"; then
		ok "root run: its host uid $UID_A lies in the configured range [$UID_BASE, $UID_END)"
	else
		not_ok "root run: its host uid lies in the configured range [$UID_BASE, $UID_END)" "got: ${UID_A:-none}"
	fi
	if [ -n "$UID_A" ] && ! getent passwd "$UID_A" >/dev/null; then
		ok "root run: no passwd entry names the run's host uid"
	else
		not_ok "root run: no passwd entry names the run's host uid" "uid ${UID_A:-none}: $(getent passwd "${UID_A:-x}")"
	fi
	# the supervisor itself stays root (it cleans up as root); it is no
	# part of the run
	is "$(awk '/^Uid:/ {print $2}' /proc/"${H_PID[a]}"/status 2>/dev/null)" 0 \
		"control: the supervisor (outside the run) is host root"

	# Two runs at once get different host uids.
	if hold_start b; then
		run_host_uid b
		UID_B=$HOST_UID
		if [ -n "$UID_B" ] && in_range "$UID_B" && [ "$UID_B" != "$UID_A" ]; then
			ok "two runs at once: different host uids ($UID_A, $UID_B), both in the range"
		else
			not_ok "two runs at once: different host uids" "a: ${UID_A:-none}" "b: ${UID_B:-none} ($HOST_PROCS)"
		fi
		hold_stop b
		is "$RF_RC" 0 "the second held run ends with exit 0"
	else
		not_ok "two runs at once: the second run starts" "$(_rf_last_run_diag)"
	fi
	hold_stop a
	is "$RF_RC" 0 "the held run ends with exit 0"
else
	not_ok "root run: a held run starts" "$(_rf_last_run_diag)"
fi

# ---- inside: the workspace owner; files land owned by the owner ------------------------

rf_probe id
is "$RF_OUT" "ok uid=0 gid=0 euid=0 egid=0" "root-owned workspace: the run is uid/gid 0 inside"
rf_run -- /bin/sh -c 'id -u; id -un'
is "$RF_OUT" "0
root" "root-owned workspace: id -u is 0, the name is root"
rf_run -- /bin/sh -c "echo data >'$WS/own-file' && mkdir '$WS/own-dir' && echo x >'$WS/own-dir/f'"
is "$RF_RC" 0 "root-owned workspace: writes work (control)"
is "$(stat -c %u:%g "$WS/own-file" "$WS/own-dir" "$WS/own-dir/f" 2>&1 | sort -u)" "0:0" \
	"root-owned workspace: new files and directories are owned 0:0 on the host (the owner, not the run's uid)"

# A workspace owned by 65534, started by root: 65534 inside, files owned by it.
saved_ws=$WS
rf_mktemp /tmp
WS=$REPLY
install_probe
chown -R 65534:65534 "$WS"
rf_probe id
is "$RF_OUT" "ok uid=65534 gid=65534 euid=65534 egid=65534" "workspace owned by 65534: the run is uid/gid 65534 inside"
rf_run -- /bin/sh -c "id -u && echo x >'$WS/nobody-file' && mkdir '$WS/nobody-dir'"
is "$RF_OUT" 65534 "workspace owned by 65534: id -u is 65534"
is "$(stat -c %u:%g "$WS/nobody-file" "$WS/nobody-dir" 2>&1 | sort -u)" "65534:65534" \
	"workspace owned by 65534: new files are owned 65534:65534 on the host"
if hold_start n; then
	run_host_uid n
	if [ -n "$HOST_UID" ] && in_range "$HOST_UID"; then
		ok "workspace owned by 65534: the run's host uid is still a run uid ($HOST_UID), not 65534"
	else
		not_ok "workspace owned by 65534: the run's host uid is a run uid" "$HOST_PROCS"
	fi
	is "$(stat -c %u:%g "$WS/n.ready")" "65534:65534" \
		"... and the file it wrote meanwhile is owned by the workspace owner, not by $HOST_UID"
	hold_stop n
else
	not_ok "workspace owned by 65534: a held run starts" "$(_rf_last_run_diag)"
fi
WS=$saved_ws
PROBE=$WS/rf-probe

# ---- git's ownership check -----------------------------------------------------------

if command -v git >/dev/null; then
	rf_mktemp /tmp
	gws=$REPLY
	git -C "$gws" init -q
	echo one >"$gws/a"
	git -C "$gws" add a
	git -C "$gws" -c user.name=host -c user.email=host@example.org commit -qm host
	saved_ws=$WS
	WS=$gws
	# (.git/config is protected by default: identity by -c, not git config)
	rf_run -- /bin/sh -c 'git status --porcelain && echo two >>a &&
		git -c user.name=run -c user.email=run@example.org commit -qam run &&
		git log --format=%s | tr "\n" " " &&
		git init -q sub && cd sub && echo x >x && git add x &&
		git -c user.name=run -c user.email=run@example.org commit -qm inner && echo inner-ok'
	WS=$saved_ws
	is "$RF_RC" 0 "git in a root-owned workspace: status, commit and a new repository work"
	unlike "$RF_ERR" 'dubious ownership' "... git's ownership check passes (no 'dubious ownership')"
	like "$RF_OUT" 'run host' "... both commits are in the log"
	is "$(git -C "$gws" log -1 --format=%s)" run "... and the commit reached the host repository"
else
	skip "git in a root-owned workspace" "git is not installed"
fi

# ---- root-only host files: the run is not host root -------------------------------------

if [ -d /etc/ssl/private ]; then
	rf_probe ls /etc/ssl/private
	is "$RF_OUT" "errno=EACCES" "/etc/ssl/private (mode $(stat -c %a /etc/ssl/private), root's) cannot be listed inside: EACCES"
	secret_file=$(find /etc/ssl/private -maxdepth 1 -type f 2>/dev/null | head -n 1)
	if [ -n "$secret_file" ]; then
		rf_probe read "$secret_file"
		is "$RF_OUT" "errno=EACCES" "a file under /etc/ssl/private cannot be read inside: EACCES"
	else
		skip "a file under /etc/ssl/private cannot be read" "the host has no file there"
	fi
	rf_probe ls /etc/ssl/certs
	like "$RF_OUT" '^ok ' "control: /etc/ssl/certs is listable inside"
else
	skip "/etc/ssl/private is unreadable inside" "the host has no /etc/ssl/private"
fi

rf_mktemp /tmp
rodir=$REPLY
chmod 0755 "$rodir"
printf 'root-only\n' >"$rodir/secret"
chmod 0600 "$rodir/secret"
printf 'public\n' >"$rodir/public"
chmod 0644 "$rodir/public"
rf_run --ro "$rodir/secret" -- "$PROBE" read "$rodir/secret"
is "$RF_OUT" "errno=EACCES" "a root-owned 0600 file bound --ro: EACCES (the run is not host root)"
rf_run --ro "$rodir" -- /bin/sh -c "'$PROBE' read '$rodir/secret'; '$PROBE' read '$rodir/public'; '$PROBE' stat '$rodir/secret'"
like "$RF_OUT" "^errno=EACCES
ok public.
ok mode=0600 type=file uid=65534 " \
	"a --ro directory: its 0600 file EACCES, its 0644 file readable (control), the owner shows as nobody"
if [ "$have_test_bin" = 1 ]; then
	tb_run RINGFENCE_TEST_SKIP=idmap -- --ro "$rodir" -- "$PROBE" read "$rodir/secret"
	is "$RF_OUT" "ok root-only." "RINGFENCE_TEST_SKIP=idmap (the run is host root in its namespace): the same read succeeds"
else
	skip "RINGFENCE_TEST_SKIP=idmap: the root-only read succeeds" "no test build (RF_TEST_BIN)"
fi

# ---- --rw of another user's path: the run writes as that user ----------------------------------

rf_mktemp /tmp
rw_other=$REPLY
chown 65534:65534 "$rw_other"
rf_run --rw "$rw_other" -- "$PROBE" write "$rw_other/from-run" x
is "$RF_OUT" "ok 1" "--rw DIR owned by uid 65534 (the workspace is root's): writable"
is "$(stat -c %u:%g "$rw_other/from-run" 2>&1)" "65534:65534" \
	"... the file lands as uid 65534 on the host (idmapped from its owner), never as the run's host uid"

rf_mktemp /tmp
rw_root=$REPLY
rf_run --rw "$rw_root" -- "$PROBE" write "$rw_root/from-run" x
is "$RF_OUT" "ok 1" "control: --rw DIR owned by root like the workspace is writable"
is "$(stat -c %u:%g "$rw_root/from-run" 2>&1)" "0:0" "control: ... and the file is owned 0:0 on the host (idmapped like the workspace)"

# ---- ringfence's command line is not visible inside --------------------------------------

secret_value="rf-secretish-$$-$RANDOM$RANDOM"
rf_run --env "SECRETISH=$secret_value" -- /bin/sh -c "printf '%s\n' \"\$SECRETISH\"
	'$PROBE' cat /proc/1/cmdline >'$WS/cmdline.raw'; echo \"rc=\$?\""
is "$RF_OUT" "$secret_value
rc=0" "control: --env SECRETISH reaches the command, and /proc/1/cmdline is readable inside"
cmd_bytes=$(tail -c +4 "$WS/cmdline.raw" | wc -c)
cmd_text=$(tail -c +4 "$WS/cmdline.raw" | tr -d '\0')
is "$cmd_text" "" "/proc/1/cmdline inside holds only zero bytes ($cmd_bytes of them): ringfence's arguments are wiped"
if grep -qF -- "$secret_value" "$WS/cmdline.raw"; then
	not_ok "the --env value does not appear in /proc/1/cmdline"
else
	ok "the --env value does not appear in /proc/1/cmdline"
fi
# From the host too: init's memory holds no trace, while the supervisor's
# own command line (outside the run) does name the value (the control).
if hold_start c --env "SECRETISH=$secret_value"; then
	init_pid=$(cat /proc/"${H_PID[c]}"/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | head -n 1)
	if tr '\0' ' ' </proc/"${H_PID[c]}"/cmdline | grep -qF -- "$secret_value"; then
		ok "control: the supervisor's command line (host side) has the value"
	else
		not_ok "control: the supervisor's command line (host side) has the value" "$(tr '\0' ' ' </proc/"${H_PID[c]}"/cmdline)"
	fi
	init_bytes=$(wc -c </proc/"${init_pid:-none}"/cmdline 2>/dev/null)
	init_text=$(tr -d '\0' </proc/"${init_pid:-none}"/cmdline 2>&1)
	if [ "${init_bytes:-0}" -gt 0 ] && [ -z "$init_text" ]; then
		ok "the run's init ($init_pid) seen from the host: cmdline is $init_bytes zero bytes"
	else
		not_ok "the run's init seen from the host: cmdline is all zeros" "pid ${init_pid:-none}: $init_bytes bytes, text: $init_text"
	fi
	hold_stop c
else
	not_ok "a held run with --env starts" "$(_rf_last_run_diag)"
fi

# ---- planting setuid/setgid files in a root-owned workspace ----------------------------------

# python3 inside: "ok" or "errno=NAME" for os.mkdir / os.open(O_CREAT) with a mode.
MODE_PY='import errno, os, sys
op, path, mode = sys.argv[1], sys.argv[2], int(sys.argv[3], 8)
try:
    if op == "mkdir":
        os.mkdir(path, mode)
    elif op == "creat":
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
    print("ok")
except OSError as e:
    print("errno=" + errno.errorcode[e.errno])'
printf '%s\n' "$MODE_PY" >"$WS/mode.py"
: >"$WS/plant"
chmod 0644 "$WS/plant"
rf_run -- /bin/sh -c "
	'$PROBE' chmod '$WS/plant' 4755 | sed 's/^/chmod-4755 /'
	'$PROBE' chmod '$WS/plant' 2755 | sed 's/^/chmod-2755 /'
	'$PROBE' chmod '$WS/plant' 6755 | sed 's/^/chmod-6755 /'
	python3 '$WS/mode.py' mkdir '$WS/plant-dir' 2775 | sed 's/^/mkdir-2775 /'
	mkdir -m 2775 '$WS/plant-dir2' 2>/dev/null; echo \"mkdir-m-2775 rc=\$?\"
	python3 '$WS/mode.py' creat '$WS/plant-new' 4755 | sed 's/^/creat-4755 /'
	'$PROBE' chmod '$WS/plant' 0755 | sed 's/^/chmod-0755 /'
	python3 '$WS/mode.py' mkdir '$WS/plant-ok-dir' 0775 | sed 's/^/mkdir-0775 /'"
is "$RF_OUT" "chmod-4755 errno=EPERM
chmod-2755 errno=EPERM
chmod-6755 errno=EPERM
mkdir-2775 errno=EPERM
mkdir-m-2775 rc=1
creat-4755 errno=EPERM
chmod-0755 ok
mkdir-0775 ok" "setuid/setgid modes by chmod, mkdir (python and mkdir -m) and open(O_CREAT) -> EPERM; plain modes work (control)"
found=$(find "$WS" -perm /6000 2>/dev/null)
is "$found" "" "no file or directory with a setuid/setgid bit reached the host workspace"
check "the refused mkdir and creat left nothing behind" test ! -e "$WS/plant-dir" -a ! -e "$WS/plant-dir2" -a ! -e "$WS/plant-new"
is "$(stat -c %a "$WS/plant")" 755 "control: the plain chmod reached the host"

if [ "$have_test_bin" = 1 ]; then
	: >"$WS/plant-noseccomp"
	tb_run RINGFENCE_TEST_SKIP=seccomp -- "$PROBE" chmod "$WS/plant-noseccomp" 4755
	is "$RF_OUT" "ok" "RINGFENCE_TEST_SKIP=seccomp: chmod 4755 inside succeeds"
	got=$(stat -c '%u:%g %a' "$WS/plant-noseccomp" 2>&1)
	# Remove the planted setuid-root file at once (it is ours, by name).
	rm -f -- "$WS/plant-noseccomp"
	is "$got" "0:0 4755" "... and on the host it is a setuid file owned by root: what the filter prevents"
	check "the planted file is removed again" test ! -e "$WS/plant-noseccomp"
else
	skip "RINGFENCE_TEST_SKIP=seccomp: the setuid bit reaches the host" "no test build (RF_TEST_BIN)"
fi

# ---- fail closed: the idmap step -----------------------------------------------------------

if [ "$have_test_bin" = 1 ]; then
	tb_run RINGFENCE_TEST_FAIL=idmap -- "$PROBE" write "$WS/marker-idmap"
	is "$RF_RC" 125 "RINGFENCE_TEST_FAIL=idmap: exit 125"
	check "RINGFENCE_TEST_FAIL=idmap: the command did not run" test ! -e "$WS/marker-idmap"
	if one_line "$RF_ERR" && [[ $RF_ERR =~ ^ringfence:\  ]]; then
		ok "RINGFENCE_TEST_FAIL=idmap: one stderr line"
	else
		not_ok "RINGFENCE_TEST_FAIL=idmap: one stderr line" "stderr: $RF_ERR"
	fi
	like "$RF_ERR" '(^|[^a-z])idmap([^a-z]|$)' "RINGFENCE_TEST_FAIL=idmap: the stderr line names idmap"
else
	skip "RINGFENCE_TEST_FAIL=idmap refuses the run" "no test build (RF_TEST_BIN)"
fi

# ---- a run uid an account uses is refused before the command starts ----------------------
# The range is the operator's to keep free; an account in it (here a systemd
# userdb drop-in, an NSS source besides files) must stop the run: 125, one
# line naming the uid and the account, and the command never ran. The test
# build picks where the uid search starts (RINGFENCE_TEST_RUN_UID) so the
# account is on the uid the run gets.

if [ "$have_test_bin" = 1 ] && [ "$(id -u)" = 0 ] && getent passwd root >/dev/null &&
	grep -q '^passwd:.*systemd' /etc/nsswitch.conf 2>/dev/null; then
	acct_uid=$((UID_BASE + UID_COUNT - 1 - ($$ % 1000)))
	acct_name="rftest$$"
	made_userdb=0
	[ -d /run/userdb ] || { mkdir -p /run/userdb && made_userdb=1; }
	printf '{"userName":"%s","uid":%d,"gid":%d,"disposition":"regular"}\n' \
		"$acct_name" "$acct_uid" "$acct_uid" >"/run/userdb/$acct_name.user"
	ln -sf "$acct_name.user" "/run/userdb/$acct_uid.user"
	if getent passwd "$acct_uid" >/dev/null; then
		tb_run "RINGFENCE_TEST_RUN_UID=$acct_uid" -- -- sh -c "touch '$WS/marker-account-uid'"
		is "$RF_RC" 125 "a run uid ($acct_uid) that an account uses: refused with 125"
		if one_line "$RF_ERR"; then
			ok "... one stderr line"
		else
			not_ok "... one stderr line" "stderr: $RF_ERR"
		fi
		like "$RF_ERR" "run uid $acct_uid belongs to the account '$acct_name'" "... naming the uid and the account"
		check "... and the command did not run" test ! -e "$WS/marker-account-uid"
		tb_run "RINGFENCE_TEST_RUN_UID=$acct_uid" -- --detach -- sh -c "touch '$WS/marker-account-detach'"
		is "$RF_RC" 125 "... with --detach too: the caller gets 125, not a run id (the uid is vetted before it goes)"
		check "... and that command did not run either" test ! -e "$WS/marker-account-detach"
	else
		skip "a run uid an account uses is refused" "NSS does not see the userdb drop-in here"
	fi
	rm -f "/run/userdb/$acct_uid.user" "/run/userdb/$acct_name.user"
	# a group on the run's gid (the same number) is refused the same way
	printf '{"groupName":"%s","gid":%d}\n' "$acct_name" "$acct_uid" >"/run/userdb/$acct_name.group"
	ln -sf "$acct_name.group" "/run/userdb/$acct_uid.group"
	if getent group "$acct_uid" >/dev/null; then
		tb_run "RINGFENCE_TEST_RUN_UID=$acct_uid" -- -- sh -c "touch '$WS/marker-group-gid'"
		is "$RF_RC" 125 "a run gid ($acct_uid) that a group uses: refused with 125"
		like "$RF_ERR" "run gid $acct_uid belongs to the group '$acct_name'" "... naming the gid and the group"
		check "... and the command did not run" test ! -e "$WS/marker-group-gid"
	else
		skip "a run gid a group uses is refused" "NSS does not see the userdb group drop-in here"
	fi
	rm -f "/run/userdb/$acct_uid.group" "/run/userdb/$acct_name.group"
	[ "$made_userdb" = 1 ] && rmdir /run/userdb
	# control: the same uid without the account is the run's
	tb_run "RINGFENCE_TEST_RUN_UID=$acct_uid" -- -- sh -c "touch '$WS/marker-free-uid'"
	is "$RF_RC" 0 "control: the same run uid with no account: the run starts and exits 0"
	check "... and the command ran" test -e "$WS/marker-free-uid"
else
	skip "a run uid an account uses is refused" "needs the test build, root and NSS with systemd userdb"
fi

# ---- rootless (uid 65534) -----------------------------------------------------------------

new_workspace
if as_user_setup; then
	export RF_AS_USER=1
	rf_probe id
	is "$RF_OUT" "ok uid=65534 gid=65534 euid=65534 egid=65534" "rootless (uid 65534): the run is 65534 inside"
	if hold_start u; then
		run_host_uid u
		is "$HOST_UID" 65534 "rootless: every process of the run has host uid/gid 65534 ($(printf '%s' "$HOST_PROCS" | tr '\n' ';'))"
		hold_stop u
		is "$RF_RC" 0 "rootless: the held run ends with exit 0"
	else
		not_ok "rootless: a held run starts" "$(_rf_last_run_diag)"
	fi
	rf_run -- "$PROBE" write "$WS/rootless-file" x
	is "$(stat -c %u:%g "$WS/rootless-file" 2>&1)" "65534:65534" "rootless: files it writes are owned 65534:65534 on the host"
	unset RF_AS_USER
else
	skip "rootless runs" "the tests do not run as root"
fi

done_testing
