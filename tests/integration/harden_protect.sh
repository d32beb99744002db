#!/bin/bash
# tests/integration/harden_protect.sh — protected paths inside the workspace
# (protect_one(), add_protected() and plan_cleanup() in src/sandbox/plan.c).
#
# A protected path is bound read-only onto itself (writes: EROFS; rename or
# remove: EBUSY, a mount point) and each ancestor up to the workspace root
# read-write onto itself (usable, but it cannot be renamed away: EBUSY).
#  - Default, no flags: in a git workspace, .git/hooks/ and .git/config;
#    git itself keeps working (status, commit). A policy with
#    "protected": [] turns the default off (then the hook write succeeds:
#    the test can go red).
#  - --protect of a missing path: an empty read-only placeholder (a file,
#    or a directory with a trailing slash; missing parents too), created by
#    ringfence and removed after the run, also after a refused run or a
#    stopped one; an existing file is kept unchanged.
#  - Attacks: rename the parent and recreate (.claude/settings.json), hard
#    links, a protected path that is a symbolic link (refused: 125, nothing
#    run), a FIFO, paths that are too deep; git metadata that redirects the
#    repository's config.
#  - Rootless runs (uid 65534, workspace owned by it) behave the same.
#  - Fail closed (test build): RINGFENCE_TEST_FAIL=protect refuses with 125
#    when a protected path is in play, and does nothing when none is.
#  - A protected file with a second hard link refuses the run (the other
#    name would write through). .git/commondir and .git/modules/*/config
#    cannot be planted to point the host's git at a config the run wrote
#    (core.fsmonitor would run at the next git status): both are protected.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace
require_isolation

[ -x /usr/bin/python3 ] || skip_all "python3 is not installed (used inside the run for rename/unlink errnos)"
have_git=0
command -v git >/dev/null && have_git=1
have_test_bin=0
[ -n "$RF_TEST_BIN" ] && [ -x "$RF_TEST_BIN" ] && have_test_bin=1

# op.py OP ARGS — one file operation inside the run: "ok" or "errno=NAME".
OP_PY='import errno, os, sys
op, a = sys.argv[1], sys.argv[2:]
try:
    if op == "rename":
        os.rename(a[0], a[1])
    elif op == "unlink":
        os.unlink(a[0])
    elif op == "rmdir":
        os.rmdir(a[0])
    elif op == "link":
        os.link(a[0], a[1])
    elif op == "symlink":
        os.symlink(a[0], a[1])
    elif op == "truncate":
        os.truncate(a[0], 0)
    elif op == "append":
        with open(a[0], "a") as f:
            f.write(a[1] + "\n")
    else:
        sys.exit("usage: op.py rename|unlink|rmdir|link|symlink|truncate|append ARGS")
    print("ok")
except OSError as e:
    print("errno=" + errno.errorcode[e.errno])'

# install_op — copy op.py next to the probe in $WS.
install_op() {
	printf '%s\n' "$OP_PY" >"$WS/op.py" || bail_out "cannot write op.py"
	chmod 0644 "$WS/op.py"
	OP="python3 $WS/op.py"
}
install_op

# T_FN defines t for a /bin/sh script run inside: t NAME CMD... prints
# "NAME RESULT", RESULT being the first line CMD printed (the probe's and
# op.py's "ok ..." or "errno=NAME").
# shellcheck disable=SC2016 # expanded by the shell inside the run
T_FN='t() { n=$1; shift; printf "%s %s\n" "$n" "$("$@" 2>/dev/null | head -n 1)"; }'

# result_of NAME — the RESULT of step NAME in $RF_OUT.
result_of() { printf '%s\n' "$RF_OUT" | sed -n "s/^$1 //p" | head -n 1; }

# expect NAME WANT DESCRIPTION — step NAME gave WANT.
expect() { is "$(result_of "$1")" "$2" "$3"; }

# one_line TEXT — TEXT is exactly one line.
one_line() { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | grep -c '')" = 1 ]; }

# git_setup — make $WS a git repository with one commit, on the host.
git_setup() {
	git -C "$WS" init -q &&
		git -C "$WS" -c user.name=host -c user.email=host@example.org commit -q --allow-empty -m host
}

# ---- default protection in a git workspace ---------------------------------------------

# the attacks of one run, shared with the rootless section below
# shellcheck disable=SC2016 # expanded by the shell inside the run
GIT_ATTACKS="$T_FN"'
t hook-create "$PROBE" write .git/hooks/pre-commit evil
t hook-sample-rewrite "$PROBE" rewrite .git/hooks/pre-commit.sample
t hook-symlink $OP symlink /tmp/evil .git/hooks/post-checkout
t hooks-chmod "$PROBE" chmod .git/hooks 0700
t hooks-rename $OP rename .git/hooks .git/hooks-old
t hooks-rmdir $OP rmdir .git/hooks
t config-rewrite "$PROBE" rewrite .git/config
t config-write "$PROBE" write .git/config evil
t config-append $OP append .git/config "[core] fsmonitor = evil"
t config-truncate $OP truncate .git/config
t config-unlink $OP unlink .git/config
t config-rename $OP rename .git/config .git/config-old
t config-replace $OP rename .git/HEAD .git/config
t config-link $OP link .git/config cfg-link
t git-rename $OP rename .git .git-moved
t git-rmdir $OP rmdir .git
t git-newfile "$PROBE" write .git/rf-new ok
t config-read "$PROBE" read .git/config
t git-status sh -c "git status --porcelain >/dev/null && echo ok"
t git-commit sh -c "git -c user.name=run -c user.email=run@example.org commit -q --allow-empty -m run && echo ok"
'
# check_git_attacks WHO
check_git_attacks() {
	local who=$1
	expect hook-create "errno=EROFS" "$who: creating .git/hooks/pre-commit -> EROFS"
	expect hook-sample-rewrite "errno=EROFS" "$who: opening an existing hook for writing -> EROFS"
	expect hook-symlink "errno=EROFS" "$who: a symlink as .git/hooks/post-checkout -> EROFS"
	expect hooks-chmod "errno=EROFS" "$who: chmod 0700 .git/hooks -> EROFS (0777 is seccomp's EPERM first: harden_workspace.sh)"
	expect hooks-rename "errno=EBUSY" "$who: renaming .git/hooks -> EBUSY"
	expect hooks-rmdir "errno=EBUSY" "$who: rmdir .git/hooks -> EBUSY"
	expect config-rewrite "errno=EROFS" "$who: opening .git/config for writing -> EROFS"
	expect config-write "errno=EROFS" "$who: writing .git/config (O_TRUNC) -> EROFS"
	expect config-append "errno=EROFS" "$who: appending to .git/config -> EROFS"
	expect config-truncate "errno=EROFS" "$who: truncate(.git/config) -> EROFS"
	expect config-unlink "errno=EBUSY" "$who: rm .git/config -> EBUSY"
	expect config-rename "errno=EBUSY" "$who: renaming .git/config away -> EBUSY"
	expect config-replace "errno=EBUSY" "$who: renaming another file over .git/config -> EBUSY"
	expect config-link "errno=EXDEV" "$who: hard-linking .git/config elsewhere -> EXDEV (its own mount)"
	expect git-rename "errno=EBUSY" "$who: mv .git .git-moved -> EBUSY"
	expect git-rmdir "errno=EBUSY" "$who: rmdir .git -> EBUSY"
	expect git-newfile "ok 2" "$who: control: .git itself stays writable (a new file there)"
	like "$(result_of config-read)" '^ok \[core\]' "$who: control: .git/config is readable"
	expect git-status ok "$who: control: git status works"
	expect git-commit ok "$who: control: git commit works"
}

if [ "$have_git" = 1 ]; then
	git_setup || bail_out "git init in $WS failed"
	before_config=$(md5sum <"$WS/.git/config")
	before_hooks=$(ls -A "$WS/.git/hooks")
	rf_run -- /bin/sh -c "PROBE='$PROBE' OP='$OP'; $GIT_ATTACKS"
	is "$RF_RC" 0 "git workspace, no flags: the run exits 0"
	check_git_attacks "default"
	is "$(md5sum <"$WS/.git/config")" "$before_config" "default: .git/config is unchanged on the host"
	is "$(ls -A "$WS/.git/hooks")" "$before_hooks" "default: .git/hooks is unchanged on the host"
	check "default: .git was not moved" test -d "$WS/.git" -a ! -e "$WS/.git-moved" -a ! -e "$WS/cfg-link"
	is "$(git -C "$WS" log -1 --format=%s)" run "default: the run's commit reached the host repository"
	rm -f -- "$WS/.git/rf-new"

	# A policy that says "protected": [] turns the default off: the same
	# hook write now succeeds (the test can go red).
	rf_mktemp /tmp
	pol_off=$REPLY/protected-off.json
	printf '{"version": 1, "filesystem": {"protected": []}}\n' >"$pol_off"
	rf_run -p "$pol_off" -- "$PROBE" write "$WS/.git/hooks/pre-commit" '#!/bin/sh'
	is "$RF_OUT" "ok 9" "\"protected\": [] turns the default off: .git/hooks/pre-commit is writable"
	check "... and the hook reached the host" test -f "$WS/.git/hooks/pre-commit"
	rm -f -- "$WS/.git/hooks/pre-commit"

	# A non-empty list adds to the default.
	pol_list=$REPLY/protected-list.json
	printf '{"version": 1, "filesystem": {"protected": [".envrc"]}}\n' >"$pol_list"
	rf_run -p "$pol_list" -- /bin/sh -c "$T_FN
		t hook \"$PROBE\" write .git/hooks/pre-commit evil
		t envrc \"$PROBE\" write .envrc evil"
	expect hook "errno=EROFS" "a policy naming only .envrc keeps the git default: the hook write -> EROFS"
	expect envrc "errno=EROFS" "... and .envrc is protected too -> EROFS"
	check "... and its placeholder is gone after the run" test ! -e "$WS/.envrc"
else
	skip "default protection in a git workspace" "git is not installed"
fi

# A .git *file* (a linked worktree): nothing beneath it to protect, the run
# proceeds and can write the workspace.
saved_ws=$WS
rf_mktemp /tmp
WS=$REPLY
install_probe
printf 'gitdir: /nonexistent/worktree\n' >"$WS/.git"
rf_run -- "$PROBE" write "$WS/after-gitfile" x
is "$RF_OUT" "ok 1" "a .git file (worktree) instead of a directory: the run proceeds"
is "$(cat "$WS/.git")" "gitdir: /nonexistent/worktree" "... and the .git file is left as it was"
WS=$saved_ws
PROBE=$WS/rf-probe

# ---- --protect of a missing file: a placeholder -------------------------------------------

rf_run --protect .envrc -- /bin/sh -c "$T_FN
	t stat \"$PROBE\" lstat .envrc
	t write \"$PROBE\" write .envrc evil
	t create \"$PROBE\" create .envrc
	t unlink $OP unlink .envrc
	t rename $OP rename .envrc .envrc2
	t over $OP rename op.py .envrc
	t chmod \"$PROBE\" chmod .envrc 0644"
like "$(result_of stat)" '^ok mode=0444 type=file uid=0 gid=0 .* size=0$' \
	"--protect .envrc (missing): inside it exists, an empty 0444 file owned by the workspace owner"
expect write "errno=EROFS" "... writing it -> EROFS"
expect create "errno=EEXIST" "... creating it anew -> EEXIST"
expect unlink "errno=EBUSY" "... removing it -> EBUSY"
expect rename "errno=EBUSY" "... renaming it -> EBUSY"
expect over "errno=EBUSY" "... renaming a file over it -> EBUSY"
expect chmod "errno=EROFS" "... chmod -> EROFS"
check "after the run the placeholder is gone from the host" test ! -e "$WS/.envrc" -a ! -L "$WS/.envrc"
check "... and op.py is still there (the rename over it failed)" test -f "$WS/op.py"

# An existing .envrc with content is kept and unchanged.
printf 'export TOKEN=host-value\n' >"$WS/.envrc"
chmod 0644 "$WS/.envrc"
envrc_before=$(stat -c '%i %s %a %u:%g' "$WS/.envrc")
rf_run --protect .envrc -- /bin/sh -c "$T_FN
	t read \"$PROBE\" read .envrc
	t write \"$PROBE\" write .envrc evil
	t unlink $OP unlink .envrc"
expect read "ok export TOKEN=host-value." "an existing protected .envrc: readable inside (control)"
expect write "errno=EROFS" "an existing protected .envrc: writing it -> EROFS"
expect unlink "errno=EBUSY" "an existing protected .envrc: removing it -> EBUSY"
is "$(cat "$WS/.envrc")" "export TOKEN=host-value" "... and after the run it is still there with its content"
is "$(stat -c '%i %s %a %u:%g' "$WS/.envrc")" "$envrc_before" "... same inode, size, mode and owner"
rm -f -- "$WS/.envrc"

# ---- --protect of a missing directory and of missing parents --------------------------------

rf_run --protect newdir/ --protect a/b/c -- /bin/sh -c "$T_FN
	t newdir \"$PROBE\" lstat newdir
	t newdir-create \"$PROBE\" create newdir/f
	t newdir-mkdir \"$PROBE\" mkdir newdir/sub
	t newdir-rmdir $OP rmdir newdir
	t abc \"$PROBE\" lstat a/b/c
	t ab \"$PROBE\" lstat a/b
	t abc-write \"$PROBE\" write a/b/c evil
	t a-rename $OP rename a a2
	t ab-rename $OP rename a/b a/b2
	t a-rmdir $OP rmdir a"
like "$(result_of newdir)" '^ok mode=0755 type=dir uid=0 ' "--protect newdir/ (missing): a directory placeholder"
expect newdir-create "errno=EROFS" "... creating a file in it -> EROFS"
expect newdir-mkdir "errno=EROFS" "... mkdir in it -> EROFS"
expect newdir-rmdir "errno=EBUSY" "... removing it -> EBUSY"
like "$(result_of abc)" '^ok mode=0444 type=file .* size=0$' "--protect a/b/c (all missing): c is an empty file placeholder"
like "$(result_of ab)" '^ok mode=0755 type=dir ' "... its missing parents are created as directories"
expect abc-write "errno=EROFS" "... writing a/b/c -> EROFS"
expect a-rename "errno=EBUSY" "... renaming the new parent a -> EBUSY"
expect ab-rename "errno=EBUSY" "... renaming a/b -> EBUSY"
expect a-rmdir "errno=EBUSY" "... rmdir a -> EBUSY"
check "after the run newdir is gone from the host" test ! -e "$WS/newdir"
check "after the run a/b/c, a/b and a are all gone from the host" test ! -e "$WS/a"

# Ancestors stay writable; what the run leaves in a placeholder directory
# is never removed, and so neither is that directory.
rf_run --protect x/y/z -- /bin/sh -c "$T_FN
	t create \"$PROBE\" write x/y/mine kept"
expect create "ok 4" "control: a placeholder ancestor (x/y) is writable"
check "after the run: the placeholder x/y/z is gone" test ! -e "$WS/x/y/z"
is "$(cat "$WS/x/y/mine" 2>&1)" kept "after the run: the run's own file in x/y is kept (and with it x/y)"
rm -rf -- "${WS:?}/x"

# ---- rename the parent and recreate ------------------------------------------------------------

mkdir -p "$WS/.claude"
printf '{"hooks": "good"}\n' >"$WS/.claude/settings.json"
settings_before=$(md5sum <"$WS/.claude/settings.json")
rf_run --protect .claude/settings.json -- /bin/sh -c "$T_FN
	t mv-parent $OP rename .claude .claude2
	t chain sh -c 'mv .claude .claude2 && mkdir .claude && echo evil > .claude/settings.json; echo rc=\$?'
	t chain-msg sh -c 'mv .claude .claude2 2>&1'
	t write \"$PROBE\" write .claude/settings.json evil
	t unlink $OP unlink .claude/settings.json
	t link $OP link .claude/settings.json settings-link
	t sibling \"$PROBE\" write .claude/other.json ok
	t cp-parent sh -c 'cp -a .claude .claude-copy && echo ok'"
expect mv-parent "errno=EBUSY" "rename-the-parent: renaming .claude (an ancestor) -> EBUSY"
expect chain "rc=1" "rename-the-parent: 'mv .claude .claude2 && mkdir .claude && echo evil > ...' fails at the mv"
like "$(result_of chain-msg)" 'Device or resource busy' "... mv says: Device or resource busy (EBUSY)"
expect write "errno=EROFS" "rename-the-parent: writing .claude/settings.json -> EROFS"
expect unlink "errno=EBUSY" "rename-the-parent: removing .claude/settings.json -> EBUSY"
expect link "errno=EXDEV" "rename-the-parent: hard-linking it -> EXDEV"
expect sibling "ok 2" "control: a sibling file in .claude is writable"
expect cp-parent ok "control: copying .claude elsewhere works"
is "$(md5sum <"$WS/.claude/settings.json")" "$settings_before" "rename-the-parent: the host's settings.json is unchanged"
check "rename-the-parent: no .claude2 on the host" test ! -e "$WS/.claude2"

# Deeper: every ancestor is pinned.
mkdir -p "$WS/.config/agent"
printf 'good\n' >"$WS/.config/agent/settings.json"
rf_run --protect .config/agent/settings.json -- /bin/sh -c "$T_FN
	t top $OP rename .config .config2
	t mid $OP rename .config/agent .config/agent2
	t mid-rmdir $OP rmdir .config/agent"
expect top "errno=EBUSY" "nested protected file: renaming the top ancestor -> EBUSY"
expect mid "errno=EBUSY" "nested protected file: renaming the middle ancestor -> EBUSY"
expect mid-rmdir "errno=EBUSY" "nested protected file: rmdir of the middle ancestor -> EBUSY"
is "$(cat "$WS/.config/agent/settings.json")" good "nested protected file: unchanged on the host"

# A hard link made before the run (by the user, or by an earlier run that
# had no protection) names the same inode outside the read-only mount.
printf 'good\n' >"$WS/rc-protected"
ln "$WS/rc-protected" "$WS/rc-hardlink"
# ringfence refuses to protect a file with a second name (it would write
# through): the run is refused, nothing ran, the file is unchanged.
rm -f "$WS/marker"
rf_run --protect rc-protected -- /bin/sh -c "touch marker; $OP append rc-hardlink evil"
is "$RF_RC" 125 "hard link made before the run: a protected file with two names refuses the run (125)"
like "$RF_ERR" 'hard links' "... stderr says why"
check "... the command did not run" test ! -e "$WS/marker"
is "$(cat "$WS/rc-protected")" good "... and the protected file is unchanged on the host"
rm -f -- "$WS/rc-protected" "$WS/rc-hardlink"

# ---- git metadata that redirects the repository's config ----------------------------------------

# .git/commondir names the directory git reads config and hooks from (it is
# how linked worktrees share them). .git itself is writable, so a run can
# plant it and point git at a config and hooks of its own: on the host, the
# next git command in the workspace runs the run's core.fsmonitor. The
# payload here only creates a file in this test's own workspace.
if [ "$have_git" = 1 ]; then
	saved_ws=$WS
	rf_mktemp /tmp
	WS=$REPLY
	install_probe
	git_setup || bail_out "git init in $WS failed"
	# shellcheck disable=SC2016 # expanded by the shell inside the run
	rf_run -- /bin/sh -c '
		mkdir evil && cp -a .git/objects .git/refs .git/HEAD evil/ &&
		printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch $PWD/pwned-commondir; false\"\n" >evil/config &&
		echo ../evil >.git/commondir; echo "commondir rc=$?"'
	diag "planting .git/commondir: $RF_OUT"
	host_common=$(git -C "$WS" rev-parse --git-common-dir 2>&1)
	git -C "$WS" status --porcelain >/dev/null 2>&1
	is "$host_common" ".git" "after a run, git on the host still reads the repository's own .git (not a run-planted commondir)"
	check "after a run, git status on the host runs no command the run planted" test ! -e "$WS/pwned-commondir"
	rm -f -- "$WS/pwned-commondir" "$WS/.git/commondir"

	# The same through a submodule: its git dir, .git/modules/NAME, holds
	# a config (and hooks) of its own, and git status on the host
	# recurses into the submodule.
	rf_mktemp /tmp
	WS=$REPLY
	install_probe
	git_setup || bail_out "git init in $WS failed"
	# shellcheck disable=SC2016 # expanded by the shell inside the run
	rf_run -- /bin/sh -c '
		git init -q /tmp/lib && git -C /tmp/lib -c user.name=a -c user.email=a@b commit -q --allow-empty -m lib &&
		git -c protocol.file.allow=always submodule --quiet add /tmp/lib sub 2>/dev/null
		git config -f .git/modules/sub/config core.fsmonitor "touch $PWD/pwned-submodule; false" &&
		echo "submodule planted"'
	diag "planting .git/modules/sub/config: $RF_OUT"
	git -C "$WS" status --porcelain >/dev/null 2>&1
	check "after a run, git status on the host runs no command planted in .git/modules/*/config" \
		test ! -e "$WS/pwned-submodule"
	rm -f -- "$WS/pwned-submodule"
	WS=$saved_ws
	PROBE=$WS/rf-probe
fi

# ---- refusals: symbolic links, special files, depth ----------------------------------------------

ln -s /etc/passwd "$WS/.bashrc"
passwd_before=$(md5sum </etc/passwd)
rf_run --protect .bashrc -- "$PROBE" write "$WS/marker-symlink"
is "$RF_RC" 125 "--protect .bashrc, a symlink to /etc/passwd: exit 125"
if one_line "$RF_ERR" && [[ $RF_ERR =~ ^ringfence:\ protected\ path\ .*/\.bashrc\ is\ a\ symbolic\ link ]]; then
	ok "... one stderr line: the protected path is a symbolic link"
else
	not_ok "... one stderr line: the protected path is a symbolic link" "stderr: $RF_ERR"
fi
check "... and the command did not run" test ! -e "$WS/marker-symlink"
is "$(readlink "$WS/.bashrc")" /etc/passwd "... the symlink is left as it was"
is "$(md5sum </etc/passwd)" "$passwd_before" "... and /etc/passwd is untouched"
rm -f -- "$WS/.bashrc"

mkdir "$WS/lnkparent"
ln -s /etc "$WS/lnkparent/etc"
rf_run --protect lnkparent/etc/passwd -- "$PROBE" write "$WS/marker-symlink2"
is "$RF_RC" 125 "--protect through a symlinked directory (lnkparent/etc -> /etc): exit 125"
like "$RF_ERR" 'lnkparent/etc is a symbolic link' "... naming the symbolic link on the way"
check "... and the command did not run" test ! -e "$WS/marker-symlink2"
rm -rf -- "${WS:?}/lnkparent"

# A refused run leaves no placeholder behind: .envrc is planned (and
# created) before the symlink further on refuses the run.
ln -s /etc/passwd "$WS/.profile"
rf_run --protect .envrc --protect newdir2/ --protect .profile -- "$PROBE" write "$WS/marker-symlink3"
is "$RF_RC" 125 "placeholders, then a symlink: exit 125"
check "... and the placeholders planned before the refusal are gone" test ! -e "$WS/.envrc" -a ! -e "$WS/newdir2"
check "... and the command did not run" test ! -e "$WS/marker-symlink3"
rm -f -- "$WS/.profile"

mkfifo "$WS/fifo"
rf_run --protect fifo -- "$PROBE" write "$WS/marker-fifo"
is "$RF_RC" 125 "--protect a FIFO: exit 125"
like "$RF_ERR" 'not a file or directory' "... 'not a file or directory'"
check "... and the command did not run" test ! -e "$WS/marker-fifo"
rm -f -- "$WS/fifo"

deep=d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d
rf_run --protect "$deep" -- "$PROBE" write "$WS/marker-deep"
is "$RF_RC" 125 "--protect 17 components deep: exit 125"
like "$RF_ERR" 'too long' "... 'too long'"
check "... the 16 placeholder directories made on the way are gone" test ! -e "$WS/d"
check "... and the command did not run" test ! -e "$WS/marker-deep"

for bad in ../outside /etc/passwd x/../y; do
	rf_run --protect "$bad" -- "$PROBE" write "$WS/marker-bad"
	is "$RF_RC" 125 "--protect '$bad': exit 125 (relative, no . or .. components)"
	check "... and the command did not run" test ! -e "$WS/marker-bad"
done

# ---- a stopped run cleans up too ------------------------------------------------------------------

rf_start --protect .stopped-placeholder -- /bin/sh -c "touch '$WS/stop.ready'; while :; do sleep 0.05; done"
register_pid "$RF_PID"
for _ in $(seq 1 1200); do
	[ -e "$WS/stop.ready" ] && break
	kill -0 "$RF_PID" 2>/dev/null || break
	sleep 0.05
done
if [ -e "$WS/stop.ready" ]; then
	check "while the run is alive, its placeholder exists on the host" test -f "$WS/.stopped-placeholder"
	kill -TERM "$RF_PID"
	rf_wait
	is "$RF_RC" 143 "SIGTERM to ringfence: the run ends (143)"
	check "... and the placeholder is gone" test ! -e "$WS/.stopped-placeholder"
else
	rf_wait
	not_ok "a held run with --protect starts" "$(_rf_last_run_diag)"
fi

# ---- fail closed ---------------------------------------------------------------------------------

if [ "$have_test_bin" = 1 ]; then
	RF_ENV=(RINGFENCE_TEST_FAIL=protect)
	RF_RUN_BIN=$RF_TEST_BIN rf_run --protect .envrc -- "$PROBE" write "$WS/marker-protect"
	is "$RF_RC" 125 "RINGFENCE_TEST_FAIL=protect with a protected path: exit 125"
	if one_line "$RF_ERR" && [[ $RF_ERR =~ ^ringfence:\ .*\(protect\) ]]; then
		ok "... one stderr line naming the step (protect)"
	else
		not_ok "... one stderr line naming the step (protect)" "stderr: $RF_ERR"
	fi
	check "... the command did not run" test ! -e "$WS/marker-protect"
	check "... and the placeholder is gone" test ! -e "$WS/.envrc"
	# no protected path in play (no .git, no --protect): nothing to fail
	saved_ws=$WS
	rf_mktemp /tmp
	WS=$REPLY
	install_probe
	RF_RUN_BIN=$RF_TEST_BIN rf_run -- "$PROBE" write "$WS/marker-noprotect"
	is "$RF_RC" 0 "RINGFENCE_TEST_FAIL=protect without a protected path: the run proceeds"
	check "... and the command ran" test -e "$WS/marker-noprotect"
	RF_ENV=()
	WS=$saved_ws
	PROBE=$WS/rf-probe
else
	skip "RINGFENCE_TEST_FAIL=protect refuses the run" "no test build (RF_TEST_BIN)"
fi

# ---- rootless (uid 65534, workspace owned by it) ---------------------------------------------------

new_workspace
# ---- the workspace turned into a repository git would pick up ----------------------------------

# Invalidate .git (remove its HEAD) and make the workspace root a bare
# repository with core.fsmonitor: the host's next git status would run it.
# A root-level HEAD and config are held read-only (placeholders when
# missing), so the root cannot become a git dir.
if [ "$have_git" = 1 ]; then
	saved_ws=$WS
	rf_mktemp /tmp
	WS=$REPLY
	git_setup || bail_out "git init in $WS failed"
	pwned="$WS.pwned"
	# shellcheck disable=SC2016 # expanded by the shell inside the run
	rf_run -- /bin/sh -c '
		rm -f .git/HEAD
		git init -q --bare . 2>/dev/null
		git config -f ./config core.bare false 2>/dev/null
		git config -f ./config core.worktree "$PWD" 2>/dev/null
		git config -f ./config core.fsmonitor "touch '"$pwned"'; false" 2>&1 | head -n 1'
	like "$RF_OUT" 'Device or resource busy|Read-only file system' "bare-root attack: writing ./config inside fails (EBUSY/EROFS)"
	(cd "$WS" && git status >/dev/null 2>&1)
	check "bare-root attack: git status on the host ran nothing the run planted" test ! -e "$pwned"
	check "... and no config file was left at the workspace root" test ! -s "$WS/config"
	rm -f "$pwned"

	# A worktree checkout: .git is a "gitdir:" file. Rewritten, it would
	# point git at a config the run wrote; it is held read-only.
	rf_mktemp /tmp
	WS=$REPLY # a fresh repository: the one above lost its .git/HEAD
	git_setup || bail_out "git init in $WS failed"
	repo=$WS
	rf_mktemp /tmp
	wt=$REPLY/wt
	if git -C "$repo" worktree add -q "$wt" 2>/dev/null; then
		WS_WT=$wt
		WS=$wt
		# shellcheck disable=SC2016
		rf_run -- /bin/sh -c '
			mkdir -p evil/objects evil/refs/heads && echo "ref: refs/heads/master" >evil/HEAD
			printf "[core]\n\tbare = false\n\tworktree = %s\n\tfsmonitor = \"touch '"$pwned"'; false\"\n" "$PWD" >evil/config
			printf "gitdir: evil\n" >.git 2>&1 || echo refused'
		like "$RF_OUT$RF_ERR" 'Read-only file system|refused' "worktree attack: rewriting the .git file inside fails (EROFS)"
		like "$(cat "$WS_WT/.git")" '^gitdir: ' "... the .git file on the host still points at the real git dir"
		(cd "$WS_WT" && git status >/dev/null 2>&1)
		check "worktree attack: git status on the host ran nothing the run planted" test ! -e "$pwned"
		rm -f "$pwned"
		git -C "$repo" worktree prune 2>/dev/null
	else
		skip "worktree attack" "git worktree add failed"
	fi
	WS=$saved_ws
fi

install_op
[ "$have_git" = 1 ] && { git_setup || bail_out "git init in $WS failed"; }
if as_user_setup; then
	export RF_AS_USER=1
	if [ "$have_git" = 1 ]; then
		before_config=$(md5sum <"$WS/.git/config")
		rf_run -- /bin/sh -c "PROBE='$PROBE' OP='$OP'; $GIT_ATTACKS"
		is "$RF_RC" 0 "rootless git workspace: the run exits 0"
		check_git_attacks "rootless"
		is "$(md5sum <"$WS/.git/config")" "$before_config" "rootless: .git/config is unchanged on the host"
		check "rootless: no pre-commit hook on the host" test ! -e "$WS/.git/hooks/pre-commit"
	else
		skip "rootless: default protection in a git workspace" "git is not installed"
	fi
	rf_run --protect .envrc --protect newdir/ -- /bin/sh -c "$T_FN
		t stat \"$PROBE\" lstat .envrc
		t write \"$PROBE\" write .envrc evil
		t unlink $OP unlink .envrc
		t newdir \"$PROBE\" create newdir/f"
	like "$(result_of stat)" '^ok mode=0444 type=file uid=65534 gid=65534 ' "rootless: the .envrc placeholder is owned by 65534"
	expect write "errno=EROFS" "rootless: writing the placeholder -> EROFS"
	expect unlink "errno=EBUSY" "rootless: removing it -> EBUSY"
	expect newdir "errno=EROFS" "rootless: creating a file in a directory placeholder -> EROFS"
	check "rootless: after the run the placeholders are gone" test ! -e "$WS/.envrc" -a ! -e "$WS/newdir"
	unset RF_AS_USER
else
	skip "rootless runs" "the tests do not run as root"
fi

done_testing
