#!/usr/bin/env bash
# inject_cakey.sh — where the run CA's private keys live (docs/TLS.md,
# "Where the key lives"): in the egress process and the run CA's keeper
# (the supervisor's child that made them, under seccomp filters, without
# capabilities) only; never in the supervisor, never in the run's init (a
# fork of the supervisor without exec, under the run's uid) nor in any
# other process of the run.
#
# A run with an injection over HTTPS (the test host of inject_tls.sh:
# tests/helpers/tlshost.py with certificates of a test CA made here, and
# --upstream-ca) makes a terminated request, then waits. The test build
# writes the run CA's two private scalars (the CA key and the leaf key) to
# the file RINGFENCE_TEST_CA_KEYS names (src/cli/run_tls.c; release builds
# have no such path). From the host side, as root, the test reads the
# memory of the run's processes (/proc/PID/mem, every readable mapping)
# and looks for each scalar big-endian (as exported) and little-endian (as
# an OpenSSL BIGNUM holds it on this machine):
#   - the run's init and every other process of the run's pid namespace:
#     neither key;
#   - control: the egress process (the supervisor's child in the
#     supervisor's network namespace), read the same way: both keys.
# Then the egress process is replaced, twice — killed (egress.lost; the
# next connection starts a new one) and by `ringfence grant --allow-host`
# (a policy change: the next connection starts a new one) — and each time
# the run's next HTTPS request through it still verifies against the run's
# trust bundle (made at the start: so the new process serves leaves of the
# SAME CA), the new egress process holds the same CA key, and init still
# holds neither.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own, reading a run's memory)"
for c in ip nsenter python3 curl openssl; do
	command -v "$c" >/dev/null || skip_all "needs ip, nsenter, python3, curl and openssl ($c is missing)"
done
if [ "${RF_BIN_IS_TEST_BUILD:-0}" != 1 ]; then
	[ -n "${RF_TEST_BIN:-}" ] || skip_all "needs a test build (RINGFENCE_TEST_CA_KEYS)"
	RF_BIN=$RF_TEST_BIN
fi
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

VAL=rfv$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s' "$VAL" | "$RF_BIN" secret set --state-dir "$RF_STATE" api >/dev/null 2>&1 ||
	bail_out "secret set failed"

# ---- the test CA and the test host's certificates (as inject_tls.sh) ---------------------------
P=$TH/tls
mkdir -p "$P" "$P/repo.git"
printf '%s\n' "$VAL" >"$P/value"
ossl() { openssl "$@" >>"$P/openssl.log" 2>&1 || bail_out "openssl $1 failed: $(tail -n 3 "$P/openssl.log")"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/testca.key" \
	-out "$P/testca.pem" -days 2 -subj "/O=ringfence tests/CN=inject_cakey test CA" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
cat >"$P/ca.cnf" <<CNF
[ca]
default_ca = t
[t]
database = $P/index.txt
new_certs_dir = $P
certificate = $P/testca.pem
private_key = $P/testca.key
serial = $P/serial
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
CNF
: >"$P/index.txt"
echo 1000 >"$P/serial"
leaf() {
	local name=$1 host=$2
	shift 2
	ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/$name.key" \
		-subj "/CN=$host" -addext "subjectAltName=DNS:$host" -addext extendedKeyUsage=serverAuth \
		-out "$P/$name.csr"
	ossl ca -batch -config "$P/ca.cnf" -notext -in "$P/$name.csr" -out "$P/$name.pem" "$@"
}
leaf good svc.test -days 2
leaf other other.test -days 2
leaf wrong wrong.test -days 2
leaf expired svc.test -startdate 20200101000000Z -enddate 20200201000000Z
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$P/self.key" \
	-out "$P/self.pem" -days 2 -subj /CN=svc.test -addext subjectAltName=DNS:svc.test

ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/tlshost.py" "$P" >"$P/tlshost.err" 2>&1 &
register_pid $!
for _ in $(seq 1 100); do [ -e "$P/tls-ready" ] && break; sleep 0.05; done
[ -e "$P/tls-ready" ] || bail_out "the TLS test host did not start: $(cat "$P/tlshost.err")"
tlslog() { cat "$P/tls.log" 2>/dev/null; }

# keyscan PID... — the run CA's scalars (file $KEYS: "ca HEX", "leaf HEX")
# in the memory of PID..., read from the host side. Prints a summary line
# "pids=N bytes=B unreadable=U huge=H ca=C leaf=L" (C, L: hits of either
# byte order; H: mappings over 4 GiB skipped, which only a sanitizer's
# shadow reservation is), then memscan.py's line per hit: "hit PID
# ADDRESS MAPPING KEY-ORDER".
keyscan() {
	python3 "$RF_SRC/tests/helpers/memscan.py" --keys "$KEYS" "$@" | awk '
		NR == 1 { for (i = 1; i <= NF; i++) { split($i, kv, "="); a[kv[1]] = kv[2] }; next }
		{ hit[++n] = $0; if ($NF ~ /^ca-/) ca++; else if ($NF ~ /^leaf-/) leaf++ }
		END {
			printf "pids=%d bytes=%d unreadable=%d huge=%d ca=%d leaf=%d\n", a["pids"],
				a["bytes"], a["unreadable"], a["huge"], ca, leaf
			for (i = 1; i <= n; i++) print hit[i]
		}'
}
# run_pids — the processes of the run's pid namespace (init's)
run_pids() {
	local ns pat
	ns=$(readlink "/proc/$INIT/ns/pid") || return
	pat=${ns//\[/\\[}
	pat=${pat//\]/\\]}
	find /proc/[0-9]*/ns -maxdepth 1 -name pid -lname "$pat" 2>/dev/null | cut -d/ -f3 | tr '\n' ' '
}
# egress_pid — the run's egress process (the supervisor's status names
# it; 0 while none serves)
egress_pid() {
	local e
	e=$("$RF_BIN" inspect --state-dir "$RF_STATE" "$run" 2>/dev/null | grep -o '"egress_pid":[0-9]*' | cut -d: -f2)
	[ "${e:-0}" != 0 ] && echo "$e"
}
# wait_file NAME — until $WS/NAME exists or the run is gone
wait_file() {
	for _ in $(seq 1 600); do
		[ -e "$WS/$1" ] && return 0
		kill -0 "$RF_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# summary SCAN — its first line
summary() { head -n 1 <<<"$1"; }

# ---- a run with an injection over HTTPS that waits between requests -----------------------------
KEYS=$TH/cakeys
rm -f "$KEYS" "$KEYS".* "$WS"/req? "$WS"/ready? "$WS"/go? "$WS/done"
# a file of root's the keeper could read as uid 0 without capabilities,
# were it not confined (test builds: the keeper reports both tries)
printf 'root only\n' >"$KEYS.read"
chmod 0600 "$KEYS.read"
# shellcheck disable=SC2016
REQ='curl -sS -m 10 -H "Authorization: Bearer $TOKEN" "https://svc.test/cakey-$1" >"req$1" 2>&1
	echo "rc=$?" >>"req$1"; touch "ready$1"'
RF_WRAP=(unshare -m sh -c 'mount --bind "$1" /etc/resolv.conf && shift &&
	exec nsenter --net=/run/netns/"$0" "$@"' "$CNS" "$TH/resolv.conf")
RF_ENV=(RINGFENCE_TEST_CA_KEYS="$KEYS")
rf_start -w "$WS" --inject "TOKEN=store:api@svc.test" --add-host "svc.test:$net.2" \
	--allow-host svc.test --upstream-ca "$P/testca.pem" -- sh -c 'req() { '"$REQ"'; }
	req 1
	for n in 2 3; do
		while [ ! -e "go$n" ]; do sleep 0.05; done
		req $n
	done
	while [ ! -e done ]; do sleep 0.05; done
	echo finished'
register_pid "$RF_PID"
RF_WRAP=()
RF_ENV=()

wait_file ready1
like "$(cat "$WS/req1" 2>/dev/null)" 'GET /cakey-1 HTTP/1.1' "the run's HTTPS request to the injection host is answered (terminated, verified with the run's bundle)"
like "$(cat "$WS/req1" 2>/dev/null)" 'rc=0' "... curl exits 0"
like "$(tlslog)" "Authorization: Bearer $VAL" "... the test host received the value (the egress process terminated it)"

like "$(cat "$KEYS" 2>/dev/null)" '^ca [0-9a-f]{64}
leaf [0-9a-f]{64}$' "test build: the run CA's two private scalars were written to RINGFENCE_TEST_CA_KEYS"
# the keeper's confinement (keeper_confine): before it, as uid 0 without
# capabilities, it could create a file in the test's directory, read and
# chmod a 0600 file of root's and make a socket (the control); after it,
# Landlock refuses the first two (EACCES) and its seccomp filter the others
# (EPERM), while the trust cache stays writable until its entries are made
# (keeper_cache_done), then not: the caller's upstream CA file is parsed
# with no path of the host open
conf=$(tr '\n' ' ' <"$KEYS.confined" 2>/dev/null)
like "$conf" '^write-before 0 read-before 0 chmod-before 0 socket-before 0 cache-before 0 ' \
	"test build: before its confinement the keeper could create a file outside the cache, read and chmod root's file, make a socket (the control)"
like "$conf" ' write-after 13 read-after 13 chmod-after 1 socket-after 1 cache-after 0 ' \
	"... confined: creating (EACCES) and reading (EACCES) outside the cache refused by Landlock, chmod (EPERM) and a socket (EPERM) by its seccomp filter; the cache still writable"
like "$conf" ' write-done 13 read-done 13 chmod-done 1 socket-done 1 cache-done 13 $' \
	"... once the cache's entries are made, before the caller's upstream CA file is read: the cache too is refused (EACCES)"
[ -e "$KEYS.probe" ] && probe_left=1 || probe_left=0
is "$probe_left" 0 "... and left no file behind"
run=$("$RF_BIN" ps --state-dir "$RF_STATE" --json | grep -o '"run":"[^"]*"' | head -n 1 | cut -d'"' -f4)
INIT=$("$RF_BIN" inspect --state-dir "$RF_STATE" "$run" 2>/dev/null | grep -o '"init_pid":[0-9]*' | cut -d: -f2)
SUP=$(awk '{print $4}' "/proc/$INIT/stat" 2>/dev/null)
E1=$(egress_pid)
diag "run $run: supervisor $SUP, init $INIT, egress $E1"
ok_pids=0
[ -n "$INIT" ] && [ -n "$SUP" ] && [ -n "$E1" ] && [ "$E1" != "$INIT" ] && ok_pids=1
is "$ok_pids" 1 "the run's init ($INIT), supervisor ($SUP) and egress process ($E1) found"

# ---- init holds neither key; the egress process (control) holds both -----------------------------
scan=$(keyscan "$INIT")
like "$(summary "$scan")" '^pids=1 bytes=[1-9][0-9]{5,} ' "the run's init's memory was read from the host side ($(summary "$scan"))"
like "$(summary "$scan")" ' ca=0 leaf=0$' "... and holds neither the CA's private key nor the leaf key (either byte order)"
[[ $(summary "$scan") == *" ca=0 leaf=0" ]] || diag "$(head -n 12 <<<"$scan")"
pids=$(run_pids)
scan=$(keyscan $pids)
# (the run's shell and its init at least; its `sleep`s come and go)
like "$(summary "$scan")" "^pids=([2-9]|[1-9][0-9]+) bytes=[1-9][0-9]{6,} " "the processes of the run were read ($pids: $(summary "$scan"))"
like "$(summary "$scan")" ' ca=0 leaf=0$' "... and none holds either key"
[[ $(summary "$scan") == *" ca=0 leaf=0" ]] || diag "$(head -n 12 <<<"$scan")"
scan=$(keyscan "$E1")
like "$(summary "$scan")" ' ca=[1-9][0-9]* leaf=[1-9][0-9]*$' "control: the same scan of the egress process finds both keys ($(summary "$scan"))"
scan=$(keyscan "$SUP")
like "$(summary "$scan")" '^pids=1 bytes=[1-9][0-9]{5,} ' "the supervisor's memory was read ($(summary "$scan"))"
like "$(summary "$scan")" ' ca=0 leaf=0$' "... and holds neither key (the keeper made them)"
while read -r _ _ addr key order name; do
	diag "  supervisor: $key ($order) at $addr in $name"
done < <(grep '^hit ' <<<"$scan" | head -n 6)
# the keeper: the supervisor's child that is neither init nor an egress process
KEEPER=
for c in $(cat "/proc/$SUP/task/$SUP/children" 2>/dev/null); do
	[ "$c" != "$INIT" ] && [ "$c" != "$E1" ] && KEEPER=$c
done
diag "keeper: $KEEPER"
is "$(grep -c . <<<"$KEEPER")" 1 "the run CA's keeper found: the supervisor's third child ($KEEPER)"
like "$(grep -E '^(Seccomp|CapEff|CapPrm|CapBnd):' "/proc/$KEEPER/status" 2>/dev/null | tr '\n\t' '  ')" \
	'CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 .*Seccomp: 2 ' \
	"... it has no capability (permitted, effective, bounding) and lives under seccomp filters"
like "$(grep -E '^Seccomp_filters:' "/proc/$KEEPER/status" 2>/dev/null | tr '\n\t' '  ')" 'Seccomp_filters: 2 ' \
	"... two of them: the work filter and the serving one (read, write, exit: strict mode's set)"
scan=$(keyscan "$KEEPER")
like "$(summary "$scan")" ' ca=[1-9][0-9]* leaf=[1-9][0-9]*$' "control: the keeper holds both keys ($(summary "$scan"))"
# the socket that yields the keys: the keeper's fd 3, whose other end is
# the supervisor's (which init inherits at its clone and closes first)
K=$(readlink "/proc/$KEEPER/fd/3" 2>/dev/null | tr -dc 0-9)
PEER=$(nsenter --net="/proc/$KEEPER/ns/net" ss -xn 2>/dev/null | awk -v k="$K" '$6 == k { print $8; exit }')
holders() { # the pids among $@ with an fd on socket:[$PEER]
	local p
	for p in "$@"; do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q "socket:\[$PEER\]" && printf '%s ' "$p"
	done
}
like "$PEER" '^[0-9]+$' "the keeper's socket and its other end found (keeper $K, other end $PEER)"
is "$(holders "$SUP")" "$SUP " "control: the supervisor holds the other end"
is "$(holders $(run_pids) "$E1")" "" "... no process of the run (init included) and not the egress process (it closed it before its lockdown)"

# ---- the egress process replaced: killed (egress.lost) -------------------------------------------
kill -KILL "$E1" 2>/dev/null
for _ in $(seq 1 100); do [ -d "/proc/$E1" ] || break; sleep 0.05; done
touch "$WS/go2"
wait_file ready2
like "$(cat "$WS/req2" 2>/dev/null)" 'GET /cakey-2 HTTP/1.1' "after the egress process was killed: the next HTTPS request is answered by a new one"
like "$(cat "$WS/req2" 2>/dev/null)" 'rc=0' "... verified against the run's bundle from its start (the same CA)"
E2=$(egress_pid)
ok_e2=0
[ -n "$E2" ] && [ "$E2" != "$E1" ] && ok_e2=1
is "$ok_e2" 1 "... a new egress process ($E1 -> $E2)"
like "$(records | grep '"event":"egress.lost"' | grep "$run")" '"event":"egress.lost"' "... egress.lost recorded"
scan=$(keyscan "$E2")
like "$(summary "$scan")" ' ca=[1-9][0-9]* leaf=[1-9][0-9]*$' "... which holds the same CA key and leaf key (imported, not made anew)"
scan=$(keyscan "$INIT")
like "$(summary "$scan")" '^pids=1 bytes=[1-9].* ca=0 leaf=0$' "... and init still holds neither"

# ---- the egress process replaced: a policy change (grant) ----------------------------------------
out=$("$RF_BIN" grant --state-dir "$RF_STATE" "$run" --allow-host other.test 2>&1)
is "$?" 0 "ringfence grant --allow-host other.test on the live run: exit 0 ($out)"
touch "$WS/go3"
wait_file ready3
like "$(cat "$WS/req3" 2>/dev/null)" 'GET /cakey-3 HTTP/1.1' "after the grant: the next HTTPS request is answered"
like "$(cat "$WS/req3" 2>/dev/null)" 'rc=0' "... verified against the run's bundle (the same CA)"
E3=$(egress_pid)
ok_e3=0
[ -n "$E3" ] && [ "$E3" != "$E2" ] && ok_e3=1
is "$ok_e3" 1 "... by a new egress process ($E2 -> $E3)"
scan=$(keyscan "$E3")
like "$(summary "$scan")" ' ca=[1-9][0-9]* leaf=[1-9][0-9]*$' "... which holds the same keys"
pids=$(run_pids)
scan=$(keyscan $pids)
like "$(summary "$scan")" '^pids=[1-9].* ca=0 leaf=0$' "... and no process of the run holds either ($(summary "$scan"))"
c=$(grep -c "Authorization: Bearer $VAL" <(tlslog))
is "$c" 3 "the test host received the value with each of the three requests"

touch "$WS/done"
rf_wait
gone=0
for _ in $(seq 1 100); do [ -d "/proc/$KEEPER" ] || { gone=1; break; }; sleep 0.05; done
is "$gone" 1 "once the run ended the keeper is gone (it wiped the keys and exited)"
like "$RF_OUT" 'finished' "the run ended normally"
is "$RF_RC" 0 "... exit 0"
check "the state dir holds neither key (hex or raw)" python3 - "$KEYS" "$RF_STATE" <<'PY'
import os, sys
pats = []
for line in open(sys.argv[1]):
    h = line.split()[1]
    b = bytes.fromhex(h)
    pats += [h.encode(), b, b[::-1]]
for root, _, files in os.walk(sys.argv[2]):
    for f in files:
        try:
            data = open(os.path.join(root, f), "rb").read()
        except OSError:
            continue
        if any(p in data for p in pats):
            sys.exit(1)
PY
rm -f "$KEYS" "$KEYS".*

done_testing
