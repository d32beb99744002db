#!/bin/bash
# tests/integration/publish.sh — `--publish HOST_PORT:RUN_PORT` (issue 16):
# the host's loopback port reaches a server the run has on its own
# loopback (an OAuth callback, a dev server), for the run's caller and root
# only; anyone else is closed at once and recorded (publish.refused, with
# the peer's uid), after a control showing that user can reach an ordinary
# host listener. Bytes go through intact both ways (1 MiB each way, with
# half-close); a run server on [::1] only is reached too; nothing listening
# in the run closes the connection and the run goes on; the port is the
# host's only while the run lives. Bad specs and a port in use refuse the
# run (125, one line) before its command starts.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
command -v python3 >/dev/null || skip_all "needs python3"
new_workspace
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

# two free host loopback ports, distinct (the kernel's pick, released)
read -r HP HP2 < <($PY -c '
import socket
a = socket.socket(); a.bind(("127.0.0.1", 0))
b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
RP=8765

# the run's server: listens on ADDR:RP, says so in $WS/ready, then answers
# each connection: "echo:" + what it got (until EOF) and, for "big", 1 MiB
# back with its SHA-256 first; "quit" ends it
cat >"$WS/server.py" <<'PY'
import hashlib, os, socket, sys
fam = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(fam)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
open("ready", "w").close()
while True:
    c, _ = s.accept()
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    if data == b"quit":
        c.close()
        break
    if data.startswith(b"big"):
        back = os.urandom(1 << 20)
        c.sendall(hashlib.sha256(data).hexdigest().encode() + b"\n" +
                  hashlib.sha256(back).hexdigest().encode() + b"\n" + back)
    else:
        c.sendall(b"echo:" + data)
    c.close()
print("server done", flush=True)
PY

# client ADDR PORT PAYLOAD — from the host: send PAYLOAD ("big": 1 MiB),
# half-close, print what came back, "eof" when nothing did (the other side
# closed: a close with what was sent unread is a reset, the same outcome),
# or the error of the connect (errno name)
CLIENT='
import errno, hashlib, os, socket, sys
addr, port, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    s = socket.create_connection((addr, port), timeout=20)
except OSError as e:
    print("error=" + errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
if what == "connect-only":
    print("connected")
    sys.exit(0)
data = b"big" + os.urandom((1 << 20) - 3) if what == "big" else what.encode()
got = b""
try:
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    while True:
        b = s.recv(65536)
        if not b:
            break
        got += b
except OSError as e:
    # closed by the other side while sending or reading (a reset, or
    # ENOTCONN/EPIPE after one): what came back so far is the answer
    if e.errno not in (errno.ECONNRESET, errno.ENOTCONN, errno.EPIPE):
        print("error=" + errno.errorcode.get(e.errno, str(e.errno)))
        sys.exit(0)
if what == "big":
    h1, h2, back = got.split(b"\n", 2)
    ok = h1.decode() == hashlib.sha256(data).hexdigest() and h2.decode() == hashlib.sha256(back).hexdigest()
    print("big=%s len=%d" % ("intact" if ok else "corrupt", len(back)))
else:
    print("got=" + got.decode(errors="replace") if got else "eof")
'
client() { $PY -c "$CLIENT" "$@"; }

# wait_ready — the run's server listens (or the run is gone)
wait_ready() {
	for _ in $(seq 1 400); do
		[ -e "$WS/ready" ] && return 0
		kill -0 "$RF_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

audit_lines() { cat "$RF_STATE"/audit/audit-*.jsonl 2>/dev/null | grep "\"event\":\"$1\""; }

is "$(client 127.0.0.1 "$HP" hi)" "error=ECONNREFUSED" \
	"control: nothing listens on the host's 127.0.0.1:$HP before the run"

rm -f "$WS/ready"
rf_start --timeout 120s --publish "$HP:$RP" -- python3 server.py 127.0.0.1 "$RP"
wait_ready || diag "the run's server did not start"
is "$(client 127.0.0.1 "$HP" hi)" "got=echo:hi" \
	"--publish $HP:$RP: the caller reaches the run's 127.0.0.1:$RP through the host's 127.0.0.1:$HP"
is "$(client 127.0.0.1 "$HP" big)" "big=intact len=1048576" \
	"... 1 MiB each way, with a half-close between, goes through intact"
like "$(audit_lines publish.connect | head -n 1)" "\"host_port\":$HP.*\"peer_uid\":$(id -u).*\"run_port\":$RP" \
	"... recorded: publish.connect with the peer's uid"
if is_root; then
	start_listener LP tcp 127.0.0.1 0
	is "$(as_user $PY -c "$CLIENT" 127.0.0.1 "$LP" connect-only)" connected \
		"control: uid 65534 can connect to an ordinary listener on the host's loopback"
	is "$(as_user $PY -c "$CLIENT" 127.0.0.1 "$HP" hi)" "eof" \
		"another user (uid 65534) connecting to the published port is closed at once, nothing relayed"
	like "$(audit_lines publish.refused | tail -n 1)" \
		"\"host_port\":$HP.*\"peer_uid\":65534.*\"reason\":\"not the run's caller\"" \
		"... recorded: publish.refused with that uid and why"
	is "$(client 127.0.0.1 "$HP" again)" "got=echo:again" "... the caller still gets through"
else
	for _ in 1 2 3 4; do skip "a second uid's connection" "needs root"; done
fi
is "$(client 127.0.0.1 "$HP" quit)" "eof" "the run's server is told to stop"
rf_wait
is "$RF_RC" 0 "the run ends normally"
like "$(audit_lines run.start | tail -n 1)" "\"publish\":\"127.0.0.1:$HP:$RP\"" \
	"run.start records the published port"
is "$(client 127.0.0.1 "$HP" hi)" "error=ECONNREFUSED" \
	"once the run is over, nothing listens on the host's port"

# the run's server on [::1] only: reached through the same host port
if $PY -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' 2>/dev/null; then
	rm -f "$WS/ready"
	rf_start --timeout 120s --publish "$HP:$RP" --publish "[::1]:$HP2:$RP" -- python3 server.py ::1 "$RP"
	wait_ready || diag "the run's server did not start"
	is "$(client 127.0.0.1 "$HP" v6)" "got=echo:v6" \
		"a run server on [::1] only is reached when nothing listens on the run's 127.0.0.1"
	is "$(client ::1 "$HP2" six)" "got=echo:six" "--publish [::1]:$HP2:$RP listens on the host's [::1]"
	is "$(client 127.0.0.1 "$HP2" x)" "error=ECONNREFUSED" "... and only there (not 127.0.0.1:$HP2)"
	client 127.0.0.1 "$HP" quit >/dev/null
	rf_wait
	is "$RF_RC" 0 "... the run ends normally"
else
	for _ in 1 2 3 4; do skip "a run server on [::1]" "the host has no ::1"; done
fi

# nothing listening in the run: the connection is closed, the run goes on
rm -f "$WS/ready"
rf_start --timeout 120s --publish "$HP:$RP" -- sh -c 'touch ready; while [ ! -e stop ]; do sleep 0.05; done; echo went-on'
wait_ready || diag "the run did not start"
is "$(client 127.0.0.1 "$HP" hi)" "eof" "nothing listens on the run's port: the connection is closed, nothing relayed"
touch "$WS/stop"
rf_wait
is "$RF_OUT" "went-on" "... and the run goes on to its end"
rm -f "$WS/stop"

# refusals before the command starts
for spec in "0.0.0.0:$HP:$RP" "192.0.2.1:$HP:$RP" "$HP:0" "70000:1" "$HP" "[::]:$HP:$RP"; do
	rf_run --publish "$spec" -- touch ran
	is "$RF_RC" 125 "--publish $spec: refused (125)"
done
like "$RF_ERR" "^ringfence: --publish \[::\]:$HP:$RP: only the host's loopback" "... with one line saying why"
start_listener BUSY tcp 127.0.0.1 0
rf_run --publish "$BUSY:$RP" -- touch ran
is "$RF_RC" 125 "a host port already in use refuses the run (125)"
like "$RF_ERR" "cannot listen on 127\.0\.0\.1:$BUSY: Address already in use" "... saying so"
check "... and no command of the refused runs started" test ! -e "$WS/ran"

# a policy file's network.publish; the same host port twice to two run ports is refused
cat >"$WS/p.json" <<EOF
{"version": 1, "network": {"publish": ["$HP:$RP"]}}
EOF
rm -f "$WS/ready"
rf_start -p p.json --timeout 120s -- python3 server.py 127.0.0.1 "$RP"
wait_ready || diag "the run's server did not start"
is "$(client 127.0.0.1 "$HP" pol)" "got=echo:pol" "network.publish in a policy file publishes the same way"
client 127.0.0.1 "$HP" quit >/dev/null
rf_wait
rf_run -p p.json --publish "$HP:$((RP + 1))" -- touch ran
is "$RF_RC" 125 "host port $HP published to two run ports: refused (125)"
like "$RF_ERR" "already published to run port $RP" "... saying which"

done_testing
