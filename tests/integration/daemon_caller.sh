#!/usr/bin/env bash
# daemon_caller.sh — the daemon API accepts what the CLI does, with the
# caller's rights and within the operator's ceiling (issue 16): ro, rw,
# profiles and add_hosts of a start, for a real second user (a test user
# with a home, made here and removed at exit).
#
# Asserts: the user's own 0600 file given as `ro` is readable in its run
# (the legitimate path), while a root-only file is refused because the
# user cannot open it (EACCES, checked with its file-system identity, not
# root's) and a symlink in its home to that file is refused as a symbolic
# link (ELOOP) — root never resolves a path for it; `rw` of its own
# directory: the run's writes land as the user; `rw` of a directory it
# may write but does not own is refused (not its own). A profile run for
# the user: its command found on the PATH it asked for (its ~/.local/bin),
# its git identity from its own ~/.gitconfig (not the daemon's, whose HOME
# has another identity — root's start shows that one, the control), its
# ~/.claude/settings.json copied, a symlink there to root's file refused,
# and no API key from the daemon's environment in the run. Profiles and
# add_hosts beyond the ceiling are refused (403) naming the key; root may
# ask for any.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (a second user, the daemon)"
command -v curl >/dev/null || skip_all "needs curl"
command -v useradd >/dev/null || skip_all "needs useradd"
command -v git >/dev/null || skip_all "needs git"
command -v node >/dev/null || skip_all "needs node (the claude-code profile uses it)"
new_workspace
RF=$RF_BIN
records() { cat "$RF_STATE"/audit/audit-*.jsonl; }

# the test user: a unique name, its home 0700 under a test directory
rf_mktemp /tmp
BASE=$REPLY
chmod 0755 "$BASE"
UNAME=rft$(printf '%x' $$)c$RANDOM
UH=$BASE/home
useradd -M -d "$UH" -s /bin/sh -U "$UNAME" || bail_out "cannot add user $UNAME"
register_user "$UNAME"
U=$(id -u "$UNAME")
G=$(id -g "$UNAME")
mkdir -p "$UH/.local/bin" "$UH/.claude" "$UH/ws" "$UH/out"
printf '[user]\n\tname = Caller Name\n\temail = caller@example.test\n' >"$UH/.gitconfig"
printf 'mine-%s\n' "$RANDOM" >"$UH/secret.txt"
printf '{"theme": "caller-theme"}\n' >"$UH/.claude/settings.json"
printf '#!/bin/sh\necho "9.9.9 (Claude Code, fake of %s)"\n' "$UNAME" >"$UH/.local/bin/claude"
chmod 0755 "$UH/.local/bin/claude"
chown -R "$U:$G" "$UH"
chmod 0700 "$UH"
chmod 0600 "$UH/secret.txt"
# root's: a private file, and a directory the user may write but does not own
ROOTF=$BASE/root-secret
printf 'root-only\n' >"$ROOTF"
chmod 0600 "$ROOTF"
OPEN=$BASE/open
mkdir "$OPEN"
chmod 1777 "$OPEN"
# a second user whose group the caller is in: its directory the caller may
# read through the group, and its private file there
ONAME=rft$(printf '%x' $$)o$RANDOM
useradd -M -d /nonexistent -s /usr/sbin/nologin -U "$ONAME" || bail_out "cannot add user $ONAME"
register_user "$ONAME"
usermod -aG "$ONAME" "$UNAME"
TEAM=$BASE/team
mkdir "$TEAM"
printf 'other-private\n' >"$TEAM/private.txt"
chown -R "$ONAME:$ONAME" "$TEAM"
chmod 0750 "$TEAM"
chmod 0600 "$TEAM/private.txt"
# the caller's pip.conf names an index beyond the ceiling
mkdir -p "$UH/.config/pip"
printf '[global]\nindex-url = https://u:exfil-pw@exfil.example.test/simple\n' >"$UH/.config/pip/pip.conf"
chown -R "$U:$G" "$UH/.config"
# the daemon's own HOME: another git identity (what must not reach the user's run)
DH=$BASE/daemonhome
mkdir -p "$DH"
printf '[user]\n\tname = Daemon Root\n\temail = root@example.test\n' >"$DH/.gitconfig"

SOCK=$BASE/control.sock
cat >"$WS.conf" <<JSON
{"version": 1, "socket": "$SOCK", "socket_mode": "0666",
 "grants": [{"uid": $U, "agents": ["cu"], "actions": ["start-run", "get-run", "list-runs"]}],
 "ceiling": {"allow_hosts": ["api.example.test:443"], "max_timeout": "10m",
             "profiles": ["claude-code", "git", "pip"], "add_hosts": ["api.example.test:10.9.9.9"]}}
JSON
HOME=$DH ANTHROPIC_API_KEY=daemon-key-$RANDOM "$RF" daemon --state-dir "$RF_STATE" \
	--config "$WS.conf" 2>>"$WS.daemon.err" &
DPID=$!
register_pid "$DPID"
for _ in $(seq 1 600); do
	curl -s -m 1 --unix-socket "$SOCK" http://ringfence/v1/runs >/dev/null 2>&1 && break
	sleep 0.05
done

# api [--as-user] METHOD PATH [BODY]: status in API_S, body in API_B
api() {
	local out pre=()
	if [ "$1" = --as-user ]; then
		pre=(setpriv --reuid="$U" --regid="$G" --init-groups --inh-caps=-all)
		shift
	fi
	out=$("${pre[@]}" curl -s -m 20 -w '\n%{http_code}' --unix-socket "$SOCK" -X "$1" \
		${3:+-H 'Content-Type: application/json' -d "$3"} "http://ringfence$2")
	API_S=$(tail -n 1 <<<"$out")
	API_B=$(sed '$d' <<<"$out")
}
run_of() { grep -o '"run":"[^"]*"' <<<"$1" | head -n 1 | cut -d'"' -f4; }
# ended RUN: waits (bounded) for its run.exit or run.refused; its log in LOG
ended() {
	local i
	for i in $(seq 1 1200); do
		records | grep "\"run\":\"$1\"" | grep -qE '"event":"run\.(exit|refused)"' && break
		sleep 0.05
	done
	END=$(records | grep "\"run\":\"$1\"" | grep -E '"event":"run\.(exit|refused)"' | tail -n 1)
	# a refusal's record (run.refused, or a run.exit with 125) is written
	# before its supervisor's one line reaches the log: that line waited
	# for (bounded: 20 s; under load the log was read empty once, at 5 s)
	for i in $(seq 1 400); do
		[[ $END != *'"event":"run.refused"'* && $END != *'"status":125'* ]] && break
		grep -q '^ringfence: ' "$RF_STATE/logs/$1.log" 2>/dev/null && break
		sleep 0.05
	done
	LOG=$(cat "$RF_STATE/logs/$1.log" 2>/dev/null)
}
# start_as_user BODY-REST: a start as the user, in its workspace; RUN, LOG, END
start_as_user() {
	api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",$1}"
	RUN=$(run_of "$API_B")
	[ -n "$RUN" ] && ended "$RUN"
}

# ---- what the caller asked is in no process's command line --------------------
# (every local user may read /proc/PID/cmdline; the daemon passes the
# supervisor its typed request in a sealed memfd: `ringfence run --request-fd 3`)
TOK=tok-$RANDOM$RANDOM$RANDOM
api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",\"env\":{\"CALLER_TOKEN\":\"$TOK\"},\"task\":\"task-$TOK\",\"argv\":[\"sh\",\"-c\",\"echo \\\"in-run=\$CALLER_TOKEN\\\"; sleep 30\"]}"
is "$API_S" 201 "a run with an env value from the caller: started ($API_B)"
RUN=$(run_of "$API_B")
for _ in $(seq 1 200); do grep -q in-run= "$RF_STATE/logs/$RUN.log" 2>/dev/null && break; sleep 0.05; done
like "$(cat "$RF_STATE/logs/$RUN.log" 2>/dev/null)" "in-run=$TOK" "... the run's environment holds it (the legitimate path)"
printf '%s\n' "$TOK" >"$WS.tok" # (from a file: grep's own command line must not hold it)
hits=$(grep -l -a -F -f "$WS.tok" /proc/[0-9]*/cmdline 2>/dev/null | tr '\n' ' ')
SUP_CMD=$(tr '\0' ' ' <"/proc/$(grep -o '"pid":[0-9]*' "$RF_STATE/runs/$RUN/info.json" 2>/dev/null | cut -d: -f2)/cmdline" 2>/dev/null)
is "$hits" "" "... and no process's command line does (the supervisor's: $SUP_CMD)"
is "$SUP_CMD" "ringfence run --request-fd 3 " "... the supervisor's is the request's fd alone (the typed request, supervisor/runwire.h)"
"$RF" kill --state-dir "$RF_STATE" "$RUN" >/dev/null 2>&1
ended "$RUN"

# ---- ro ----------------------------------------------------------------------
start_as_user "\"ro\":[\"$UH/secret.txt\"],\"argv\":[\"cat\",\"$UH/secret.txt\"]"
is "$API_S" 201 "ro of the user's own 0600 file: started"
is "$LOG" "$(cat "$UH/secret.txt")" "... and readable in its run"
start_as_user "\"ro\":[\"$ROOTF\"],\"argv\":[\"cat\",\"$ROOTF\"]"
like "$END" '"event":"run.refused"' "ro of a root-only file, for the user: the run is refused"
like "$LOG" "uid $U cannot open it: Permission denied" "... because the user cannot open it (EACCES as the user, not root)"
unlike "$LOG" 'root-only' "... and nothing of it reached the run"
ln -s "$ROOTF" "$UH/link"
chown -h "$U:$G" "$UH/link"
start_as_user "\"ro\":[\"$UH/link\"],\"argv\":[\"cat\",\"$UH/link\"]"
like "$END" '"event":"run.refused"' "ro of a symlink in the user's home to that file: refused"
like "$LOG" 'goes through a symbolic link' "... as a symbolic link (ELOOP), never followed by root"
unlike "$LOG" 'root-only' "... and nothing of it reached the run"

# ro of another user's directory the caller reads through a group: mounted
# with the rights of others, never that user's (an idmap from its owner
# would hand the run its private files)
start_as_user "\"ro\":[\"$TEAM\"],\"argv\":[\"sh\",\"-c\",\"cat $TEAM/private.txt; echo rc=\$?\"]"
like "$LOG" 'Permission denied' "ro of another user's directory read through a group: its private file is not readable in the run (EACCES)"
unlike "$LOG" 'other-private' "... nothing of it reached the run"
like "$(setpriv --reuid="$U" --regid="$G" --init-groups cat "$TEAM/private.txt" 2>&1)" 'Permission denied' \
	"... control: the caller cannot read it on the host either"

# ---- rw ----------------------------------------------------------------------
start_as_user "\"rw\":[\"$UH/out\"],\"argv\":[\"sh\",\"-c\",\"echo made >$UH/out/new\"]"
like "$END" '"event":"run.exit"' "rw of the user's own directory: the run ran"
is "$(stat -c '%u:%g' "$UH/out/new" 2>/dev/null)" "$U:$G" "... and its write landed as the user"
start_as_user "\"rw\":[\"$OPEN\"],\"argv\":[\"sh\",\"-c\",\"echo x >$OPEN/new\"]"
like "$END" '"event":"run.refused"' "rw of a directory the user may write but does not own: refused"
like "$LOG" "is not owned by uid $U" "... as not its own"
check "... nothing was written there" test ! -e "$OPEN/new"

# ---- the ceiling -----------------------------------------------------------------
api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",\"profiles\":[\"codex\"],\"argv\":[\"true\"]}"
is "$API_S" 403 "a profile beyond the ceiling: 403"
like "$API_B" 'ceiling.profiles' "... naming ceiling.profiles"
api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",\"add_hosts\":[\"api.example.test:127.0.0.1\"],\"argv\":[\"true\"]}"
is "$API_S" 403 "an add_host beyond the ceiling: 403"
like "$API_B" 'ceiling.add_hosts' "... naming ceiling.add_hosts"
api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",\"profiles\":[\"Bad/Name\"],\"argv\":[\"true\"]}"
is "$API_S" 400 "a profile name that is not one: 400"
start_as_user "\"add_hosts\":[\"api.example.test:10.9.9.9\"],\"argv\":[\"true\"]"
like "$END" '"event":"run.exit"' "an add_host within the ceiling: the run ran"

# ---- profiles ----------------------------------------------------------------------
setpriv --reuid="$U" --regid="$G" --init-groups env HOME="$UH" git -C "$UH/ws" init -q 2>/dev/null
start_as_user "\"profiles\":[\"git\"],\"argv\":[\"sh\",\"-c\",\"git commit -q --allow-empty -m from-run && git log -1 --format=%an/%ae\"]"
is "$API_S" 201 "a git profile run for the user: started"
is "$LOG" "Caller Name/caller@example.test" "... git commit works, with the user's identity from its own ~/.gitconfig"
start_as_user "\"profiles\":[\"claude-code\"],\"env\":{\"PATH\":\"$UH/.local/bin:/usr/bin:/bin\"},\"argv\":[\"sh\",\"-c\",\"claude --version; cat \$HOME/.claude/settings.json; echo key=\${ANTHROPIC_API_KEY:-none}\"]"
is "$API_S" 201 "a claude-code profile run for the user: started"
like "$LOG" "9.9.9 \\(Claude Code, fake of $UNAME\\)" "... its command found on the PATH it asked for (~/.local/bin, mounted)"
like "$LOG" 'caller-theme' "... its ~/.claude/settings.json copied into the run"
like "$LOG" 'key=none' "... and no API key from the daemon's environment"
# keep_state: the caller's agent state kept across its runs, its own
CCRUN="\"profiles\":[\"claude-code\"],\"keep_state\":true,\"env\":{\"PATH\":\"$UH/.local/bin:/usr/bin:/bin\"}"
start_as_user "$CCRUN,\"argv\":[\"sh\",\"-c\",\"echo kept-$U >\$HOME/.claude/login\"]"
KC=$RF_STATE/kept/$U/claude-code/.claude
is "$(stat -c '%u' "$KC/login" 2>/dev/null)" "$U" "keep_state through the API: the caller's run's agent state kept as the caller's"
start_as_user "$CCRUN,\"argv\":[\"sh\",\"-c\",\"cat \$HOME/.claude/login\"]"
is "$LOG" "kept-$U" "... and its next kept run finds it"
check "... never in the caller's own ~/.claude" test ! -e "$UH/.claude/login"
ln -sf "$ROOTF" "$UH/.claude/CLAUDE.md"
chown -h "$U:$G" "$UH/.claude/CLAUDE.md"
start_as_user "\"profiles\":[\"claude-code\"],\"env\":{\"PATH\":\"$UH/.local/bin:/usr/bin:/bin\"},\"argv\":[\"true\"]"
like "$END" '"event":"run.refused"' "a profile file in the user's home that is a symlink to root's file: refused"
like "$LOG" 'symbolic link' "... as a symbolic link"
unlike "$LOG" 'root-only' "... and nothing of it reached the run"
rm -f "$UH/.claude/CLAUDE.md"

# a profile's credential file names a host: the caller's own file does not
# allow it (that would reach past the ceiling); the request's allow_hosts
# may, within the ceiling
PIPRUN="\"profiles\":[\"pip\"],\"env\":{\"PATH\":\"/usr/bin:/bin\"},\"argv\":[\"sh\",\"-c\",\"cat \$HOME/.config/pip/pip.conf\"]"
start_as_user "$PIPRUN"
like "$END" '"status":125' "a pip profile run whose pip.conf names an index the request does not allow: refused (125)"
like "$LOG" 'no allow rule lets the run reach exfil.example.test' "... its index is not allowed by the caller's own file"
unlike "$LOG" 'exfil-pw' "... and nothing of the password reached the run"
api --as-user POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$UH/ws\",\"allow_hosts\":[\"exfil.example.test\"],$PIPRUN}"
is "$API_S" 403 "... asking for that index's host beyond the ceiling: 403"
printf '[global]\nindex-url = https://u:in-ceiling-pw@api.example.test/simple\n' >"$UH/.config/pip/pip.conf"
start_as_user "\"allow_hosts\":[\"api.example.test:443\"],$PIPRUN"
like "$END" '"event":"run.exit"' "control: an index within the ceiling, asked for: the run ran"
like "$LOG" 'index-url = https://u:[A-Za-z0-9_-]{20,}@api.example.test/simple' "... its pip.conf copy holds a placeholder"
unlike "$LOG" 'in-ceiling-pw' "... not the password"

# control: root's start reads the daemon's own identity (the mechanism works,
# and what the user's run got was the user's)
git -C "$WS" init -q 2>/dev/null
api POST /v1/runs "{\"agent\":\"cu\",\"workspace\":\"$WS\",\"profiles\":[\"git\"],\"argv\":[\"sh\",\"-c\",\"git commit -q --allow-empty -m r && git log -1 --format=%an\"]}"
is "$API_S" 201 "control: root's git profile run: started"
ended "$(run_of "$API_B")"
is "$LOG" "Daemon Root" "... with the daemon's own identity (HOME of the daemon)"

check "the audit chain verifies" "$RF" audit verify --state-dir "$RF_STATE"
done_testing
