#!/usr/bin/env bash
# secrets.sh — run-bound secrets (issue 6): each run gets only the secrets
# bound to it, as a grant that dies with the run.
#
# Asserts: the store seals each version (no plaintext on disk; `secret ls`
# shows no value; a ciphertext moved to another name or version does not
# open and refuses the run); env, file and broker deliveries give the run
# exactly its value; the file is 0400 on a read-only tmpfs (no link, no new
# file: EROFS); the broker refuses names not granted (and records
# secret.denied); a ttl revokes mid-run (broker "expired", file ENOENT,
# secret.revoke reason=ttl) and the run's end revokes the rest; exec
# providers (a fake vault CLI of the test's own) get a clean environment
# plus pass_env; a failing or hanging provider refuses the run (125, the
# command never runs, secret.provider_error); run B, at the same time as
# run A holds a secret, finds it through no path (/proc, the store and key
# files, A's broker socket and /run/secrets, the audit log); A's
# supervisor cannot be read or dumped by the same uid (non-dumpable, no
# core); a value hidden in a DNS name or a request path is redacted in
# the records; --mask-output masks a value split across writes and its
# base64 (three offsets, URL-safe), hex, HEX, URL and upper-cased forms,
# keeping a near miss; after all
# runs the plaintext is nowhere in the state dir, the audit log, /tmp or
# ringfence's output files; the audit chain verifies.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
new_workspace

LOG="$RF_STATE/audit"
records() { cat "$LOG"/audit-*.jsonl; }
rnd() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
RF=$RF_BIN

# Values are random and never written to a file by this test: a plaintext
# found on disk afterwards came from ringfence.
VAL=sv$(rnd 12)
VAL2=tv$(rnd 12)
VAL3=ev$(rnd 12)
VALX=xv$(rnd 12)

# ---- the store ---------------------------------------------------------------------
out=$(printf '%s\n' "$VAL" | "$RF" secret set --state-dir "$RF_STATE" tok 2>&1)
is "$?" 0 "secret set reads the value from stdin ($out)"
like "$out" "tok version 1" "... and reports version 1"
printf '%s' "$VAL2" | "$RF" secret set --state-dir "$RF_STATE" tok2 >/dev/null 2>&1
printf '%s' "other-$VAL2" | "$RF" secret set --state-dir "$RF_STATE" tok2 >/dev/null 2>&1
ls_out=$("$RF" secret ls --state-dir "$RF_STATE")
like "$ls_out" 'tok2 +2 +2' "setting again adds a version (tok2: version 2 of 2)"
unlike "$ls_out" "$VAL" "secret ls shows no value"
mode=$(stat -c %a "$RF_STATE/secrets.key")
is "$mode" 600 "the master key file is created 0600 on first use"
is "$(stat -c %s "$RF_STATE/secrets/tok/v000001")" $((48 + ${#VAL} + 16)) \
	"a version is one sealed record (header, ciphertext, tag)"
out=$("$RF" secret set --state-dir "$RF_STATE" tok "$VAL" 2>&1 </dev/null)
isnt "$?" 0 "a value on the command line is refused (argv is public): $(first_line "$out")"
out=$(printf x | "$RF" secret set --state-dir "$RF_STATE" ../escape 2>&1)
isnt "$?" 0 "an invalid name is refused: $(first_line "$out")"
check "... and nothing was created outside the store" test ! -e "$RF_STATE/escape"

# ---- env, file and broker delivery ---------------------------------------------------------
rf_run --secret T=store:tok --secret-file db.pem=store:tok --secret-broker api=store:tok2 \
	-- /bin/sh -c 'printf "%s" "$T" | sha256sum | cut -c1-64
		sha256sum </run/secrets/db.pem | cut -c1-64
		ringfence-secret api | sha256sum | cut -c1-64
		stat -c "%a %U" /run/secrets/db.pem
		echo "$RINGFENCE_BROKER"
		ln /run/secrets/db.pem /run/secrets/copy 2>&1 | sed "s/.*: //"
		: >/run/secrets/new 2>&1 | sed "s/.*: //"; echo x >/run/secrets/new 2>/dev/null || echo refused
		ringfence-secret tok; echo "rc=$?"; echo "$RINGFENCE_RUN_ID"
		stat -f -c %T /run/secrets'
is "$RF_RC" 0 "a run with env, file and broker grants: exit 0 ($(first_line "$RF_ERR"))"
is "$(sed -n 1p <<<"$RF_OUT")" "$(sha "$VAL")" "env delivery: \$T holds the value"
is "$(sed -n 2p <<<"$RF_OUT")" "$(sha "$VAL")" "file delivery: /run/secrets/db.pem holds the value"
is "$(sed -n 3p <<<"$RF_OUT")" "$(sha "other-$VAL2")" "broker delivery: ringfence-secret api gives the latest version"
is "$(sed -n 4p <<<"$RF_OUT" | cut -d' ' -f1)" 400 "the file is 0400"
is "$(sed -n 5p <<<"$RF_OUT")" /run/ringfence/broker.sock "RINGFENCE_BROKER names the run's broker socket"
is "$(sed -n 6p <<<"$RF_OUT")" "Read-only file system" "no hard link to a value: the run's /run/secrets is read-only (EROFS)"
is "$(sed -n 7p <<<"$RF_OUT")" refused "no new file in /run/secrets"
is "$(sed -n 8p <<<"$RF_OUT")" rc=1 "the broker refuses a name not granted to the run (ringfence-secret exits 1)"
like "$RF_ERR" "tok: unknown" "... saying 'unknown'"
A=$(sed -n 9p <<<"$RF_OUT")
is "$(sed -n 10p <<<"$RF_OUT")" ramfs "/run/secrets is a ramfs: its pages are never swapped out"
n=$(records | grep "\"run\":\"$A\"" | grep -c '"event":"secret.grant"')
is "$n" 3 "secret.grant recorded for each binding"
g=$(records | grep "\"run\":\"$A\"" | grep '"event":"secret.grant"' | grep '"name":"api"')
like "$g" '"source":"store"' "... with the source kind"
like "$g" '"delivery":"broker"' "... the delivery"
like "$g" '"secret_version":2' "... the version"
like "$g" '"fingerprint":"[0-9a-f]{32}"' "... and a keyed fingerprint"
like "$(records | grep "\"run\":\"$A\"" | grep '"event":"secret.read"')" '"name":"api"' \
	"the broker read is recorded (secret.read)"
like "$(records | grep "\"run\":\"$A\"" | grep '"event":"secret.denied"')" '"reason":"unknown"' \
	"the refused read is recorded (secret.denied reason=unknown)"
revokes=$(records | grep "\"run\":\"$A\"" | grep '"event":"secret.revoke"')
is "$(grep -c '"reason":"run ended"' <<<"$revokes")" 3 "the run's end revokes every grant (secret.revoke)"
like "$(grep '"name":"db.pem"' <<<"$revokes")" '"effect":"file removed"' "... the file is removed"

# ---- a ciphertext moved to another name or version does not open --------------------------
mkdir -m 0700 "$RF_STATE/secrets/tok3"
cp "$RF_STATE/secrets/tok/v000001" "$RF_STATE/secrets/tok3/v000001"
rm -f "$WS/swap-ran"
rf_run --secret T=store:tok3 -- /bin/sh -c "touch '$WS/swap-ran'"
is "$RF_RC" 125 "tok's version 1 copied in as tok3 version 1: the run is refused (125)"
like "$RF_ERR" "tok3 version 1 does not open" "... because it does not open under tok3's name"
check "... and the command did not run" test ! -e "$WS/swap-ran"
cp "$RF_STATE/secrets/tok2/v000001" "$RF_STATE/secrets/tok2/v000003"
printf '\003' | dd of="$RF_STATE/secrets/tok2/v000003" bs=1 seek=8 conv=notrunc status=none
rf_run --secret T=store:tok2 -- true
is "$RF_RC" 125 "tok2's version 1 relabelled as its version 3 (header and file name): refused"
like "$RF_ERR" "tok2 version 3 does not open" "... the version is sealed in too"
rm -f "$RF_STATE/secrets/tok2/v000003"
cp "$RF_STATE/secrets/tok2/v000001" "$RF_STATE/secrets/tok2/v000003"
rf_run --secret T=store:tok2 -- true
like "$RF_ERR" "tok2 version 3: damaged record" "a record whose header names another version: refused as damaged"
rm -f "$RF_STATE/secrets/tok2/v000003"
rm -rf "$RF_STATE/secrets/tok3"
rf_run --secret T=store:tok2@1 -- /bin/sh -c 'printf "%s" "$T" | sha256sum | cut -c1-64'
is "$RF_OUT" "$(sha "$VAL2")" "control: store:tok2@1 still opens version 1"

# ---- ttl: revoked mid-run ------------------------------------------------------------------
cat >"$WS.ttl.json" <<'JSON'
{"version": 1, "secrets": [
  {"name": "short", "deliver": "broker", "from": "store:tok", "ttl": "5s"},
  {"name": "short.txt", "deliver": "file", "from": "store:tok", "ttl": "5s"},
  {"name": "long", "deliver": "broker", "from": "store:tok2"}]}
JSON
rf_run -p "$WS.ttl.json" -- /bin/sh -c 'ringfence-secret short >/dev/null && echo read1
	test -e /run/secrets/short.txt && echo file1
	i=0; while [ -e /run/secrets/short.txt ] && [ $i -lt 1200 ]; do i=$((i + 1)); sleep 0.05; done
	ringfence-secret short >/dev/null; echo "rc=$?"
	cat /run/secrets/short.txt 2>&1 >/dev/null | sed "s/.*: //"
	ringfence-secret long >/dev/null && echo long-ok; echo "$RINGFENCE_RUN_ID"'
is "$(sed -n 1,2p <<<"$RF_OUT" | tr '\n' ' ')" "read1 file1 " "before its ttl the grant serves (broker and file)"
is "$(sed -n 3p <<<"$RF_OUT")" rc=1 "after the ttl the broker refuses"
like "$RF_ERR" "short: expired" "... saying 'expired'"
is "$(sed -n 4p <<<"$RF_OUT")" "No such file or directory" "... and the file is gone (ENOENT)"
is "$(sed -n 5p <<<"$RF_OUT")" long-ok "control: a grant without ttl still serves"
B=$(sed -n 6p <<<"$RF_OUT")
like "$(records | grep "\"run\":\"$B\"" | grep '"event":"secret.revoke"' | grep '"name":"short.txt"')" \
	'"reason":"ttl"' "the ttl revocation is recorded (secret.revoke reason=ttl)"

# ---- exec providers: a fake vault CLI of the test's own ----------------------------------
FAKE=$WS.fakevault
# the value is stored encoded: its plaintext is never on disk
cat >"$FAKE" <<EOF
#!/bin/sh
case "\$1" in
fail) echo "fakevault: permission denied" >&2; exit 3 ;;
slow) exec sleep 30 ;;
env) printf 'VAULT_ADDR=%s HOME=%s LEAK=%s\n' "\${VAULT_ADDR:-unset}" "\${HOME:-unset}" "\${LEAK:-unset}" ;;
*) printf '%s\n' "\$(printf '%s' '$(printf '%s' "$VALX" | base64)' | base64 -d)" ;;
esac
EOF
chmod 0755 "$FAKE"
rf_run --secret "V=exec:$FAKE kv get" -- /bin/sh -c 'printf "%s" "$V" | sha256sum | cut -c1-64'
is "$RF_OUT" "$(sha "$VALX")" "exec provider: stdout less its trailing newline is the value"
cat >"$WS.exec.json" <<JSON
{"version": 1, "secrets": [{"name": "E", "deliver": "env", "exec": ["$FAKE", "env"],
  "pass_env": ["VAULT_ADDR"]}]}
JSON
RF_ENV=(VAULT_ADDR=http://vault.test LEAK=yes)
rf_run -p "$WS.exec.json" -- /bin/sh -c 'printf "%s\n" "$E"'
RF_ENV=()
like "$RF_OUT" "VAULT_ADDR=http://vault.test " "pass_env passes the named variable through"
like "$RF_OUT" "LEAK=unset" "... and nothing else of ringfence's environment"
rm -f "$WS/ran"
rf_run --secret "V=exec:$FAKE fail" -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "a failing provider refuses the run (125)"
like "$RF_ERR" "secret V \\(exec\\).*exited with status 3" "... naming the secret and the provider's error"
check "... and the command did not run" test ! -e "$WS/ran"
like "$(records | grep '"event":"secret.provider_error"' | tail -n 1)" '"error":"exited with status 3"' \
	"secret.provider_error is recorded"
unlike "$(records | grep '"event":"secret.provider_error"\|"event":"run.refused"')" "permission denied" \
	"... without the provider's output"
cat >"$WS.slow.json" <<JSON
{"version": 1, "secrets": [{"name": "S", "deliver": "env", "exec": ["$FAKE", "slow"], "timeout": "1s"}]}
JSON
rf_run -p "$WS.slow.json" -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "a provider that hangs refuses the run (125)"
like "$RF_ERR" "timed out after 1000 ms" "... after its timeout"
check "... and the command did not run" test ! -e "$WS/ran"
rf_run --secret V=store:missing -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "an unknown store name refuses the run (125): $(first_line "$RF_ERR")"

# a provider that closes its pipes and lingers is still held to its timeout
cat >"$WS.linger" <<'EOF2'
#!/bin/sh
exec >&- 2>&-
sleep 30
EOF2
chmod 0755 "$WS.linger"
cat >"$WS.linger.json" <<JSON
{"version": 1, "secrets": [{"name": "L", "deliver": "env", "exec": ["$WS.linger"], "timeout": "1s"}]}
JSON
rf_run -p "$WS.linger.json" -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "a provider that closes its output and lingers: refused at its timeout (125)"
like "$RF_ERR" "timed out after 1000 ms" "... timed out"
# what a provider leaves behind in its process group does not outlive it
cat >"$WS.bg" <<EOF2
#!/bin/sh
sleep 300 &
echo \$! >'$WS/bg.pid'
echo value-from-bg
EOF2
chmod 0755 "$WS.bg"
rf_run --secret "V=exec:$WS.bg" -- true
is "$RF_RC" 0 "a provider that starts a background process: the run starts"
bgpid=$(cat "$WS/bg.pid" 2>/dev/null)
bgstate=$(awk '/^State:/ {print $2}' "/proc/${bgpid:-0}/status" 2>/dev/null)
check "... and its background process is gone once the value is read (state '${bgstate:-none}')" \
	test -n "$bgpid" -a \( -z "$bgstate" -o "$bgstate" = Z \)
# providers start with no blocked signals (ringfence blocks some of its own)
rf_run --secret 'B=exec:/bin/grep SigBlk /proc/self/status' -- /bin/sh -c 'printf "%s" "$B"'
like "$RF_OUT" '^SigBlk:[[:space:]]+0000000000000000$' "a provider starts with no signal blocked ($RF_OUT)"

# env: (development only): read once, marked so, wiped from ringfence's environment
RF_ENV=(DEVTOKEN="$VAL3")
rm -f "$WS/d.stop"
rf_start --secret D=env:DEVTOKEN -- /bin/sh -c "printf '%s' \"\$D\" | sha256sum | cut -c1-64
	while [ ! -e '$WS/d.stop' ]; do sleep 0.05; done"
RF_ENV=()
for _ in $(seq 1 1200); do [ -s "$_RF_OUTF" ] && break; sleep 0.05; done
# (checked while ringfence is alive: a gone process would pass vacuously)
if ! env_of=$(cat "/proc/$RF_PID/environ" 2>/dev/null) || [ ! -s "$_RF_OUTF" ]; then
	not_ok "an env: source is wiped from ringfence's own environment once read" "the run did not start or ringfence is gone"
elif grep -qaF "$VAL3" <<<"$env_of"; then
	not_ok "an env: source is wiped from ringfence's own environment once read"
else
	ok "an env: source is wiped from ringfence's own environment once read"
fi
unset env_of
touch "$WS/d.stop"
rf_wait
is "$RF_OUT" "$(sha "$VAL3")" "env: source delivered"
like "$(records | grep '"event":"secret.grant"' | grep '"name":"D"')" '"dev_only":true' \
	"... and its grant is marked dev_only"

# a provider's own credential (pass_env) is wiped from ringfence once used
VT=vt$(rnd 10)
cat >"$WS.vt.json" <<JSON
{"version": 1, "secrets": [{"name": "E", "deliver": "env", "exec": ["$FAKE", "env"],
  "pass_env": ["VAULT_ADDR"]}]}
JSON
RF_ENV=(VAULT_ADDR="$VT")
rm -f "$WS/vt.ready" "$WS/vt.stop"
rf_start -p "$WS.vt.json" -- /bin/sh -c "touch '$WS/vt.ready'; while [ ! -e '$WS/vt.stop' ]; do sleep 0.05; done"
RF_ENV=()
for _ in $(seq 1 1200); do [ -e "$WS/vt.ready" ] && break; sleep 0.05; done
if ! env_of=$(cat "/proc/$RF_PID/environ" 2>/dev/null) || [ ! -e "$WS/vt.ready" ]; then
	not_ok "a pass_env variable (the provider's credential) is wiped from ringfence's environment" "the run did not start or ringfence is gone"
elif grep -qaF "$VT" <<<"$env_of"; then
	not_ok "a pass_env variable (the provider's credential) is wiped from ringfence's environment"
else
	ok "a pass_env variable (the provider's credential) is wiped from ringfence's environment"
fi
unset env_of
touch "$WS/vt.stop"
rf_wait

# the master key may not be where the run can read it
cp "$RF_STATE/secrets.key" "$WS/k.key"
chmod 0600 "$WS/k.key"
rf_run --key-file "$WS/k.key" --secret T=store:tok -- /bin/sh -c "touch '$WS/ran'"
is "$RF_RC" 125 "--key-file inside the workspace: refused (125)"
like "$RF_ERR" "inside the workspace, where the run could read it" "... saying why"
rm -f "$WS/k.key"

# ---- run B cannot reach run A's secret ------------------------------------------------------
rm -f "$WS/a.ready" "$WS/a.stop"
rf_start --secret T=store:tok --secret-file db.pem=store:tok --secret-broker api=store:tok -- /bin/sh -c \
	"echo \$\$ >'$WS/a.pid'; touch '$WS/a.ready'; while [ ! -e '$WS/a.stop' ]; do sleep 0.05; done"
A_PID=$RF_PID A_OUTF=$_RF_OUTF
for _ in $(seq 1 1200); do [ -e "$WS/a.ready" ] && break; sleep 0.05; done
check "run A holds its secrets and waits" test -e "$WS/a.ready"
# the host pid of A's command (for /proc paths B might try)
A_CMD=$(pgrep -P "$(pgrep -P "$A_PID" | head -n 1)" | head -n 1)
rf_run --secret-broker other=store:tok2 -- /bin/sh -c "
	'$PROBE' read /proc/$A_PID/environ
	'$PROBE' read /proc/${A_CMD:-1}/environ
	'$PROBE' read '$RF_STATE/secrets.key'
	'$PROBE' read '$RF_STATE/secrets/tok/v000001'
	'$PROBE' ls '$RF_STATE/audit'
	'$PROBE' read /run/secrets/db.pem
	'$PROBE' read /proc/$A_PID/root/run/secrets/db.pem
	'$PROBE' unix-connect /proc/$A_PID/root/run/ringfence/broker.sock
	ringfence-secret api; echo rc=\$?
	for p in /proc/[0-9]*; do tr '\\0' '\\n' <\$p/environ 2>/dev/null; done | grep -c '^T=' || true"
is "$(sed -n 1p <<<"$RF_OUT")" "errno=ENOENT" "B: A's supervisor in /proc: ENOENT (B's own pid namespace)"
is "$(sed -n 2p <<<"$RF_OUT")" "errno=ENOENT" "B: A's command's environment in /proc: ENOENT"
is "$(sed -n 3p <<<"$RF_OUT")" "errno=ENOENT" "B: the master key file: ENOENT (the state dir is not in any run)"
is "$(sed -n 4p <<<"$RF_OUT")" "errno=ENOENT" "B: the store: ENOENT"
is "$(sed -n 5p <<<"$RF_OUT")" "errno=ENOENT" "B: the audit log: ENOENT"
is "$(sed -n 6p <<<"$RF_OUT")" "errno=ENOENT" "B: /run/secrets (A's tmpfs is in A's mount namespace): ENOENT"
is "$(sed -n 7p <<<"$RF_OUT")" "errno=ENOENT" "B: A's /run/secrets through /proc/PID/root: ENOENT"
is "$(sed -n 8p <<<"$RF_OUT")" "errno=ENOENT" "B: A's broker socket through /proc/PID/root: ENOENT"
is "$(sed -n 9p <<<"$RF_OUT")" "rc=1" "B: asking its own broker for A's name: refused"
like "$RF_ERR" "api: unknown" "... 'unknown' (B holds only its own grant)"
is "$(sed -n 10p <<<"$RF_OUT")" 0 "B: no process B can see has T in its environment"
# control: A itself reads what B could not
a_read=$(cd / && nsenter -t "${A_CMD:-0}" -m cat /run/secrets/db.pem 2>/dev/null | sha256sum | cut -c1-64)
is "$a_read" "$(sha "$VAL")" "control: the file is there in A's own mount namespace"
touch "$WS/a.stop"
RF_PID=$A_PID _RF_OUTF=$A_OUTF
rf_wait
is "$RF_RC" 0 "run A ends normally"

# ---- A's supervisor: not readable or dumpable by its own uid -----------------------------
if as_user_setup; then
	printf '%s' "$VAL" | as_user "$_RF_USER_BIN" secret set --state-dir "$RF_STATE" utok >/dev/null 2>&1
	rm -f "$WS/u.ready"
	rm -f "$WS/u.stop"
	RF_AS_USER=1 rf_start --secret T=store:utok -- /bin/sh -c "touch '$WS/u.ready'
		while [ ! -e '$WS/u.stop' ]; do sleep 0.05; done" # (until SIGSEGV ends it)
	U_PID=$RF_PID
	for _ in $(seq 1 1200); do [ -e "$WS/u.ready" ] && break; sleep 0.05; done
	is "$(as_user "$RF_PROBE" read "/proc/$U_PID/environ")" "errno=EACCES" \
		"same uid: the supervisor's /proc/PID/environ is not readable (non-dumpable): EACCES"
	is "$(as_user "$RF_PROBE" read "/proc/$U_PID/mem")" "errno=EACCES" \
		"same uid: its memory is not readable: EACCES"
	is "$(as_user "$RF_PROBE" ptrace-attach "$U_PID")" "errno=EPERM" "same uid: ptrace attach: EPERM"
	# control first: does an ordinary process of that uid, killed the same
	# way in the same place, leave a core on this machine at all?
	as_user /bin/sh -c "cd '$WS' && ulimit -c unlimited && exec sleep 30" &
	C_PID=$!
	register_pid "$C_PID"
	# until it is sleep (ulimit set, exec done) or gone (the ulimit refused):
	# bounded, 60 s
	for _ in $(seq 1 1200); do
		c=$(cat "/proc/$C_PID/comm" 2>/dev/null) || break
		[ "$c" = sleep ] && break
		sleep 0.05
	done
	kill -SEGV "$C_PID"
	wait "$C_PID" 2>/dev/null
	sleep 0.2
	control_cores=$(find "$WS" -maxdepth 1 -name 'core*' | wc -l)
	find "$WS" -maxdepth 1 -name 'core*' -delete
	as_user kill -SEGV "$U_PID"
	for _ in $(seq 1 1200); do kill -0 "$U_PID" 2>/dev/null || break; sleep 0.05; done
	wait "$U_PID" 2>/dev/null
	rc=$?
	touch "$WS/u.stop" # (a supervisor that survived lets its run end)
	# 139: SIGSEGV; 134: a sanitizer build's handler turns it into abort()
	like "$rc" "^($((128 + 11))|$((128 + 6)))\$" "a supervisor killed by SIGSEGV dies of it ($rc)..."
	sleep 0.2
	cores=$(find "$WS" "$RF_STATE" -maxdepth 1 -name 'core*' | wc -l)
	if [ "$control_cores" = 0 ]; then
		skip "... leaves no core dump" "this machine writes no core files (an ordinary process's SIGSEGV left none)"
	else
		is "$cores" 0 "... and leaves no core dump (non-dumpable, RLIMIT_CORE 0), where an ordinary process of that uid does"
	fi
	chown -R "$RF_UID:$RF_GID" "$WS" "$RF_STATE" # back to the test's own uid
else
	for _ in 1 2 3 4 5; do skip "A's supervisor and its uid" "needs root (a second uid)"; done
fi

# ---- redaction of recorded strings, masking of output -----------------------------------
start_listener PORT tcp 127.0.0.1 0
rf_run --secret T=store:tok --allow-host "127.0.0.1:$PORT" -- /bin/sh -c \
	"'$PROBE' dns \"\$T.example\" 1 >/dev/null
	 curl -s -m 5 -o /dev/null --noproxy '' -x http://127.0.0.1:3128 \"http://127.0.0.1:$PORT/api/\$T/x\"
	 echo \"\$RINGFENCE_RUN_ID\""
R=$(tail -n 1 <<<"$RF_OUT")
dns=$(records | grep "\"run\":\"$R\"" | grep '"event":"dns.refused"')
like "$dns" '"name":"\[secret:T\]\.example"' "a value hidden in a DNS name is redacted in dns.refused"
req=$(records | grep "\"run\":\"$R\"" | grep '"event":"egress.request"')
like "$req" '"path":"/api/\[secret:T\]/x"' "a value in a request path is redacted in egress.request"
unlike "$(records | grep "\"run\":\"$R\"")" "$VAL" "... the run's records hold no plaintext"

# A request path longer than the 1 KiB a record keeps, cut inside the value:
# what the cut left of it is redacted too (the cut is marked "...(cut)").
pad=$(printf 'x%.0s' $(seq 1 1013))
rf_run --secret T=store:tok --allow-host "127.0.0.1:$PORT" -- /bin/sh -c \
	"curl -s -m 5 -o /dev/null --noproxy '' -x http://127.0.0.1:3128 \"http://127.0.0.1:$PORT/api/$pad\$T/more\"
	 echo \"\$RINGFENCE_RUN_ID\""
R=$(tail -n 1 <<<"$RF_OUT")
req=$(records | grep "\"run\":\"$R\"" | grep '"event":"egress.request"')
like "$req" '"path":"/api/x{1013}\[secret:T\]\.\.\.\(cut\)"' \
	"a value cut by the record's 1 KiB limit: its start is redacted, the cut marked"
unlike "$req" "${VAL:0:6}" "... no byte of it left in the record"

rf_run --mask-output --secret T=store:tok -- /bin/sh -c \
	'h=${T%??????????}; t=${T#"$h"}; printf "a %s" "$h"; sleep 0.3; printf "%s b\n" "$t"; echo "x $T y" >&2'
is "$RF_OUT" "a *** b" "--mask-output: a value written in two pieces is masked in stdout"
is "$RF_ERR" "x *** y" "... and in stderr"
rf_run --secret T=store:tok -- /bin/sh -c 'printf "%s" "$T" | wc -c'
is "$RF_OUT" "${#VAL}" "control: without --mask-output the run's output is its own"

# Encodings of a value (issue 13): base64 (whole, and inside a longer
# string at offsets 1 and 2 mod 3, and URL-safe), hex, HEX, URL percent-
# encoding and the value upper-cased are masked too; a string that is not an
# encoding of the value is kept. What a base64 form keeps is the encoding of
# the bytes around the value ("x", "xy" before it, "!!", "!" after) and the
# one character at each end that mixes their bits with the value's.
MV="Mk/$(rnd 10)+q@Z%_w9"
printf '%s' "$MV" | "$RF" secret set --state-dir "$RF_STATE" mtok >/dev/null 2>&1
ENCS='b64() { printf "%s" "$1" | base64 -w0; }
	urlenc() { local s=$1 o="" c i; for ((i = 0; i < ${#s}; i++)); do c=${s:i:1}
		case $c in [A-Za-z0-9._~-]) o+=$c ;; *) o+=$(printf "%%%02X" "'"'"'$c") ;; esac; done; printf "%s" "$o"; }
	hex=$(printf "%s" "$M" | od -An -tx1 | tr -d " \n")
	echo "b64-0 $(b64 "$M")"
	echo "b64-1 $(b64 "x$M!!")"
	echo "b64-2 $(b64 "xy$M!")"
	echo "b64url $(b64 "x$M!!" | tr "+/" "-_")"
	echo "hex $hex"
	echo "HEX $(printf "%s" "$hex" | tr a-f A-F)"
	echo "url $(urlenc "$M")"
	echo "upper $(printf "%s" "$M" | tr a-z A-Z)"
	echo "ctl $(b64 "x${M:0:3}Z${M:4}!!")"'
rf_run --secret M=store:mtok -- /bin/bash -c "$ENCS"
plain=$RF_OUT
hexv=$(printf '%s' "$MV" | od -An -tx1 | tr -d ' \n')
is "$(grep '^hex ' <<<"$plain")" "hex $hexv" "control: without --mask-output the run prints the value's hex"
is "$(grep '^b64-1 ' <<<"$plain")" "b64-1 $(printf 'x%s!!' "$MV" | base64 -w0)" "... and its base64 at offset 1"
like "$(grep '^url ' <<<"$plain")" '^url Mk%2F[0-9a-f]{20}%2Bq%40Z%25_w9$' "... and its URL encoding"
rf_run --mask-output --secret M=store:mtok -- /bin/bash -c "$ENCS"
for l in b64-0 b64-1 b64-2 b64url; do
	like "$(grep "^$l " <<<"$RF_OUT")" "^$l [A-Za-z0-9+/_-]{0,3}\\*\\*\\*[A-Za-z0-9+/_=-]{0,6}\$" \
		"--mask-output masks the value's $l form (at most the edge characters are left)"
done
for l in hex HEX url upper; do
	is "$(grep "^$l " <<<"$RF_OUT")" "$l ***" "--mask-output masks the value's $l form"
done
is "$(grep '^ctl ' <<<"$RF_OUT")" "$(grep '^ctl ' <<<"$plain")" \
	"control: base64 of a string that differs from the value in one byte (its 4th, high bits too) is kept intact"
unlike "$RF_OUT" "${hexv:8:16}|${MV:3:20}" "... no stretch of the value or its hex is left"

# A PEM-sized value (a ~6 KiB key, 64-column lines) printed whole is masked too.
PEMBODY=$(head -c 4500 /dev/urandom | base64 -w 64)
PEM=$(printf -- '-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----' "$PEMBODY")
printf '%s' "$PEM" | "$RF" secret set --state-dir "$RF_STATE" pem >/dev/null 2>&1
rf_run --mask-output --secret-file key.pem=store:pem -- cat /run/secrets/key.pem
is "$RF_OUT" "***" "--mask-output: a ${#PEM}-byte PEM key the run prints whole is masked"
rf_run --secret-file key.pem=store:pem -- /bin/sh -c 'wc -c </run/secrets/key.pem'
is "$RF_OUT" "${#PEM}" "control: without --mask-output the key reaches the run's output whole (${#PEM} bytes)"

# ---- afterwards: no plaintext anywhere on disk ----------------------------------------------
# (the PEM key by its random lines: grep -F takes each line as a pattern)
for v in "$VAL" "$VAL2" "$VAL3" "$VALX" "$MV" "$PEMBODY"; do
	hits=$(grep -rlaF -D skip -- "$v" "$RF_STATE" /tmp 2>/dev/null | head -n 3)
	is "$hits" "" "plaintext ${v:0:2}…: not in the state dir, the audit log, /tmp or ringfence's output"
done
out=$("$RF" audit verify --state-dir "$RF_STATE" 2>&1)
is "$?" 0 "the audit chain verifies ($out)"

done_testing
