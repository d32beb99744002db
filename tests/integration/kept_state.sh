#!/bin/bash
# tests/integration/kept_state.sh — `run --keep-state` (issue 16): an agent
# profile's state directory (~/.codex here, with a stand-in codex on the
# caller's PATH) is kept across runs in ringfence's own state dir
# (STATE_DIR/kept/UID/PROFILE/.codex), never in the caller's home: what a
# run writes there (a login's auth.json, its sessions) the next run with
# --keep-state finds; the profile's own files there (config.toml, a copy
# of the caller's AGENTS.md) are made anew each run, so what a run wrote
# in their place never stands in for them; its control: without
# --keep-state a run starts with none of it. The state is the run
# identity's: a run acting as another workspace owner keeps its own,
# written as that owner. `ringfence profile forget` removes it. A kept
# directory that is a symbolic link (a state dir tampered with) refuses
# the run (125). --keep-state without an agent profile is refused (125).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (runs acting as a second workspace owner)"
new_workspace

px=$WS.prefix
fh=$WS.home
register_dir "$px"
register_dir "$fh"
mkdir -p "$px/bin" "$fh"
printf '#!/bin/sh\nexec "$@"\n' >"$px/bin/codex"
chmod 0755 "$px/bin/codex" "$px" "$px/bin"
RF_ENV=("PATH=$px/bin:$PATH" "HOME=$fh")
TOK=login-$RANDOM$RANDOM
K=$RF_STATE/kept/0/codex/.codex

rf_run --profile codex --keep-state -- codex sh -c "echo $TOK >~/.codex/auth.json && mkdir -p ~/.codex/sessions && echo s1 >~/.codex/sessions/s1 && echo tampered >>~/.codex/config.toml && echo planted >~/.codex/AGENTS.md"
is "$RF_RC" 0 "--profile codex --keep-state: a run writes its login and a session into ~/.codex"
is "$(cat "$K/auth.json" 2>/dev/null)" "$TOK" "... kept in ringfence's state dir ($K)"
is "$(stat -c '%a' "$K" "$RF_STATE/kept" "$RF_STATE/kept/0" 2>/dev/null | sort -u)" 700 "... every level 0700"
check "... and nothing of it in the caller's home" test ! -e "$fh/.codex"

rf_run --profile codex --keep-state -- codex sh -c 'cat ~/.codex/auth.json ~/.codex/sessions/s1; cat ~/.codex/config.toml; ls ~/.codex'
is "$RF_RC" 0 "the next run with --keep-state starts"
like "$RF_OUT" "^$TOK"$'\n'"s1" "... and finds the login and the session"
unlike "$RF_OUT" 'tampered' "... but the profile's config.toml made anew (what the run wrote there is gone)"
like "$RF_OUT" 'sandbox_mode = "danger-full-access"' "... as the profile makes it"
unlike "$RF_OUT" 'AGENTS.md' "... and a planted AGENTS.md (the caller has none) is not there"

rf_run --profile codex -- codex sh -c 'ls -A ~/.codex; cat ~/.codex/auth.json'
like "$RF_ERR" 'auth.json: No such file' "control: without --keep-state the run starts with no login"
is "$(cat "$K/auth.json" 2>/dev/null)" "$TOK" "... and the kept one is left as it was"

# a run acting as another workspace owner keeps its own state, as that owner
ws2=$WS.ws2
register_dir "$ws2"
mkdir -p "$ws2"
chown 1234:1234 "$ws2"
RF_CWD=$ws2 rf_run --profile codex --keep-state -- codex sh -c 'cat ~/.codex/auth.json 2>&1; echo other >~/.codex/auth.json'
like "$RF_OUT" 'No such file' "a run acting as uid 1234 (its workspace's owner) does not see uid 0's kept login"
K2=$RF_STATE/kept/1234/codex/.codex
is "$(stat -c '%u:%g' "$K2" "$K2/auth.json" 2>/dev/null | sort -u)" "1234:1234" "... its own kept state is that owner's, and so is what it wrote"
is "$(cat "$K/auth.json")" "$TOK" "... uid 0's kept login untouched"

# one run at a time keeps a profile's state: a second one is refused while
# the first runs (else its files would stand in for the second's)
rf_start --profile codex --keep-state -- codex sh -c 'touch ~/.codex/holding; sleep 30'
first=$RF_PID
for _ in $(seq 1 200); do [ -e "$K/holding" ] && break; sleep 0.05; done
pid_first=$first
(
	cd "$WS" && env "PATH=$px/bin:$PATH" "HOME=$fh" "$RF_BIN" run --state-dir "$RF_STATE" \
		--profile codex --keep-state -- codex true
) >"$WS.second.out" 2>&1
is "$?" 125 "a second run keeping codex's state while the first runs: refused (125)"
like "$(cat "$WS.second.out")" 'another run keeps it now' "... saying why"
kill -TERM "$pid_first" 2>/dev/null
RF_PID=$pid_first rf_wait
rm -f "$K/holding"

# what a run leaves in the kept directory cannot stop the next one: a
# directory where the profile's config.toml goes, a mode opened up
rf_run --profile codex --keep-state -- codex sh -c 'rm -f ~/.codex/config.toml; mkdir ~/.codex/config.toml; chmod 0755 ~/.codex'
rf_run --profile codex --keep-state -- codex sh -c 'test -f ~/.codex/config.toml && echo file'
is "$RF_OUT" "file" "a kept run after one that put a directory in config.toml's place and opened the mode: starts, config.toml made anew"
is "$(stat -c '%a' "$K")" 700 "... the kept directory 0700 again"

# forget: through no symbolic link the run planted, and however deep the
# tree it made
rf_mktemp /tmp
victim=$REPLY
echo keep-me >"$victim/file"
rf_run --profile codex --keep-state -- codex sh -c "ln -s $victim ~/.codex/link; d=~/.codex/deep; for i in \$(seq 1 100); do d=\$d/d; done; mkdir -p \$d && echo bottom >\$d/f"
is "$RF_RC" 0 "a kept run plants a symbolic link and a tree 100 directories deep"
out=$("$RF_BIN" profile forget codex --state-dir "$RF_STATE")
like "$out" 'forgot' "profile forget codex: $out"
check "... uid 0's kept codex state is gone, the deep tree too" test ! -e "$RF_STATE/kept/0/codex"
is "$(cat "$victim/file" 2>/dev/null)" "keep-me" "... and what the planted link pointed to is untouched"
check "... uid 1234's is not" test -e "$K2/auth.json"
rf_run --profile codex --keep-state -- codex sh -c 'ls -A ~/.codex'
is "$RF_OUT" "config.toml" "... the next kept run starts from nothing but the profile's own config"
"$RF_BIN" profile forget codex --uid 1234 --state-dir "$RF_STATE" >/dev/null
check "profile forget --uid 1234 (root): that uid's kept state gone" test ! -e "$RF_STATE/kept/1234/codex"

# a kept directory that is a symbolic link: refused, never followed
rf_mktemp /tmp
elsewhere=$REPLY
rm -rf "$RF_STATE/kept/0/codex"
ln -s "$elsewhere" "$RF_STATE/kept/0/codex"
rf_run --profile codex --keep-state -- codex sh -c 'echo x >~/.codex/auth.json'
is "$RF_RC" 125 "a kept state directory that is a symbolic link: the run is refused (125)"
like "$RF_ERR" 'kept state .*Not a directory|kept state .*symbolic' "... naming the kept state"
check "... and nothing was written where it points" test -z "$(ls -A "$elsewhere")"
rm -f "$RF_STATE/kept/0/codex"

rf_run --profile git --keep-state -- true
is "$RF_RC" 125 "--keep-state without an agent profile: refused (125)"
like "$RF_ERR" 'keep-state keeps an agent profile' "... saying why"
done_testing
