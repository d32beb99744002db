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
# Under sudo (SUDO_UID, SUDO_GID, SUDO_USER of a second user the test
# makes, in a root-started run's environment) that user is the caller, as
# the daemon's is (daemon_caller.sh): --ro of a file only root may open for
# it (a third user's 0600 file, which the control without SUDO_UID reads;
# root's own 0600 file) is refused before the command runs (125, "uid U
# cannot open it"), while its own 0600 file is read and what --rw writes
# lands as it; --profile git gives the run its git identity (from its home
# in passwd, not $HOME); --publish serves its connections (the control
# without SUDO_UID refuses them) and still not another user's.
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

# ---- sudo: the user who ran it is the caller (SUDO_UID) ------------------------------------------
N_SUDO=18
if ! command -v useradd >/dev/null || ! command -v git >/dev/null || ! command -v python3 >/dev/null; then
	for _ in $(seq 1 "$N_SUDO"); do skip "sudo's caller" "needs useradd, git and python3"; done
	done_testing
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
rf_mktemp /tmp
SB=$REPLY
chmod 0755 "$SB"
SNAME=rft$(printf '%x' $$)s$RANDOM
SH=$SB/home
useradd -M -d "$SH" -s /bin/sh -U "$SNAME" || bail_out "cannot add user $SNAME"
register_user "$SNAME"
SU=$(id -u "$SNAME")
SG=$(id -g "$SNAME")
mkdir -p "$SH/ws" "$SH/out"
printf '[user]\n\tname = Sudo Caller\n\temail = sudo-caller@example.test\n' >"$SH/.gitconfig"
printf 'token=sudo-callers-own\n' >"$SH/.npmrc"
chown -R "$SU:$SG" "$SH"
chmod 0700 "$SH"
chmod 0600 "$SH/.npmrc"
ROOTF=$SB/root-only
printf 'root-only\n' >"$ROOTF"
chmod 0600 "$ROOTF"
# root's HOME as sudo may leave it: another git identity, which must not
# reach the caller's run
RH=$SB/roothome
mkdir -p "$RH"
printf '[user]\n\tname = Root Person\n\temail = root@example.test\n' >"$RH/.gitconfig"
SUDO_ENV=(HOME="$RH" SUDO_UID="$SU" SUDO_GID="$SG" SUDO_USER="$SNAME" SUDO_COMMAND="$RF_BIN run")
# the caller's runs start in its own directory, as `cd ~/project && sudo ringfence run` does
RF_CWD=$SH/ws

rf_run --ro "$uh/.npmrc" -- cat "$uh/.npmrc"
is "$RF_OUT" "token=private-value" "control: without SUDO_UID root's run reads a third user's 0600 file (--ro)"
RF_ENV=("${SUDO_ENV[@]}")
rf_run --ro "$uh/.npmrc" -- cat "$uh/.npmrc"
is "$RF_RC" 125 "SUDO_UID of a second user: --ro of a file only root may open for it is refused (125)"
like "$RF_ERR" "^ringfence: $uh/\\.npmrc: uid $SU cannot open it: Permission denied" "... one line saying why (EACCES as that uid)"
unlike "$RF_OUT" "private-value" "... and nothing of it is shown"
rf_run --ro "$ROOTF" -- cat "$ROOTF"
is "$RF_RC" 125 "... so is root's own 0600 file (125)"
like "$RF_ERR" "$ROOTF: uid $SU cannot open it" "... saying why"
rf_run --ro "$SH/.npmrc" -- cat "$SH/.npmrc"
is "$RF_RC" 0 "--ro of the caller's own 0600 file under sudo: the run starts"
is "$RF_OUT" "token=sudo-callers-own" "... and reads it"
rf_run --rw "$SH/out" -- sh -c "echo written >'$SH/out/new'"
is "$(cat "$SH/out/new" 2>/dev/null)" "written" "--rw of the caller's own directory under sudo: the run writes there"
is "$(stat -c '%u:%g' "$SH/out/new" 2>/dev/null)" "$SU:$SG" "... and the file lands as the caller"
# shellcheck disable=SC2016 # expanded in the run
rf_run --profile git -- sh -c 'echo "$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"; git config user.name'
is "$RF_RC" 0 "--profile git under sudo: the run starts"
like "$RF_OUT" "^Sudo Caller <sudo-caller@example\\.test>"$'\n'"Sudo Caller$" \
	"... with the caller's git identity (its home from passwd), in the environment and ~/.gitconfig"
unlike "$RF_OUT" "Root Person" "... not the identity in root's \$HOME"

# --publish: the caller's connections are served; without SUDO_UID they
# are refused (the gap this closes), and another user's still are
read -r HP < <($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$SH/ws/serve.py" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8766))
s.listen(8)
open("ready", "w").close()
while True:
    c, _ = s.accept()
    data = c.recv(100)
    if data == b"quit":
        break
    c.sendall(b"echo:" + data)
    c.close()
PY
chown "$SU:$SG" "$SH/ws/serve.py"
PCLIENT='
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
    s.sendall(sys.argv[2].encode())
    s.shutdown(socket.SHUT_WR)
    got = s.recv(100)
except OSError as e:
    got = b""
print("got=" + got.decode() if got else "eof")
'
as_caller() { setpriv --reuid="$SU" --regid="$SG" --init-groups "$PY" -c "$PCLIENT" "$@"; }
wait_ready() {
	for _ in $(seq 1 400); do
		[ -e "$SH/ws/ready" ] && return 0
		kill -0 "$RF_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
published() { # ENV-OR-NOTHING: a run serving 127.0.0.1:HP; sets out_caller, out_nobody
	rm -f "$SH/ws/ready"
	rf_start --timeout 60s --publish "$HP:8766" -- python3 serve.py
	wait_ready || diag "the run's server did not start"
	out_caller=$(as_caller "$HP" hi)
	out_nobody=$(as_user "$PY" -c "$PCLIENT" "$HP" hi)
	"$PY" -c "$PCLIENT" "$HP" quit >/dev/null
	rf_wait
}
RF_ENV=()
published
is "$out_caller" "eof" "control: without SUDO_UID, the second user's connection to a root run's published port is refused"
like "$(grep '"event":"publish.refused"' "$RF_STATE"/audit/audit-*.jsonl | tail -n 2)" "\"peer_uid\":$SU," \
	"... recorded: publish.refused with its uid"
RF_ENV=("${SUDO_ENV[@]}")
published
is "$out_caller" "got=echo:hi" "--publish under sudo: the caller's connection is served"
is "$out_nobody" "eof" "... another user's (uid 65534) still refused"
like "$(grep '"event":"publish.refused"' "$RF_STATE"/audit/audit-*.jsonl | tail -n 1)" '"peer_uid":65534' \
	"... and recorded with its uid"
RF_ENV=()
RF_CWD=

done_testing
