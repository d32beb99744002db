#!/bin/bash
# tests/integration/caller_files.sh — a root-started run reads what root
# names with --ro even where the file is another user's and private (a
# user's 0600 ~/.npmrc in a 0700 home, issue 16): the path is idmapped from
# its owner to the run's own user, read-only. Its control: the build
# before this showed such a file as nobody's, unreadable (EACCES) — here,
# the same file without --ro is not in the run at all, and a write through
# --ro is refused (EROFS) and leaves the host file as it was. --rw of that
# user's directory: the run's files land as that user (a setuid bit still
# refused); root's own directories are never lent for writing, nor its
# private files for reading (harden_identity.sh: the run is not host root).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (a second user's files, root-started runs)"
new_workspace

uh=$WS.userhome
register_dir "$uh"
mkdir -p "$uh/.config/tool"
printf 'token=private-value\n' >"$uh/.npmrc"
printf 'setting=1\n' >"$uh/.config/tool/config"
chown -R 1234:1234 "$uh"
chmod 0700 "$uh" "$uh/.config" "$uh/.config/tool"
chmod 0600 "$uh/.npmrc" "$uh/.config/tool/config"

rf_run -- cat "$uh/.npmrc"
isnt "$RF_RC" 0 "control: without --ro the user's file is not in the run"
rf_run --ro "$uh/.npmrc" -- cat "$uh/.npmrc"
is "$RF_RC" 0 "--ro of another user's 0600 file: readable in a root-started run"
is "$RF_OUT" "token=private-value" "... its content"
rf_run --ro "$uh/.config/tool" -- cat "$uh/.config/tool/config"
is "$RF_OUT" "setting=1" "--ro of another user's 0700 directory: its files readable"
rf_run --ro "$uh/.npmrc" -- sh -c "echo changed >>'$uh/.npmrc'"
isnt "$RF_RC" 0 "a write to it is refused"
like "$RF_ERR" 'Read-only file system' "... by the read-only mount (EROFS)"
is "$(cat "$uh/.npmrc")" "token=private-value" "... and the host file is as it was"
is "$(stat -c '%u:%g %a' "$uh/.npmrc")" "1234:1234 600" "... owned and moded as before"

# --rw of another user's directory: what the run writes lands as that user
mkdir -p "$uh/work"
chown 1234:1234 "$uh/work"
chmod 0700 "$uh/work"
rf_run --rw "$uh/work" -- sh -c "echo made >'$uh/work/new' && mkdir '$uh/work/d' && chmod 4755 '$uh/work/new'; echo chmod=\$?"
like "$RF_OUT" 'chmod=1' "--rw of another user's directory: a setuid bit is still refused (seccomp)"
is "$(cat "$uh/work/new" 2>/dev/null)" "made" "... and the run's file is there"
is "$(stat -c '%u:%g' "$uh/work/new" "$uh/work/d" 2>/dev/null | sort -u)" "1234:1234" "... owned by that user, as is its directory"
is "$(stat -c '%a' "$uh/work/new" 2>/dev/null)" "644" "... without the setuid bit"
# root's own trees are not lent for writing to a run acting as a user
# (the workspace's owner, here uid 1234)
rd=$WS.rootdir
register_dir "$rd"
mkdir -p "$rd"
chown 1234:1234 "$WS"
rf_run --rw "$rd" -- true
is "$RF_RC" 125 "--rw of a root-owned directory, in a run acting as a user: refused (125)"
like "$RF_ERR" 'is owned by root' "... saying why"
rf_run --rw "$uh/work" -- sh -c "echo as-owner >'$uh/work/ws-owner'"
is "$(stat -c '%u' "$uh/work/ws-owner" 2>/dev/null)" 1234 "control: a user's own directory, the same run: writable, as that user"
chown 0:0 "$WS"

done_testing
