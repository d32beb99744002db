#!/usr/bin/env bash
# pip_inject.sh — `--profile pip` with the caller's pip.conf (issue 16):
# the password of its index URL reaches the index (a mock simple index
# over HTTPS that answers only that user and password, in Basic auth)
# while the run holds a placeholder: the run's copy of the file has the
# placeholder where the password was, pip sends it in Basic auth, the
# egress process puts the real value there toward that index only. The
# password holds a percent-encoded '@', sent decoded. The control: a run
# with a wrong password of its own is answered 401 by the same index. A
# credential in a comment never reaches the run's copy, and the caller's
# file is untouched.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v openssl >/dev/null &&
	[ -x /usr/bin/python3 ] && [ -x /usr/bin/pip3 ] ||
	skip_all "needs ip, nsenter, openssl, /usr/bin/python3 and /usr/bin/pip3 (python3-pip)"
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

M=$TH/pip
mkdir -p "$M"
I=pypi.corp.test
ossl() { openssl "$@" >/dev/null 2>&1 || bail_out "openssl $1 failed"; }
ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/ca.key" \
	-out "$M/ca.pem" -days 1 -subj "/CN=ringfence pip test CA $$" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$M/i.key" \
	-out "$M/i.csr" -subj "/CN=$I"
printf 'subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$I" >"$M/i.ext"
ossl x509 -req -in "$M/i.csr" -CA "$M/ca.pem" -CAkey "$M/ca.key" -CAcreateserial -days 1 \
	-out "$M/i.pem" -extfile "$M/i.ext"
cp "$M/ca.pem" "$WS/upstream-ca.pem"
RND=$(head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 24)
PASS="pw@$RND"    # as pip sends it
PASS_URL="pw%40$RND" # as the URL holds it
printf '%s' "$PASS" >"$M/token"
N_ADDR=$net.22
ip -n "$HNS" addr add "$N_ADDR/24" dev "$VB"
ip netns exec "$HNS" python3 "$RF_SRC/tests/helpers/mock-npm.py" --listen "$N_ADDR:443" \
	--token-file "$M/token" --pip-user rfuser --log "$M/log" --cert "$M/i.pem" \
	--certkey "$M/i.key" --ready "$M/ready" 2>"$M/err" &
register_pid $!
for _ in $(seq 1 100); do [ -s "$M/ready" ] && break; sleep 0.05; done
[ -s "$M/ready" ] || bail_out "the index mock did not start: $(cat "$M/err")"

# the caller's home: a pip.conf with the index and its password, and an
# old credential in a comment
fh=$WS.home
register_dir "$fh"
mkdir -p "$fh/.config/pip"
printf '[global]\nindex-url = https://rfuser:%s@%s/simple\n# index-url = https://old:oldsecret@old.test/simple\ntimeout = 20\n' \
	"$PASS_URL" "$I" >"$fh/.config/pip/pip.conf"
chmod 0600 "$fh/.config/pip/pip.conf"
piprun() { # er with the caller's HOME and Debian's pip first on PATH
	HOME=$fh PATH=/usr/bin:/bin er "$@"
}

rm -f "$M/log"
piprun --profile pip --add-host "$I:$N_ADDR" --upstream-ca "$WS/upstream-ca.pem" --timeout 60s -- \
	sh -c 'cat ~/.config/pip/pip.conf >pip.seen; printf "%s" "$RF_PIP_TOKEN_1" >ph.seen; pip3 index versions rf-test-pkg 2>&1'
is "$RF_RC" 0 "--profile pip with the caller's pip.conf: pip index versions against the password-only index: exit 0"
like "$RF_OUT" 'Available versions: 2\.0\.0, 1\.2\.3' "... it listed the package's versions"
BASIC="Basic $(printf 'rfuser:%s' "$PASS" | base64 -w0)"
like "$(grep '"status": 200' "$M/log" | head -n 1)" "\"authorization\": \"$BASIC\"" \
	"... the index got the real password (decoded, in Basic auth)"
PH=$(cat "$WS/ph.seen" 2>/dev/null)
like "$PH" '^.{20,}$' "the run's RF_PIP_TOKEN_1 is a placeholder (${#PH} characters)"
isnt "$PH" "$PASS" "... not the password"
if [ -n "$PH" ] && grep -qF -- "$PH" "$M/log"; then not_ok "... and it never reached the index"; else ok "... and it never reached the index"; fi
has() { grep -qxF -- "$2" "$1"; }
check "the run's pip.conf holds the placeholder where the password was" has "$WS/pip.seen" "index-url = https://rfuser:$PH@$I/simple"
unlike "$(cat "$WS/pip.seen")" "$RND" "... and holds no password"
unlike "$(cat "$WS/pip.seen")" 'oldsecret' "... nor the credential of the comment"
like "$(records | grep '"secret.inject"' | grep '"name":"RF_PIP_TOKEN_1"' | tail -n 1)" '"path":"/simple/rf-test-pkg/' \
	"secret.inject recorded for the request"
unlike "$(records)" "$RND" "the audit log holds no password"
is "$(sed -n 2p "$fh/.config/pip/pip.conf")" "index-url = https://rfuser:$PASS_URL@$I/simple" "the caller's pip.conf is untouched"

# control: the same index, a wrong password in the run's own pip.conf (the
# host terminated by an HTTP rule, verified with the test CA): 401
rm -f "$M/log"
printf '[global]\nindex-url = https://rfuser:wrong0123@%s/simple\n' "$I" >"$WS/wrong.conf"
piprun --allow-host "$I" --allow-http "$I GET /**" --add-host "$I:$N_ADDR" \
	--upstream-ca "$WS/upstream-ca.pem" --timeout 60s -e PIP_CONFIG_FILE="$WS/wrong.conf" -- \
	sh -c 'pip3 index versions rf-test-pkg >/dev/null 2>&1; echo rc=$?'
like "$RF_OUT" 'rc=[1-9]' "control: a run with a wrong password of its own: pip fails"
like "$(grep rf-test-pkg "$M/log" | head -n 1)" "\"authorization\": \"Basic $(printf 'rfuser:wrong0123' | base64 -w0)\".*\"status\": 401" \
	"... the index got that password and refused it (401)"
done_testing
