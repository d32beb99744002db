#!/bin/bash
# tests/integration/harden_landlock.sh — Landlock, the run's second
# filesystem layer (src/sandbox/landlock.c).
#
# The mount namespace already hides most of the host, so each attack here is
# one the mounts (and file permissions) would allow and only Landlock
# refuses — with EACCES for files, EPERM for its scopes — and, with a test
# build, the same attack succeeds once Landlock is left out
# (RINGFENCE_TEST_SKIP=landlock): the test can go red.
#  - /dev is a writable tmpfs the run user owns; Landlock keeps it read-only.
#  - A --rw bind outside every writable place, with its Landlock rule
#    withheld (test build: RINGFENCE_TEST_LANDLOCK_NO_RULE=PATH): reading,
#    writing, creating and executing there are refused by Landlock alone.
#  - Scopes (ABI >= 6): the command cannot signal the run's init (pid 1) and
#    cannot connect to an abstract unix socket created outside its domain.
# Legitimate work must keep working: the workspace (write, rename across
# directories, links, truncate, fifos, sockets), /tmp, HOME, /dev/shm,
# python3, pipelines, git, /dev/null, /proc/self writes, terminals (a pty
# session and a nested script(1)), signals to the command's own children.
# Fail closed: no Landlock (test build: RINGFENCE_TEST_LANDLOCK_ABI=0) and a
# failing Landlock step refuse the run with 125 naming Landlock. Older ABIs
# (test build: RINGFENCE_TEST_LANDLOCK_ABI=1..6) still run. Rootless runs too.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

# The kernel's Landlock ABI, asked directly (landlock_create_ruleset(NULL, 0,
# LANDLOCK_CREATE_RULESET_VERSION)); 0 when there is none.
HOST_ABI=$(python3 -c '
import ctypes
r = ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)
print(r if r > 0 else 0)' 2>/dev/null || echo 0)
diag "kernel Landlock ABI: $HOST_ABI"

have_test_bin=0
[ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] && have_test_bin=1

# tb_run ENV... -- RUN-ARGS... — rf_run with the test build and ENV set for
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

# errno_of_rename FROM TO — python3 inside: "ok" or "errno=NAME" of rename(2).
RENAME_PY='import errno, os, sys
try:
    os.rename(sys.argv[1], sys.argv[2]); print("ok")
except OSError as e:
    print("errno=" + errno.errorcode[e.errno])'

# ---- no Landlock: the run is refused -------------------------------------------------

if [ "$HOST_ABI" -lt 1 ]; then
	rf_run -- "$PROBE" write "$WS/marker-nolandlock"
	is "$RF_RC" 125 "this kernel has no Landlock: the run is refused (exit 125)"
	like "$RF_ERR" '^ringfence: Landlock is not available' "... saying Landlock is not available"
	check "... and the command did not run" test ! -e "$WS/marker-nolandlock"
	done_testing
fi

if [ "$have_test_bin" = 1 ]; then
	tb_run RINGFENCE_TEST_LANDLOCK_ABI=0 -- "$PROBE" write "$WS/marker-abi0"
	is "$RF_RC" 125 "no Landlock (RINGFENCE_TEST_LANDLOCK_ABI=0): exit 125"
	n_lines=$(printf '%s' "$RF_ERR" | grep -c '')
	if [ "$n_lines" = 1 ] && [[ $RF_ERR =~ ^ringfence:\ Landlock\ is\ not\ available ]]; then
		ok "no Landlock: one stderr line, 'Landlock is not available'"
	else
		not_ok "no Landlock: one stderr line, 'Landlock is not available'" "stderr: $RF_ERR"
	fi
	check "no Landlock: the command did not run" test ! -e "$WS/marker-abi0"

	tb_run RINGFENCE_TEST_FAIL=landlock -- "$PROBE" write "$WS/marker-llfail"
	is "$RF_RC" 125 "the Landlock step fails: exit 125"
	like "$RF_ERR" '^ringfence: [^'$'\n'']*Landlock[^'$'\n'']*\(landlock\)' "... the message names Landlock (step 'landlock')"
	check "... and the command did not run" test ! -e "$WS/marker-llfail"
else
	skip "no Landlock refuses the run" "no test build (RF_TEST_BIN)"
	skip "a failing Landlock step refuses the run" "no test build (RF_TEST_BIN)"
fi
if [ "${RF_BIN_IS_TEST_BUILD:-0}" != 1 ]; then
	RF_ENV=(RINGFENCE_TEST_LANDLOCK_ABI=0)
	rf_run -- "$PROBE" write "$WS/marker-release"
	RF_ENV=()
	is "$RF_RC" 0 "the release binary ignores RINGFENCE_TEST_LANDLOCK_ABI=0"
else
	skip "the release binary ignores RINGFENCE_TEST_LANDLOCK_ABI=0" "RF_BIN is a test build here"
fi

# ---- second layer: /dev is writable by the mounts, read-only by Landlock --------------

rf_probe create /dev/rf-landlock
is "$RF_OUT" "errno=EACCES" "create a file in /dev (a tmpfs the run user owns) -> EACCES"
rf_probe mkdir /dev/rf-landlock-dir
is "$RF_OUT" "errno=EACCES" "mkdir in /dev -> EACCES"
rf_probe ls /dev
like "$RF_OUT" '^ok .*null' "control: /dev can still be listed"
if [ "$have_test_bin" = 1 ]; then
	tb_run RINGFENCE_TEST_SKIP=landlock -- "$PROBE" create /dev/rf-landlock
	is "$RF_OUT" "ok" "RINGFENCE_TEST_SKIP=landlock: the same create in /dev succeeds (Landlock was the layer)"
else
	skip "RINGFENCE_TEST_SKIP=landlock: create in /dev succeeds" "no test build"
fi

# ---- second layer: a --rw bind with no Landlock rule ---------------------------------
#
# The bind must lie outside every writable place of the run (a rule on /tmp,
# /var/tmp or HOME would cover it), so it is made under a host directory
# that the run's root shows only as an empty mount point.

xdir=""
for parent in /srv /mnt /opt /media; do
	if [ -d "$parent" ] && [ -w "$parent" ] && [ ! -L "$parent" ]; then
		rf_mktemp "$parent"
		xdir=$REPLY
		break
	fi
done
if [ "$have_test_bin" != 1 ]; then
	skip "a --rw bind without a Landlock rule" "no test build (RF_TEST_BIN)"
elif [ -z "$xdir" ]; then
	skip "a --rw bind without a Landlock rule" "no writable /srv, /mnt, /opt or /media to bind from"
else
	chmod 0755 "$xdir"
	printf 'bound-secret\n' >"$xdir/file"
	chmod 0644 "$xdir/file"
	cp "$RF_PROBE" "$xdir/rf-probe" && chmod 0755 "$xdir/rf-probe"
	NR=RINGFENCE_TEST_LANDLOCK_NO_RULE=$xdir

	# control: with its rule, the bind works
	tb_run -- --rw "$xdir" -- "$PROBE" read "$xdir/file"
	is "$RF_OUT" "ok bound-secret." "control: a --rw bind is readable (with its rule)"
	tb_run -- --rw "$xdir" -- "$PROBE" write "$xdir/with-rule" x
	is "$RF_OUT" "ok 1" "control: ... and writable"

	tb_run "$NR" -- --rw "$xdir" -- "$PROBE" read "$xdir/file"
	is "$RF_OUT" "errno=EACCES" "no rule: reading a file there -> EACCES"
	tb_run "$NR" -- --rw "$xdir" -- "$PROBE" write "$xdir/file" overwritten
	is "$RF_OUT" "errno=EACCES" "no rule: writing an existing file -> EACCES"
	is "$(cat "$xdir/file")" "bound-secret" "... and the host file is unchanged"
	tb_run "$NR" -- --rw "$xdir" -- "$PROBE" create "$xdir/new"
	is "$RF_OUT" "errno=EACCES" "no rule: creating a file -> EACCES"
	check "... and nothing appeared on the host" test ! -e "$xdir/new"
	tb_run "$NR" -- --rw "$xdir" -- "$PROBE" mkdir "$xdir/newdir"
	is "$RF_OUT" "errno=EACCES" "no rule: mkdir -> EACCES"
	tb_run "$NR" -- --rw "$xdir" -- "$xdir/rf-probe" id
	is "$RF_RC" 126 "no rule: executing a program there -> exit 126"
	like "$RF_ERR" 'Permission denied' "... (EACCES: Permission denied)"

	tb_run "$NR" RINGFENCE_TEST_SKIP=landlock -- --rw "$xdir" -- "$PROBE" read "$xdir/file"
	is "$RF_OUT" "ok bound-secret." "no rule + RINGFENCE_TEST_SKIP=landlock: the read succeeds (Landlock was the layer)"
	tb_run "$NR" RINGFENCE_TEST_SKIP=landlock -- --rw "$xdir" -- "$PROBE" create "$xdir/new"
	is "$RF_OUT" "ok" "no rule + RINGFENCE_TEST_SKIP=landlock: the create succeeds"
	tb_run "$NR" RINGFENCE_TEST_SKIP=landlock -- --rw "$xdir" -- "$xdir/rf-probe" id
	like "$RF_OUT" "^ok uid=" "no rule + RINGFENCE_TEST_SKIP=landlock: the program runs"
fi

# ---- legitimate work keeps working ---------------------------------------------------

# One run, one line per operation: "NAME ok" or "NAME FAILED".
cat >"$WS/legit.sh" <<'EOF'
t() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n ok"; else echo "$n FAILED"; fi; }
# a fresh directory per run, so the script can run again (rootless below)
export WSDIR="$1"
cd "$(mktemp -d "$WSDIR/legit.XXXXXX")" || exit 1
t write sh -c 'echo one > f && echo two >> f && test "$(cat f)" = "one
two"'
t rename-same-dir mv f g
t mkdir mkdir -p d1/sub d2
t rename-across-dirs mv g d1/sub/g
t rename-dir mv d1/sub d2/sub
t hardlink ln d2/sub/g d2/h
t symlink ln -s d2/h link
t truncate sh -c 'truncate -s 0 d2/h && test ! -s d2/sub/g'
t o-trunc sh -c 'echo again > d2/h'
t chmod chmod 0600 d2/h
# FIFOs and sockets: in the run's own /var/tmp, never in the workspace
# (harden_workspace.sh)
t fifo sh -c 'mkfifo /var/tmp/fifo && rm /var/tmp/fifo'
t unix-socket python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("/var/tmp/sock")'
t remove rm -rf d1 d2 link fifo sock
t exec-workspace sh -c '"$WSDIR/rf-probe" id | grep -q "^ok uid="'
t tmp sh -c 'echo x > /tmp/x && cat /tmp/x && cp "$WSDIR/rf-probe" /tmp/p && /tmp/p id | grep -q "^ok uid="'
t var-tmp sh -c 'echo x > /var/tmp/x && rm /var/tmp/x'
t home sh -c 'mkdir -p "$HOME/.cache/a" && echo x > "$HOME/.cache/a/b" && mv "$HOME/.cache/a/b" "$HOME/b"'
t dev-shm sh -c 'echo x > /dev/shm/x && rm /dev/shm/x'
t dev-null sh -c 'echo x > /dev/null && echo y >> /dev/null && head -c 8 /dev/zero | wc -c | grep -q 8 && head -c 8 /dev/urandom >/dev/null'
t dev-full sh -c '! echo x > /dev/full'
t pipeline sh -c 'ls /usr/bin | sort | grep -c . | grep -q "[0-9]"'
t python3 python3 -c 'import json, ssl, sqlite3; ssl.create_default_context(); sqlite3.connect(":memory:").execute("select 1")'
t ls-root ls /
t etc sh -c 'grep -q "^root:" /etc/passwd && cat /etc/hosts /etc/resolv.conf >/dev/null'
t proc-oom sh -c 'echo 500 > /proc/self/oom_score_adj && grep -q 500 /proc/self/oom_score_adj'
t proc-comm sh -c 'printf rf-comm > /proc/self/comm'
t proc-read sh -c 'cat /proc/self/status /proc/self/mountinfo /proc/cpuinfo >/dev/null && ls /proc/self/fd >/dev/null'
t own-child-signal sh -c 'sleep 5 & kill $! && ! wait $!'
t script-pty sh -c 'script -qec "tty" /dev/null | grep -q "/dev/pts/"'
if command -v git >/dev/null; then
	t git sh -c 'git init -q repo && cd repo && git config user.email a@b && git config user.name a &&
		echo x > x && git add x && git commit -qm one && git mv x y && git commit -qm two &&
		git gc -q && git log --oneline | grep -c . | grep -q 2'
fi
EOF
rf_run -- /bin/sh "$WS/legit.sh" "$WS"
legit=$RF_OUT
for op in write rename-same-dir mkdir rename-across-dirs rename-dir hardlink symlink truncate \
	o-trunc chmod fifo unix-socket remove exec-workspace tmp var-tmp home dev-shm dev-null \
	dev-full pipeline python3 ls-root etc proc-oom proc-comm proc-read own-child-signal script-pty; do
	like "$legit" "(^|"$'\n'")$op ok($|"$'\n'")" "legit: $op"
done
if command -v git >/dev/null; then
	like "$legit" "(^|"$'\n'")git ok($|"$'\n'")" "legit: git init/add/commit/mv/gc in the workspace"
else
	skip "legit: git in the workspace" "git is not installed"
fi
is "$RF_RC" 0 "legit: the run exits 0"

# A terminal session: the run gets its own pty; ioctls on /dev/tty opened
# inside (termios, window size) and a nested pty work.
if command -v script >/dev/null; then
	cat >"$WS/tty-inner.sh" <<'EOF'
stty -F /dev/tty size >/dev/null && echo "tty-ioctl ok"
stty -echo && stty echo && echo "termios ok"
script -qec 'stty size >/dev/null && tty' /dev/null | grep -q '/dev/pts/' && echo "nested-pty ok"
EOF
	printf '%s\n' "\"\$1\" run --state-dir \"\$2\" -- /bin/sh \"\$3/tty-inner.sh\"" 'echo "rc=$?"' >"$WS/tty-outer.sh"
	# (The output may start with "^@": a NUL reached the run's pty input
	# and was echoed; hence the unanchored matches.)
	out=$(cd "$WS" && timeout -k 5 60 script -qec "bash '$WS/tty-outer.sh' '$RF_BIN' '$RF_STATE' '$WS'" \
		/dev/null </dev/null 2>&1 | tr -d '\r')
	like "$out" "tty-ioctl ok" "pty session: stty on /dev/tty opened inside works (ioctl_dev)"
	like "$out" "termios ok" "pty session: termios changes work"
	like "$out" "nested-pty ok" "pty session: a nested pty (script) works"
	like "$out" "rc=0" "pty session: exit 0"
else
	skip "pty session" "script(1) is not installed"
fi

# ---- scopes: signals -----------------------------------------------------------------

if [ "$HOST_ABI" -ge 6 ]; then
	rf_probe kill 1 0
	is "$RF_OUT" "errno=EPERM" "signal 0 to the run's init (pid 1) -> EPERM (Landlock signal scope)"
	rf_probe kill 1 15
	is "$RF_OUT" "errno=EPERM" "SIGTERM to the run's init -> EPERM"
	rf_probe kill child 15
	is "$RF_OUT" "ok" "control: SIGTERM to the command's own child works"
	rf_probe kill self 0
	is "$RF_OUT" "ok" "control: signal 0 to itself works"
	if [ "$have_test_bin" = 1 ]; then
		tb_run RINGFENCE_TEST_SKIP=landlock -- "$PROBE" kill 1 0
		is "$RF_OUT" "ok" "RINGFENCE_TEST_SKIP=landlock: signal 0 to init succeeds (Landlock was the layer)"
	else
		skip "RINGFENCE_TEST_SKIP=landlock: signal to init succeeds" "no test build"
	fi
else
	skip "signal scope" "kernel Landlock ABI $HOST_ABI < 6"
fi

# ---- scopes: abstract unix sockets -----------------------------------------------------

abstract=@rf-ll.$$.$RANDOM
start_listener _ unix "$abstract"
is "$("$RF_PROBE" unix-connect "$abstract")" "ok" "control: the host's abstract socket is reachable from the host"
rf_probe unix-connect "$abstract"
is "$RF_OUT" "errno=ECONNREFUSED" "the host's abstract socket from the run -> ECONNREFUSED (net namespace: own abstract namespace)"
if [ "$HOST_ABI" -lt 6 ]; then
	skip "abstract unix scope" "kernel Landlock ABI $HOST_ABI < 6"
elif [ "$have_test_bin" != 1 ]; then
	skip "abstract unix scope" "no test build"
else
	tb_run RINGFENCE_TEST_SKIP=netns -- "$PROBE" unix-connect "$abstract"
	is "$RF_OUT" "errno=EPERM" "RINGFENCE_TEST_SKIP=netns (host's abstract namespace): connect -> EPERM (Landlock scope)"
	# Both layers off needs a list in RINGFENCE_TEST_SKIP (plan.c); until
	# the build has it, the run keeps the net namespace and says ECONNREFUSED.
	tb_run RINGFENCE_TEST_SKIP=netns,landlock -- "$PROBE" unix-connect "$abstract"
	if [ "$RF_OUT" = ok ]; then
		ok "RINGFENCE_TEST_SKIP=netns,landlock: connect succeeds (the scope was the layer)"
	else
		skip "RINGFENCE_TEST_SKIP=netns,landlock: connect succeeds" "this build takes one layer in RINGFENCE_TEST_SKIP (got: $RF_OUT)"
	fi
fi
cat >"$WS/abstract-inner.sh" <<'EOF'
"$1" listen unix "$2" >/dev/null &
i=0 # until the listener is up: bounded at 60 s (a loaded host)
while [ $i -lt 600 ] && ! "$1" unix-connect "$2" >/dev/null; do i=$((i + 1)); sleep 0.1; done
"$1" unix-connect "$2"
kill $!
EOF
rf_run -- /bin/sh "$WS/abstract-inner.sh" "$PROBE" "@rf-ll-inner"
is "$(first_line "$RF_OUT")" "ok" "control: an abstract socket the command's own child listens on is reachable"

# ---- older ABIs still run ----------------------------------------------------------------

if [ "$have_test_bin" = 1 ]; then
	max=$HOST_ABI
	[ "$max" -gt 7 ] && max=7
	for abi in $(seq 1 "$max"); do
		d=$WS/abi$abi
		mkdir -p "$d/a" "$d/b"
		echo x >"$d/a/f"
		tb_run "RINGFENCE_TEST_LANDLOCK_ABI=$abi" -- /bin/sh -c "
			'$PROBE' write '$d/w' x | sed 's/^/write /'
			'$PROBE' create /dev/rf-abi | sed 's/^/dev /'
			python3 -c '$RENAME_PY' '$d/a/f' '$d/b/f' | sed 's/^/rename /'
			'$PROBE' kill 1 0 | sed 's/^/init /'"
		want_rename=ok
		[ "$abi" = 1 ] && want_rename=errno=EXDEV
		want_init=ok
		[ "$abi" -ge 6 ] && want_init=errno=EPERM
		is "$RF_OUT" "write ok 1
dev errno=EACCES
rename $want_rename
init $want_init" "ABI $abi: workspace writable, /dev refused, rename across dirs $want_rename, signal to init $want_init"
	done
else
	skip "older ABIs" "no test build"
fi

# ---- rootless ------------------------------------------------------------------------------

if as_user_setup; then
	export RF_AS_USER=1
	rf_run -- /bin/sh "$WS/legit.sh" "$WS"
	bad=$(printf '%s\n' "$RF_OUT" | grep FAILED)
	is "$bad" "" "rootless (uid 65534): the legitimate operations all work"
	rf_probe create /dev/rf-landlock
	is "$RF_OUT" "errno=EACCES" "rootless: create in /dev -> EACCES"
	if [ "$HOST_ABI" -ge 6 ]; then
		rf_probe kill 1 0
		is "$RF_OUT" "errno=EPERM" "rootless: signal to init -> EPERM"
	fi
	unset RF_AS_USER
else
	skip "rootless runs" "the tests do not run as root"
fi

done_testing
