#!/bin/bash
# tests/integration/caller_files.sh — a root-started run reads what root
# names with --ro even where the file is another user's and private (a
# user's 0600 ~/.npmrc in a 0700 home, issue 16): the path is idmapped from
# its owner to the run's own user, read-only. Its control: the build
# before this showed such a file as nobody's, unreadable (EACCES) — here,
# the same file without --ro is not in the run at all, and a write through
# --ro is refused (EROFS) and leaves the host file as it was.
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

done_testing
