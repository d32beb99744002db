#!/bin/bash
# tests/integration/harden_workspace.sh — a run cannot open the workspace to
# other local users, nor stall or trap host programs that use it.
#
# The attack (issue 13): inside a run, `chmod 0777 . .git`; afterwards any
# local user replaces .git/hooks and the owner's next `git` runs their hook
# as the owner. The same with a group/world-writable Makefile, a POSIX ACL
# granting others, or `umask 0` and then creating files. And a FIFO left in
# the workspace blocks the host tool that opens it; a file lease holds a
# host writer's open() for lease-break-time.
#
# What stops it, and the answer each attempt must get:
#   chmod/fchmod/fchmodat (also through /proc/self/fd) with g+w or o+w,
#   fcntl F_SETLEASE / F_NOTIFY, xattr writes             seccomp: EPERM
#   fchmodat2, openat2 (a struct the filter cannot read)  seccomp: ENOSYS
#   umask(0), umask 002: answered by the run's init, the umask keeps 022,
#   so files and directories are created without g+w/o+w (checked by mode)
#   mkfifo, mknod S_IFIFO/S_IFSOCK, bind() of a unix socket in the
#   workspace                                              Landlock: EACCES
# Next to each, the legitimate path still works: chmod 0755/0644/u+x,
# umask 077, creating files, git init/commit, cp -a, F_SETLK, F_GETFL,
# FIFOs and sockets in the run's own /var/tmp.
#
# Runs as root and as an unprivileged caller (uid 65534), with a second
# local uid as the outsider. With a test build, the hook-planting sequence
# runs once more with the seccomp layer off: then it succeeds, so this test
# can go red.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
command -v git >/dev/null || skip_all "git is not installed"
umask 022 # the host side of the test creates nothing group/world-writable

# A workspace as owners have them: reachable by other users (0755), a git
# repository with a Makefile. For the unprivileged caller it is handed to
# uid 65534 (as_user_setup).
setup_workspace() {
	new_workspace
	chmod 0755 "$WS" || bail_out "chmod $WS"
	git init -q "$WS" || bail_out "git init"
	printf 'all:\n\ttrue\n' >"$WS/Makefile"
	chmod 0644 "$WS/Makefile"
}

# as_uid UID CMD... — run CMD on the host as UID (no groups, no capabilities).
as_uid() {
	setpriv --reuid="$1" --regid="$1" --clear-groups --inh-caps=-all "${@:2}"
}

# oneline TEXT — TEXT's lines joined by single spaces.
oneline() { printf '%s\n' "$1" | tr '\n' ' ' | sed 's/ $//'; }

# modes PATH... — "MODE MODE ..." as the host sees them.
modes() { stat -c %a "$@" | tr '\n' ' ' | sed 's/ $//'; }

# plant_hook WHO OUTSIDER — the hook-planting sequence, asserted.
plant_hook() {
	local who=$1 outsider=$2 before
	before=$(modes "$WS" "$WS/.git" "$WS/Makefile")
	rf_run -- /bin/sh -c './rf-probe chmod . 0777; ./rf-probe chmod .git 0777
		./rf-probe chmod Makefile 0666; chmod 0777 . .git 2>/dev/null; echo chmod-rc=$?'
	is "$(oneline "$RF_OUT")" "errno=EPERM errno=EPERM errno=EPERM chmod-rc=1" \
		"$who: chmod 0777 . .git and chmod 0666 Makefile inside the run -> EPERM (seccomp)"
	is "$(modes "$WS" "$WS/.git" "$WS/Makefile")" "$before" \
		"$who: the host sees the modes unchanged ($before)"
	out=$(cd / && as_uid "$outsider" "$WS/rf-probe" create "$WS/.git/planted")
	is "$out" "errno=EACCES" "$who: uid $outsider cannot create files in .git afterwards"
	if (cd / && as_uid "$outsider" mv "$WS/.git/hooks" "$WS/.git/hooks.old" 2>/dev/null); then
		not_ok "$who: uid $outsider cannot move .git/hooks aside (to plant its own)"
	else
		ok "$who: uid $outsider cannot move .git/hooks aside (to plant its own)"
	fi
	out=$(cd / && as_uid "$outsider" "$WS/rf-probe" write "$WS/Makefile" x)
	is "$out" "errno=EACCES" "$who: uid $outsider cannot write the Makefile afterwards"
}

# one_caller WHO OUTSIDER — the whole set for one kind of caller.
one_caller() {
	local who=$1 outsider=$2 out
	plant_hook "$who" "$outsider"

	# Group/other write on a file, by every route to chmod.
	touch "$WS/f" && chmod 0644 "$WS/f"
	[ "$who" = root ] || chown 65534:65534 "$WS/f"
	# shellcheck disable=SC2016 # expanded by the shell inside the run
	rf_run -- /bin/sh -c 'for v in chmod fchmod proc; do
			for m in 0664 0646 0666 0777 0620; do ./rf-probe chmod-via $v f $m; done; done
		./rf-probe chmod-via fchmodat2 f 0666
		chmod g+w f 2>/dev/null; echo g+w=$?; chmod o+w f 2>/dev/null; echo o+w=$?'
	is "$(printf '%s' "$RF_OUT" | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ' | sed 's/ $//')" \
		"1 errno=ENOSYS 15 errno=EPERM 1 g+w=1 1 o+w=1" \
		"$who: chmod, fchmod, chmod of /proc/self/fd/N with g+w or o+w -> EPERM; fchmodat2 -> ENOSYS"
	is "$(modes "$WS/f")" 644 "$who: ... and the host sees f still 644"
	rf_run -- /bin/sh -c 'chmod 0755 f && stat -c %a f && chmod 0644 f && stat -c %a f &&
		chmod u+x f && stat -c %a f && chmod go-rx f && stat -c %a f && ./rf-probe chmod-via fchmod f 0640'
	is "$RF_RC $(oneline "$RF_OUT")" "0 755 644 744 700 ok" \
		"$who: control: chmod 0755, 0644, u+x, go-rx, fchmod 0640 work"
	is "$(modes "$WS/f")" 640 "$who: control: ... and the host sees the last one (640)"

	# umask: 0 does not reach the kernel; files come out without g+w/o+w.
	rf_run -- /bin/sh -c 'umask 0; umask; touch u1; mkdir u2; stat -c %a u1 u2
		./rf-probe umask 0; ./rf-probe umask 002
		./rf-probe umask-create 0 u3 open; ./rf-probe umask-create 0 u4 mkdir
		./rf-probe umask-create 0 u5 tmpfile; ./rf-probe umask-create 002 u6 open'
	is "$RF_RC $(oneline "$RF_OUT")" \
		"0 0022 644 755 ok 0022 ok 0022 ok mode=0644 ok mode=0755 ok mode=0644 ok mode=0644" \
		"$who: umask 0 / umask 002 leave 022 (the call returns it): files, directories, O_TMPFILE+linkat come out 644/755"
	is "$(modes "$WS/u1" "$WS/u2" "$WS/u3" "$WS/u4" "$WS/u5" "$WS/u6")" "644 755 644 755 644 644" \
		"$who: ... as the host sees them"
	rf_run -- /bin/sh -c 'umask 077; umask; touch s1; mkdir s2; stat -c %a s1 s2; ./rf-probe umask 027'
	is "$RF_RC $(oneline "$RF_OUT")" "0 0077 600 700 ok 0077" \
		"$who: control: umask 077 and 027 work (stricter masks are the run's to choose)"
	rf_run -- ./rf-probe umask 007
	is "$RF_OUT" "errno=EPERM" "$who: umask 007 (wants bits 022 lacks, cannot be given) -> EPERM"
	if command -v python3 >/dev/null; then
		rf_run -- python3 -c 'import os; m = os.umask(0); os.umask(m); print(oct(m), oct(os.umask(0o22)))'
		is "$RF_RC $RF_OUT" "0 0o22 0o22" \
			"$who: control: the read idiom m = umask(0); umask(m) gets the real umask and keeps it"
	else
		skip "$who: the umask read idiom" "python3 is not installed"
	fi

	# POSIX ACLs and other xattr writes: the filter answers EOPNOTSUPP, as
	# a filesystem without xattrs would (what cp -a and tar tolerate). The
	# control outside shows that this filesystem does support them.
	touch "$WS/ctl.x" "$WS/ctl.acl" && chmod 0600 "$WS/ctl.x" "$WS/ctl.acl"
	ctl="$("$WS/rf-probe" setxattr "$WS/ctl.x" user.note) $("$WS/rf-probe" setxattr "$WS/ctl.acl" system.posix_acl_access)"
	rm -f "$WS/ctl.x" "$WS/ctl.acl"
	diag "control outside the sandbox: setxattr user.note, system.posix_acl_access -> $ctl"
	rf_run -- /bin/sh -c './rf-probe setxattr f system.posix_acl_access
		./rf-probe setxattr .git system.posix_acl_default; ./rf-probe setxattr f user.note'
	if [ "$ctl" = "ok ok" ]; then
		is "$(oneline "$RF_OUT")" "errno=EOPNOTSUPP errno=EOPNOTSUPP errno=EOPNOTSUPP" \
			"$who: setxattr of system.posix_acl_access/default and user.* -> EOPNOTSUPP (seccomp; the host control could)"
	else
		skip "$who: setxattr of ACLs and user.* -> EOPNOTSUPP" "the workspace's filesystem does not take them on the host either: control got $ctl"
	fi
	if command -v setfacl >/dev/null; then
		# o:rwx alone is a minimal ACL: setfacl sets it with chmod (seccomp's
		# EPERM); a named user's entry needs the ACL xattr (EOPNOTSUPP)
		rf_run -- setfacl -m o:rwx f
		isnt "$RF_RC" 0 "$who: setfacl -m o:rwx fails"
		like "$RF_ERR" 'Operation not permitted' "$who: ... with EPERM (it is a chmod)"
		rf_run -- setfacl -m u:65533:rwx f
		isnt "$RF_RC" 0 "$who: setfacl -m u:65533:rwx fails"
		like "$RF_ERR" 'Operation not supported' "$who: ... with EOPNOTSUPP (the ACL xattr)"
	else
		skip "$who: setfacl -m o:rwx fails with EPERM" "setfacl is not installed"
		skip "$who: ... with EPERM" "setfacl is not installed"
		skip "$who: setfacl -m u:65533:rwx fails with EOPNOTSUPP" "setfacl is not installed"
		skip "$who: ... with EOPNOTSUPP" "setfacl is not installed"
	fi
	if command -v python3 >/dev/null; then
		is "$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$WS/f")" "[]" \
			"$who: ... and the host sees no xattr (no ACL) on f"
	fi
	rf_run -- /bin/sh -c 'cp -a f f.copy && mkdir d && cp -a d d.copy && stat -c %a f.copy'
	is "$RF_RC $RF_OUT" "0 640" "$who: control: cp -a (which copies xattrs when there are any) works"

	# FIFOs and sockets in the workspace; the run's own /var/tmp keeps them.
	rf_run -- /bin/sh -c './rf-probe mknod p fifo; ./rf-probe mknod .git/p fifo
		./rf-probe mknod sock1 sock; ./rf-probe unix-bind sock2; mkfifo p2 2>/dev/null; echo mkfifo=$?
		./rf-probe mknod /var/tmp/p fifo; ./rf-probe unix-bind /var/tmp/s'
	is "$(oneline "$RF_OUT")" \
		"errno=EACCES errno=EACCES errno=EACCES errno=EACCES mkfifo=1 ok ok" \
		"$who: mknod FIFO/socket and a unix socket bind in the workspace -> EACCES (Landlock); in /var/tmp they work"
	is "$(find "$WS" \( -type p -o -type s \) | wc -l)" 0 "$who: ... and the host finds no FIFO or socket in the workspace"

	# File leases and dnotify; locks stay.
	rf_run -- /bin/sh -c './rf-probe fcntl f setlease; ./rf-probe fcntl . notify
		./rf-probe fcntl f setlk; ./rf-probe fcntl f getfl'
	is "$(oneline "$RF_OUT")" "errno=EPERM errno=EPERM ok 0 ok 32768" \
		"$who: fcntl F_SETLEASE and F_NOTIFY -> EPERM (seccomp); control: F_SETLK, F_GETFL work"

	# Real work in the workspace still works.
	rf_run -- /bin/sh -c 'set -e; echo a >a.txt; git add a.txt Makefile
		git -c user.email=a@example.org -c user.name=agent commit -qm first; git log --oneline | wc -l
		mkdir -p src/x; echo b >src/x/b; stat -c %a src src/x/b'
	is "$RF_RC $(oneline "$RF_OUT")" "0 1 755 644" \
		"$who: control: git commit, mkdir -p, writing files work (755/644)"
	is "$(find "$WS" -perm /022 ! -type l | wc -l)" 0 \
		"$who: nothing in the workspace is group- or world-writable on the host"
}

# ---- root and unprivileged callers ------------------------------------------------

setup_workspace
if is_root; then
	one_caller root 65534
	setup_workspace
	as_user_setup
	export RF_AS_USER=1
	one_caller unprivileged 65533
	unset RF_AS_USER
else
	one_caller unprivileged 65534
	done_testing
fi

# ---- the same attack with the seccomp layer off: it works, so this test can fail ----

if [ -z "$RF_TEST_BIN" ]; then
	skip "with the layer off, the hook can be planted" "no test build (RF_TEST_BIN)"
	done_testing
fi
setup_workspace
RF_RUN_BIN=$RF_TEST_BIN
RF_ENV=(RINGFENCE_TEST_SKIP=seccomp)
rf_run -- /bin/sh -c './rf-probe chmod . 0777; ./rf-probe chmod .git 0777'
RF_ENV=()
unset RF_RUN_BIN
is "$(oneline "$RF_OUT")" "ok ok" "layer off: chmod 0777 . .git succeeds inside the run"
out=$(cd / && as_uid 65534 "$WS/rf-probe" create "$WS/.git/planted")
is "$out" "ok" "layer off: ... and uid 65534 can then write into .git (what the filter stops)"

done_testing
