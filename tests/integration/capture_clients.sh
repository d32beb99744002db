#!/usr/bin/env bash
# capture_clients.sh — real clients, unmodified and with every proxy
# variable removed, reach what the run is allowed through transparent
# capture (issue 14), and nothing else: getent, curl, wget, Python urllib
# and raw sockets, Node's fetch and https.get, Java 17's HttpClient, ssh
# and git over ssh to a test sshd. A name no rule allows, which such a
# client only reports as "Could not resolve host", is named in ringfence's
# end-of-run summary with the flag that would allow it (not with --quiet).
# The test host lives in a network namespace of this test's own
# (tests/helpers/egress-net.bash); its sshd is Debian's, started there
# with a configuration and keys of this test run.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin
is_root || skip_all "needs root (network namespaces of the test's own)"
command -v ip >/dev/null && command -v nsenter >/dev/null && command -v python3 >/dev/null ||
	skip_all "needs ip, nsenter and python3"
new_workspace
# shellcheck source=tests/helpers/egress-net.bash
. "$RF_SRC/tests/helpers/egress-net.bash"

# every proxy variable removed: what a client that ignores them does
NP=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy
	-u NO_PROXY -u no_proxy)
ALLOW=(--add-host "svc.test:$net.2" --allow-host svc.test)

er "${ALLOW[@]}" -- getent ahostsv4 svc.test
case "$RF_OUT" in
198.18.*) ;;
*) skip_all "this build does not capture (getent ahostsv4 svc.test: '$RF_OUT' $RF_ERR)" ;;
esac
like "$(first_line "$RF_OUT")" '^198\.1[89]\.[0-9]+\.[0-9]+ +STREAM +svc\.test$' "getent ahostsv4 of an allowed name: a pool address"
er "${ALLOW[@]}" -- getent ahosts svc.test
if [ -e /proc/net/if_inet6 ]; then
	like "$RF_OUT" 'fd52:6667:6e63::' "... and a pool IPv6 address (AAAA)"
else
	skip "a pool IPv6 address" "the host has no IPv6"
fi
er "${ALLOW[@]}" -- getent hosts other.test
is "$RF_RC" 2 "getent hosts of a name no rule allows: not found (2)"
er --add-host "svc.test:$net.2" --allow-host other.test -- getent hosts svc.test
is "$RF_RC" 2 "... nor a name only --add-host declares"

# ---- curl, wget, Python ----------------------------------------------------------------------
rm -f "$TH/http.log"
er "${ALLOW[@]}" -- "${NP[@]}" curl -sS -m 10 http://svc.test:8080/curl
like "$RF_OUT" 'GET /curl HTTP/1.1' "curl without a proxy: http://svc.test:8080/ answered"
like "$(cat "$TH/http.log" 2>/dev/null)" 'traceparent: 00-' "... the request stamped like a proxied one (traceparent)"
if [ -e /proc/net/if_inet6 ]; then
	# the name's pool IPv6 address, captured over IPv6; the test host has
	# no IPv6 at all: the egress process dials its IPv4 address
	er "${ALLOW[@]}" -- "${NP[@]}" curl -sS -6 -m 10 http://svc.test:8080/curl-v6
	like "$RF_OUT" 'GET /curl-v6 HTTP/1.1' "curl -6: captured over the pool's IPv6 address, served over IPv4 upstream"
else
	skip "curl -6" "the host has no IPv6"
fi
if [ -s "$TH/cert.pem" ]; then
	cp "$TH/cert.pem" "$WS/ca.pem"
	er "${ALLOW[@]}" -- "${NP[@]}" curl -sS -m 10 --cacert ca.pem https://svc.test:8443/tls
	like "$RF_OUT" 'GET /tls HTTP/1.1' "curl https://svc.test:8443/ without a proxy (TLS, SNI svc.test)"
else
	skip "curl https" "no openssl"
fi
er "${ALLOW[@]}" -- "${NP[@]}" wget -q -T 10 -O - http://svc.test:8080/wget
like "$RF_OUT" 'GET /wget HTTP/1.1' "wget without a proxy"
er "${ALLOW[@]}" -- "${NP[@]}" python3 -c '
import urllib.request
print(urllib.request.urlopen("http://svc.test:8080/urllib", timeout=10).read().decode())'
like "$RF_OUT" 'GET /urllib HTTP/1.1' "Python urllib without a proxy"
er --add-host "svc.test:$net.2" --allow-host svc.test:5432 -- "${NP[@]}" python3 -c '
import socket
s = socket.create_connection(("svc.test", 5432), timeout=10)
s.sendall(b"ping\n"); print(s.recv(64).decode().strip())'
is "$RF_OUT" "ping" "Python raw socket to an allowed name:port (plain TCP, explicit port)"
er "${ALLOW[@]}" -- "${NP[@]}" python3 -c '
import socket, errno
try:
    socket.create_connection(("other.test", 8080), timeout=10); print("connected")
except socket.gaierror as e:
    print("gaierror", e.errno == socket.EAI_NONAME)'
is "$RF_OUT" "gaierror True" "Python: a name no rule allows does not resolve (EAI_NONAME, at once)"

# ---- a refused name in the end-of-run summary (the client only says it cannot resolve) -----
refused_names() { grep -A 20 "^ringfence: the run's resolver refused" <<<"$RF_ERR"; }
curls='curl -sS -m 10 http://svc.test:8080/summary-ok 2>&1
curl -sS -m 10 http://other.test:8080/ 2>&1; echo "curl=$?"'
er "${ALLOW[@]}" -- "${NP[@]}" sh -c "$curls"
like "$RF_OUT" 'GET /summary-ok HTTP/1.1' "control: curl without a proxy reaches the allowed name"
like "$RF_OUT" 'Could not resolve host: other\.test' "curl without a proxy to a name no rule allows: it cannot resolve it"
like "$RF_OUT" 'curl=6' "... curl exits 6 (could not resolve host)"
like "$(refused_names | head -n 1)" "^ringfence: the run's resolver refused [0-9]+ quer(y|ies) during the run \\(name, count, reason, what would allow it\\):$" \
	"ringfence's end-of-run summary says the run's resolver refused names"
like "$(refused_names)" '  other\.test  [0-9]+x  no allow rule lets the run reach this name \(default: no egress\)  -> --allow-host other\.test' \
	"... it names other.test, why, how often, and --allow-host other.test"
unlike "$(refused_names)" 'svc\.test' "... the allowed name is not in it"
unlike "$RF_ERR" 'egress refused' "... no connection was refused: only the names' part"
er --quiet "${ALLOW[@]}" -- "${NP[@]}" sh -c "$curls"
like "$RF_OUT" 'Could not resolve host: other\.test' "--quiet: the name is still refused"
unlike "$RF_ERR" "resolver refused|other\.test" "... and no summary is printed"

# ---- Node ------------------------------------------------------------------------------------
if command -v node >/dev/null; then
	er "${ALLOW[@]}" -- "${NP[@]}" node -e '
fetch("http://svc.test:8080/node-fetch").then(r => r.text()).then(t => console.log(t),
  e => { console.log("error", e.cause ? e.cause.code : e); process.exit(1); });'
	like "$RF_OUT" 'GET /node-fetch HTTP/1.1' "Node fetch without a proxy"
	if [ -s "$WS/ca.pem" ]; then
		er "${ALLOW[@]}" --env NODE_EXTRA_CA_CERTS=ca.pem -- "${NP[@]}" node -e '
require("https").get("https://svc.test:8443/node-https", r => { let b = ""; r.on("data", d => b += d);
  r.on("end", () => console.log(b)); }).on("error", e => { console.log("error", e.code); process.exit(1); });'
		like "$RF_OUT" 'GET /node-https HTTP/1.1' "Node https.get without a proxy (TLS)"
	else
		skip "Node https.get" "no openssl"
	fi
	er "${ALLOW[@]}" -- "${NP[@]}" node -e '
fetch("http://other.test:8080/").then(() => console.log("reached"),
  e => console.log("refused", e.cause ? e.cause.code : e));'
	is "$RF_OUT" "refused ENOTFOUND" "Node fetch of a name no rule allows: ENOTFOUND"
	er "${ALLOW[@]}" -- "${NP[@]}" node -e '
fetch("http://'"$net.2"':8080/").then(() => console.log("reached"),
  e => console.log("refused", e.cause ? e.cause.code : e));'
	is "$RF_OUT" "refused ECONNREFUSED" "Node fetch of the test host's IP literal (no rule): ECONNREFUSED"
else
	for _ in 1 2 3 4; do skip "Node clients" "node is not installed"; done
fi

# ---- Java 17 HttpClient ----------------------------------------------------------------------
if command -v java >/dev/null && java -version 2>&1 | grep -q 'version "\(1[7-9]\|2[0-9]\)'; then
	cat >"$WS/Fetch.java" <<'JAVA'
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class Fetch {
    public static void main(String[] a) throws Exception {
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try {
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(a[0])).build(),
                    HttpResponse.BodyHandlers.ofString());
            System.out.println(r.statusCode() + " " + r.body().split("\n")[1]);
        } catch (java.io.IOException e) {
            System.out.println("error " + e.getClass().getSimpleName());
        }
    }
}
JAVA
	# the JVM's own configuration (/etc/java-17-openjdk) is outside the run's
	# default view: bound read-only, as an agent profile would
	JRO=()
	for d in /etc/java-*-openjdk; do [ -d "$d" ] && JRO+=(--ro "$d"); done
	er "${ALLOW[@]}" "${JRO[@]}" -- "${NP[@]}" java -XX:TieredStopAtLevel=1 Fetch.java \
		http://svc.test:8080/java
	like "$RF_OUT" '^200 GET /java HTTP/1.1' "Java 17 HttpClient without a proxy"
	er "${ALLOW[@]}" "${JRO[@]}" -- "${NP[@]}" java -XX:TieredStopAtLevel=1 Fetch.java http://other.test:8080/
	like "$RF_OUT" '^error (ConnectException|UnknownHostException)' \
		"... and a name no rule allows fails in Java too ($RF_OUT)"
else
	skip "Java HttpClient" "no Java 17"
	skip "Java HttpClient refusal" "no Java 17"
fi

# ---- ssh and git over ssh to a test sshd -----------------------------------------------------
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ -x "$SSHD" ] && command -v ssh >/dev/null && command -v git >/dev/null; then
	S=$TH/ssh
	mkdir -p "$S" /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$S/host" </dev/null
	ssh-keygen -q -t ed25519 -N '' -f "$WS/id" </dev/null
	cp "$WS/id.pub" "$S/authorized_keys"
	cat >"$S/config" <<CONF
Port 22
ListenAddress $net.2
HostKey $S/host
AuthorizedKeysFile $S/authorized_keys
PidFile $S/pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
CONF
	ip netns exec "$HNS" "$SSHD" -D -e -f "$S/config" 2>"$S/log" &
	register_pid $!
	for _ in $(seq 1 100); do [ -s "$S/pid" ] && break; sleep 0.05; done
	git init -q --bare "$S/repo.git"
	SSHO="-F /dev/null -i $WS/id -o UserKnownHostsFile=$WS/known_hosts -o StrictHostKeyChecking=accept-new -o BatchMode=yes -o ConnectTimeout=10"
	who=$(id -un)
	er --add-host "svc.test:$net.2" --allow-host svc.test:22 -- "${NP[@]}" \
		sh -c "chmod 600 id && ssh $SSHO $who@svc.test echo over-ssh"
	is "$RF_OUT" "over-ssh" "ssh to an allowed name:22 without a proxy"
	er --add-host "svc.test:$net.2" --allow-host svc.test:22 -- "${NP[@]}" sh -c "
		export GIT_SSH_COMMAND='ssh $SSHO'
		rm -rf clone && git clone -q $who@svc.test:$S/repo.git clone 2>&1 &&
		cd clone && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m captured &&
		git push -q origin HEAD:main 2>&1 && echo pushed"
	is "$(tail -n 1 <<<"$RF_OUT")" "pushed" "git clone and push over ssh without a proxy"
	is "$(git --git-dir="$S/repo.git" log --format=%s main 2>/dev/null)" "captured" \
		"... the commit is on the test host"
	er --add-host "svc.test:$net.2" --allow-host svc.test:443 -- "${NP[@]}" \
		sh -c "chmod 600 id && ssh $SSHO $who@svc.test echo over-ssh 2>&1"
	unlike "$RF_OUT" "over-ssh" "control: ssh to a name allowed only on another port is refused"
else
	for _ in 1 2 3 4; do skip "ssh and git over ssh" "no sshd, ssh or git"; done
fi

done_testing
