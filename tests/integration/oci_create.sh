#!/bin/bash
# tests/integration/oci_create.sh — ringfence-oci's create and start: the
# process model engines expect (issue 17), and what a bundle may ask for
# beyond the standard mounts.
#
# A shim of the tests' own (tests/helpers/oci-shim.py: a child subreaper,
# as containerd-shim-runc-v2 and conmon are) runs `create`, reads the pid
# file, `start`s the container and reaps its init. Asserted: the state is
# "created" with the pid of the pid file until start; the container's init
# is the shim's child (not the supervisor's); the command starts only at
# start; the shim's waitpid gets the command's own exit status; a console
# socket receives the terminal; kill before start and delete of a created
# container end it; nothing is left after delete. Where runc is installed,
# the same bundle through the same shim is the control.
#
# Then the config's own: a bind mount (read-only honoured: EROFS), a
# tmpfs, a namespaced sysctl (the host's value unchanged: control), a
# sysctl of the host's refused, a seccomp profile of the container's own
# (its refusal with its errno) on top of ringfence's floor (EPERM for a
# user namespace even when the profile allows everything), a symlinked
# mount target (CVE-2019-19921 class: inside the root, nothing outside).
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/helpers/image.bash
. "$(dirname "$0")/../helpers/image.bash"
require_bin
new_workspace
require_isolation
require_busybox

require_oci
SHIM=$RF_SRC/tests/helpers/oci-shim.py
rf_mktemp /tmp
TOP=$REPLY
B=$TOP/bundle
ROOT=$TOP/oci-root
RROOT=$TOP/runc-root
mkdir -p "$B" "$ROOT" "$RROOT"
make_image "$B/rootfs"
ID=rf-create-$$
RUNC=$(command -v runc || true)
# whatever container of this test is left (a failed assertion, a timeout)
# is deleted by its id, through the runtime that made it
cleanup_containers() {
	local c
	for c in "$ID" "$ID-held" "$ID-x" "$ID-u" "$ID-cg" "$ID-ovl"; do
		RINGFENCE_STATE_DIR=$RF_STATE timeout 30 "$OCI" --root "$ROOT" delete --force "$c" \
			</dev/null >/dev/null 2>&1
	done
	# the parents of this test's cgroupsPath leaves, by their names
	local d
	for d in "${CG_MADE[@]}"; do
		case ${d##*/} in rft-cg-$$-*) rmdir "$d" 2>/dev/null ;; esac
	done
}
CG_MADE=()
trap 'cleanup_containers; _rf_cleanup' EXIT

RINGFENCE_STATE_DIR=$RF_STATE "$OCI" spec -b "$B" >/dev/null 2>&1 || bail_out "spec failed"

config() {
	python3 - "$B/config.json" "$1" <<'PY' || bail_out "cannot edit config.json"
import json, sys
p, expr = sys.argv[1], sys.argv[2]
c = json.load(open(p))
exec(expr)
json.dump(c, open(p, "w"), indent=1)
PY
}
config 'c["process"]["terminal"]=False'
cp "$B/config.json" "$TOP/base.json"
reset_config() { cp "$TOP/base.json" "$B/config.json"; }

# shim RUNTIME ROOT ID [OPTS] — sets SHIM_OUT (key=value lines); `fact K`
# reads one
shim() {
	SHIM_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 90 python3 "$SHIM" "$1" "$2" "$B" "$3" \
		"${@:4}" 2>&1)
}
fact() { printf '%s\n' "$SHIM_OUT" | sed -n "s/^$1=//p" | head -n 1; }

# --- create, start, the exit status -------------------------------------------
config 'c["process"]["args"]=["/bin/sh","-c","echo out-of-$(hostname); exit 7"]'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)" 0 "create: exit 0"
is "$(fact state_created)" created "... the state is created"
is "$(fact pid_match)" yes "... with the pid the pid file names"
is "$(fact init_parent)" shim "... and the container's init is the shim's child, not its supervisor's"
is "$(fact start_rc)" 0 "start: exit 0"
is "$(fact exit)" 7 "the shim's waitpid on init gets the command's status (7)"
like "$(fact output)" "out-of-ringfence" "the command ran, its output on the shim's pipe"
is "$(fact state_after)" stopped "after the end: stopped"
is "$(fact delete_rc)" 0 "delete: exit 0"
is "$(fact left)" 0 "... nothing of it left in --root"
if [ -n "$RUNC" ] && RCG=$(cgroup_own_deepest); then
	RCG=$RCG/rft-cg-$$-runc
	cp "$B/config.json" "$TOP/config.keep"
	oci_cgroup_path "$B/config.json" "$RCG"
	shim "$RUNC" "$RROOT" "$ID"
	cp "$TOP/config.keep" "$B/config.json"
	oci_cgroup_rm "$RCG"
	is "$(fact exit):$(fact init_parent):$(fact state_created)" "7:shim:created" \
		"control: runc through the same shim, the same status, parent and state"
else
	skip "control: runc through the same shim" "runc is not installed, or our cgroups do not nest"
fi
"$RF_BIN" audit --state-dir "$RF_STATE" --json 2>/dev/null | grep '"run.exit"' | tail -n 1 |
	grep -q '"status":7' && ok "the audit log's run.exit agrees (7)" ||
	not_ok "the audit log's run.exit agrees (7)"

# the command waits for start: nothing it does happens before
config 'c["process"]["args"]=["/bin/rf-probe","create","/tmp/started"]'
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" create --bundle "$B" \
	--pid-file "$TOP/pid" "$ID-held" </dev/null >/dev/null 2>"$TOP/err"
is "$?" 0 "create without start: exit 0"
pid=$(cat "$TOP/pid" 2>/dev/null)
held=$(RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" state "$ID-held" 2>/dev/null)
like "$held" '"status":"created"' "... held created"
ls /proc/"$pid"/task/*/children >/dev/null 2>&1 && [ -z "$(cat /proc/"$pid"/task/*/children)" ] &&
	ok "... its init has no child: the command did not start" ||
	not_ok "... its init has no child: the command did not start"
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" delete "$ID-held" >/dev/null 2>&1
is "$?" 0 "delete of a created container: exit 0 (it is killed, as runc's is)"
[ ! -e "$ROOT/$ID-held" ] && ok "... nothing left" || not_ok "... nothing left"
# (a zombie until whoever inherited it reaps it: not this script's child)
[ ! -e "/proc/$pid" ] || [ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" = Z ] &&
	ok "... its init is gone" || not_ok "... its init is gone"

# kill before start
config 'c["process"]["args"]=["/bin/sh","-c","sleep 100"]'
shim "$OCI" "$ROOT" "$ID" --kill-before-start TERM
is "$(fact kill_rc)" 0 "kill TERM of a created container: exit 0"
like "$(fact exit)" "^sig:9$" "... its init is ended (SIGKILL: its command never ran)"
is "$(fact left)" 0 "... and deleted, nothing left"

# the console socket
config 'c["process"]["terminal"]=True; c["process"]["args"]=["/bin/sh","-c","/bin/rf-probe tty; exit 6"]'
shim "$OCI" "$ROOT" "$ID" --tty
is "$(fact tty)" yes "process.terminal: the pty master arrives on --console-socket"
like "$(fact output)" "name=/dev/pts/" "... the command's stdio is that terminal"
is "$(fact exit)" 6 "... and its status reaches the shim (6)"
reset_config
RINGFENCE_STATE_DIR=$RF_STATE "$OCI" --root "$ROOT" create --bundle "$B" \
	--console-socket "$TOP/nosock" "$ID" </dev/null >/dev/null 2>"$TOP/err"
is "$?" 1 "--console-socket without process.terminal: refused (1)"
[ ! -e "$ROOT/$ID" ] && ok "... nothing made" || not_ok "... nothing made"

# --- what a bundle may ask for -----------------------------------------------
mkdir -p "$TOP/vol"
echo "volume-data" >"$TOP/vol/f"
chmod -R a+rX "$TOP/vol"
config 'c["mounts"].append({"destination":"/data","type":"bind","source":"'"$TOP"'/vol","options":["rbind","ro"]})
c["mounts"].append({"destination":"/scratch","type":"tmpfs","source":"tmpfs","options":["size=1m","mode=1777"]})
c["process"]["args"]=["/bin/sh","-c","cat /data/f; /bin/rf-probe write /data/g x; /bin/rf-probe stat /scratch; /bin/rf-probe write /scratch/x y"]'
shim "$OCI" "$ROOT" "$ID"
out=$(fact output)
like "$out" "volume-data" "a bind mount: the host directory's file is there"
like "$out" "errno=EROFS" "... read-only as the config says (EROFS)"
like "$out" "mode=1777" "a tmpfs: there, with the config's mode"
unlike "$out" "write /scratch.*errno" "... and writable"
[ ! -e "$TOP/vol/g" ] && ok "... nothing written to the host directory" ||
	not_ok "... nothing written to the host directory"
reset_config

host_pgr=$(cat /proc/sys/net/ipv4/ping_group_range)
config 'c["linux"]["sysctl"]={"net.ipv4.ping_group_range":"0 0"}
c["process"]["args"]=["/bin/cat","/proc/sys/net/ipv4/ping_group_range"]'
shim "$OCI" "$ROOT" "$ID"
like "$(fact output)" '0\\t0' "a net.* sysctl: set in the container's network namespace"
is "$(cat /proc/sys/net/ipv4/ping_group_range)" "$host_pgr" "... the host's value unchanged (control)"
config 'c["linux"]["sysctl"]={"kernel.domainname":"x"}'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)" 125 "a sysctl of the host's (kernel.domainname): refused (125)"
like "$(fact create_err)" "only the run's own namespaces" "... saying so"
is "$(fact left)" 0 "... nothing left"
reset_config

# a profile of the container's own, on top of ringfence's floor
config 'c["linux"]["seccomp"]={"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64"],
 "syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":13}]}
c["process"]["args"]=["/bin/sh","-c","/bin/rf-probe mkdir /tmp/d; /bin/rf-probe create /tmp/f; /bin/rf-probe unshare-user"]'
shim "$OCI" "$ROOT" "$ID"
out=$(fact output)
like "$out" "errno=EACCES" "the container's seccomp profile applies: mkdir gets its errnoRet (EACCES)"
unlike "$out" "create.*errno" "... what it allows works (a file is made)"
like "$out" "errno=EPERM" "... and ringfence's floor stays under it: a user namespace is refused (EPERM)"
config 'c["linux"]["seccomp"]={"defaultAction":"SCMP_ACT_NOTIFY","listenerPath":"/x"}'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)" 125 "a profile asking for SCMP_ACT_NOTIFY: refused (125)"
like "$(fact create_err)" "linux.seccomp" "... naming the key"
reset_config

# a mount target through a symlink of the image (the runc CVE-2019-19921
# class): followed inside the root, as runc's securejoin does, never out
# of it (oci_mounts.sh has the rest of the class, runc beside it)
mkdir -p "$TOP/outside"
ln -s "$TOP/outside" "$B/rootfs/evil"
config 'c["mounts"].append({"destination":"/evil/x","type":"tmpfs","source":"tmpfs"})
c["process"]["args"]=["/bin/sh","-c","test -d '"$TOP"'/outside/x && echo inside"]'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)/$(fact output)" "0/\"inside\\n\"" \
	"a mount target through a symlink in the image: it lands inside the root, where the link names"
[ -z "$(ls -A "$TOP/outside")" ] && ok "... nothing made outside the root" ||
	not_ok "... nothing made outside the root"
rm -f "$B/rootfs/evil"
reset_config

# a masked path through a symlink of the image, and the image's own
# /dev/null as a symlink into procfs (the runc CVE-2025-31133 class: a
# runtime that masks with the container's /dev/null would bind what the
# symlink names, writable, over the masked path)
mkdir -p "$TOP/outside2"
echo host-file >"$TOP/outside2/f"
ln -s "$TOP/outside2" "$B/rootfs/evil2"
config 'c["linux"]["maskedPaths"].append("/evil2/f")'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)" 125 "a masked path through a symlink in the image: refused (125)"
like "$(fact create_err)" "ELOOP|symbolic links|Too many levels|maskedPaths" "... the symlink is not followed"
grep -q " $TOP/outside2" /proc/self/mountinfo && not_ok "... nothing mounted outside the root" ||
	ok "... nothing mounted outside the root"
is "$(cat "$TOP/outside2/f")" host-file "... the host file is unchanged"
rm -f "$B/rootfs/evil2"
reset_config
mkdir -p "$B/rootfs/dev"
rm -f "$B/rootfs/dev/null"
ln -s /proc/sys/kernel/core_pattern "$B/rootfs/dev/null"
host_cp=$(cat /proc/sys/kernel/core_pattern)
config 'c["linux"]["maskedPaths"]=["/proc/kcore","/proc/timer_list"]
c["process"]["args"]=["/bin/sh","-c","/bin/rf-probe write /proc/kcore x; /bin/rf-probe stat /dev/null; echo |/bin/evil > /proc/kcore; cat /proc/timer_list | wc -c"]'
shim "$OCI" "$ROOT" "$ID"
is "$(fact create_rc)" 0 "the image's /dev/null a symlink into procfs: the container is made (its /dev is ringfence's own)"
like "$(fact output)" "type=chr" "... its /dev/null is a character device, not the image's symlink"
is "$(cat /proc/sys/kernel/core_pattern)" "$host_cp" "... the host's core_pattern is unchanged (control: read before)"
rm -f "$B/rootfs/dev/null"
rmdir "$B/rootfs/dev" 2>/dev/null
reset_config

# --- exec: a process joining a running container ------------------------------
config 'c["process"]["args"]=["/bin/sh","-c","while :; do sleep 1; done"]'
ocx() { # ARGS... — ringfence-oci with this test's root and state dir; RF_RC, RF_OUT
	RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" "$@" 2>&1 </dev/null)
	RF_RC=$?
}
# (create's and a detached exec's stdio is the engine's, held by what they
# leave running: never a pipe this script reads to its end)
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" \
	--pid-file "$TOP/xpid" "$ID-x" </dev/null >/dev/null 2>"$TOP/err"
is "$?" 0 "a container to exec into: created"
ocx start "$ID-x"
is "$RF_RC" 0 "a container to exec into: started"
exe_sum=$(sha256sum "$OCI" | cut -d' ' -f1)
ocx exec "$ID-x" /bin/sh -c 'cat /proc/self/status; ls /proc; cat /proc/self/cgroup >/tmp/c1; cat /proc/1/cgroup >/tmp/c2; cmp /tmp/c1 /tmp/c2 && echo same-cgroup; /bin/rf-probe unshare-user; /bin/rf-probe write /proc/1/exe x; /bin/rf-probe write /etc/marker x; exit 5'
is "$RF_RC" 5 "exec: the process's status (5)"
like "$RF_OUT" "NoNewPrivs:[[:space:]]*1" "... no_new_privs, as the init's command"
like "$RF_OUT" "CapEff:[[:space:]]*0000000000000000" "... no capabilities"
like "$RF_OUT" "Seccomp:[[:space:]]*2" "... ringfence's seccomp filter"
like "$RF_OUT" "same-cgroup" "... in the container's cgroups"
like "$RF_OUT" "unshare-user.*errno=EPERM|errno=EPERM" "... a user namespace refused (EPERM)"
like "$RF_OUT" "write /proc/1/exe.*errno=E(ACCES|PERM|TXTBSY)|errno=EACCES" \
	"... the runtime behind /proc/1/exe cannot be written (the CVE-2019-5736 class)"
is "$(sha256sum "$OCI" | cut -d' ' -f1)" "$exe_sum" "... and the runtime binary is unchanged"
line=$(printf '%s\n' "$RF_OUT" | grep -E '^[0-9]+$' | tr '\n' ' ')
like "$line" "^1 " "... in the container's pid namespace (its init is pid 1 there)"
# the CVE-2024-21626 class: the caller's fds (a directory among them) never
# reach the process, and its cwd is inside the container
exec 7<"$TOP" 8<"$B/config.json"
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec "$ID-x" \
	/bin/sh -c '/bin/rf-probe fds; /bin/rf-probe cwd; ls /proc/self/cwd/ >/dev/null && echo cwd-listed' \
	2>&1 </dev/null)
exec 7<&- 8<&-
like "$RF_OUT" "ok 0 1 2([^ 0-9]|$)" "exec: only fds 0 1 2 of the caller's 0-8 reach the process"
unlike "$RF_OUT" "ok 0 1 2 [0-9]" "... none beyond them"
like "$RF_OUT" "cwd-listed" "... its cwd lies inside the container"
# ... nor does a cwd named through such an fd (a directory outside the
# container's root): refused at the chdir, the command never runs
exec 7</etc
RF_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec --cwd /proc/self/fd/7 \
	"$ID-x" /bin/sh -c 'echo ran-outside; ls' 2>&1 </dev/null)
RF_RC=$?
exec 7<&-
is "$RF_RC" 125 "exec --cwd /proc/self/fd/7 (the caller's fd on the host's /etc): refused (125)"
like "$RF_OUT" "No such file or directory \(cwd\)" "... at the working directory, unreachable (ENOENT)"
unlike "$RF_OUT" "ran-outside" "... the command never ran"
ocx exec --cwd /etc "$ID-x" /bin/sh -c 'pwd'
is "$RF_RC/$RF_OUT" "0//etc" "control: exec --cwd /etc runs there"
ocx exec "$ID-x" /no/such/command
is "$RF_RC" 127 "exec of a command not found: 127"
ocx exec --process /dev/null "$ID-x"
isnt "$RF_RC" 0 "exec --process of something that is no process: refused"
printf '{"args":["/bin/sh","-c","echo $FROMPROC; exit 3"],"env":["FROMPROC=proc-env","PATH=/bin"],"cwd":"/","user":{"uid":0,"gid":0}}' >"$TOP/proc.json"
ocx exec --process "$TOP/proc.json" "$ID-x"
is "$RF_RC" 3 "exec --process FILE: its args (3)"
like "$RF_OUT" "proc-env" "... and its env"
printf '{"args":["/bin/true"],"cwd":"/","user":{"uid":1000,"gid":1000}}' >"$TOP/proc2.json"
ocx exec --process "$TOP/proc2.json" "$ID-x"
is "$RF_RC" 125 "exec as another user: refused (125: one id is mapped)"
for u in 00 0abc 0:1000 1000; do
	ocx exec --user "$u" "$ID-x" /bin/true
	is "$RF_RC" 125 "exec --user $u: refused (125)"
done
ocx exec --user 0:0 "$ID-x" /bin/sh -c 'exit 0'
is "$RF_RC" 0 "exec --user 0:0 (the container's own): runs"
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec --detach \
	--pid-file "$TOP/xp2" "$ID-x" /bin/sh -c 'sleep 30' </dev/null >/dev/null 2>"$TOP/err"
is "$?" 0 "exec --detach: exit 0"
xp=$(cat "$TOP/xp2" 2>/dev/null)
[ -n "$xp" ] && [ -e "/proc/$xp" ] && ok "... the pid file names the joined process" ||
	not_ok "... the pid file names the joined process"
"$RF_BIN" audit --state-dir "$RF_STATE" --json 2>/dev/null | grep -c '"run.exec"' | grep -qv '^0$' &&
	ok "each exec is recorded (run.exec)" || not_ok "each exec is recorded (run.exec)"
ocx delete --force "$ID-x"
is "$RF_RC" 0 "delete --force of the running container"
[ ! -e "/proc/$xp" ] || [ "$(sed 's/.*) //' "/proc/$xp/stat" | cut -d' ' -f1)" = Z ] &&
	ok "... the joined process went with it (the kill switch reaches exec'd processes)" ||
	not_ok "... the joined process went with it (the kill switch reaches exec'd processes)"
ocx exec "$ID-x" /bin/true
is "$RF_RC" 1 "exec into a container that is gone: refused (1)"
reset_config

# --- kill with any signal, and --all --------------------------------------------
# (an engine's stop signal may be any: httpd's WINCH, systemd's RTMIN+3;
# --all reaches exec'd processes too)
config 'c["process"]["args"]=["/bin/sh","-c","trap \"echo winch >>/tmp/sigs\" WINCH; trap \"echo rt3 >>/tmp/sigs\" 37; echo ready >>/tmp/sigs; while :; do sleep 0.2; done"]'
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" \
	"$ID-s" </dev/null >/dev/null 2>"$TOP/err"
ocx start "$ID-s"
is "$RF_RC" 0 "a container for signals: started"
# sigs_have WORD — the command's handler wrote WORD (polled, up to 10 s)
sigs_have() {
	for _ in $(seq 50); do
		ocx exec "$ID-s" /bin/sh -c 'cat /tmp/sigs 2>/dev/null'
		[[ $RF_OUT == *"$1"* ]] && return 0
		sleep 0.2
	done
	return 1
}
# (the handlers are in place once the command says so: a signal before
# would meet the shell's default, which ignores WINCH)
sigs_have ready || not_ok "the command's handlers are in place" "$RF_OUT"
ocx kill "$ID-s" WINCH
is "$RF_RC" 0 "kill WINCH (not a terminating signal): exit 0"
sigs_have winch && ok "... the command's WINCH handler ran" || not_ok "... the command's WINCH handler ran" "$RF_OUT"
ocx kill "$ID-s" SIGRTMIN+3
is "$RF_RC" 0 "kill SIGRTMIN+3 (systemd's stop signal): exit 0"
sigs_have rt3 && ok "... the command's handler for signal 37 ran" ||
	not_ok "... the command's handler for signal 37 ran" "$RF_OUT"
ocx kill "$ID-s" STOP
is "$RF_RC" 1 "kill STOP: refused (1)"
like "$RF_OUT" "pause" "... saying that pause freezes the container"
ocx kill "$ID-s" NOSUCH
is "$RF_RC/$RF_OUT" "1/ringfence-oci: kill: NOSUCH: not a signal" "kill of a name that is no signal: refused"
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" exec --detach \
	--pid-file "$TOP/xs2" "$ID-s" /bin/sh -c "sleep 300" </dev/null >/dev/null 2>"$TOP/err"
xs=$(cat "$TOP/xs2" 2>/dev/null)
[ -n "$xs" ] && [ -e "/proc/$xs" ] && ok "control: an exec'd process runs beside the command" ||
	not_ok "control: an exec'd process runs beside the command"
ocx kill --all "$ID-s" TERM
is "$RF_RC" 0 "kill --all TERM: exit 0"
gone=no
for _ in $(seq 50); do
	if [ ! -e "/proc/$xs" ] || [ "$(sed 's/.*) //' "/proc/$xs/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; then
		gone=yes
		break
	fi
	sleep 0.2
done
is "$gone" yes "... it reached the exec'd process too (TERM: gone)"
ocx delete --force "$ID-s"
is "$RF_RC" 0 "... delete --force"
reset_config

# --- ps, events --stats, update: what containerd's shim asks of a runtime -----
config 'c["process"]["args"]=["/bin/sh","-c","while :; do sleep 1; done"]
c["linux"]["resources"]={"memory":{"limit":134217728},"pids":{"limit":64}}'
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" \
	--pid-file "$TOP/upid" "$ID-u" </dev/null >/dev/null 2>"$TOP/err"
ocx start "$ID-u"
is "$RF_RC" 0 "a container with memory and pids limits: started"
upid=$(cat "$TOP/upid" 2>/dev/null)
# the command's shell forks its first `sleep` after start returns: waited for (bounded)
for _ in $(seq 1 100); do
	ocx ps --format json "$ID-u"
	[ "$(printf '%s' "$RF_OUT" | tr ',' '\n' | grep -c .)" -ge 3 ] && break
	sleep 0.05
done
is "$RF_RC" 0 "ps --format json: exit 0"
like "$RF_OUT" "^\[([0-9]+,)+[0-9]+\]$" "... a JSON array of pids"
like "$RF_OUT" "[[,]$upid[],]" "... its init's among them"
n_ps=$(printf '%s' "$RF_OUT" | tr ',' '\n' | grep -c .)
[ "$n_ps" -ge 3 ] && ok "... and the command's processes ($n_ps)" ||
	not_ok "... and the command's processes ($n_ps)"
ocx ps "$ID-u"
like "$RF_OUT" "sleep" "ps (table): the command's processes by name"
ocx events --stats "$ID-u"
is "$RF_RC" 0 "events --stats: exit 0"
like "$RF_OUT" '"type":"stats".*"memory":\{"usage":\{"usage":[1-9][0-9]*' "... the memory in use"
like "$RF_OUT" '"pids":\{"current":[1-9]' "... and the tasks"
cg_file() { # CONTROLLER FILE — the container init's cgroup file (v2 where it limits, else v1)
	local rel
	rel=$(grep -E "^[0-9]+:([^:]*,)?$1(,[^:]*)?:" "/proc/$upid/cgroup" | cut -d: -f3)
	if [ -n "$rel" ] && [ -e "/sys/fs/cgroup/$1$rel/$2" ]; then
		cat "/sys/fs/cgroup/$1$rel/$2"
	else
		rel=$(grep "^0::" "/proc/$upid/cgroup" | cut -d: -f3)
		cat "/sys/fs/cgroup$rel/$3" 2>/dev/null || cat "/sys/fs/cgroup/unified$rel/$3"
	fi
}
ocx update --memory 64m --pids-limit 32 "$ID-u"
is "$RF_RC" 0 "update --memory 64m --pids-limit 32: exit 0"
is "$(cg_file pids pids.max pids.max)" 32 "... pids.max is 32 in its cgroup"
is "$(cg_file memory memory.limit_in_bytes memory.max)" 67108864 "... the memory limit 64 MiB"
ocx update --memory 256m "$ID-u"
is "$RF_RC" 1 "update above the container's own limit: refused (1)"
like "$RF_OUT" "above the run's own limit" "... saying so (its config is the ceiling)"
is "$(cg_file memory memory.limit_in_bytes memory.max)" 67108864 "... the limit unchanged"
RF_OUT=$(printf '{"memory":{"limit":100663296},"pids":{"limit":48}}' |
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" update -r - "$ID-u" 2>&1)
is "$?" 0 "update --resources - (containerd's form): exit 0"
is "$(cg_file pids pids.max pids.max)" 48 "... pids.max is 48"
RF_OUT=$(printf '{"blockIO":{"weight":10}}' |
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" update -r - "$ID-u" 2>&1)
is "$?" 1 "update of a resource ringfence-oci does not implement: refused (1)"
like "$RF_OUT" "blockIO" "... naming it"
"$RF_BIN" audit --state-dir "$RF_STATE" --json 2>/dev/null | grep -q '"run.limits"' &&
	ok "each update is recorded (run.limits)" || not_ok "each update is recorded (run.limits)"
if [ -n "$RUNC" ]; then
	runc_out=$("$RUNC" --root "$RROOT" ps --format json "no-such-$$" 2>&1)
	rrc=$?
	ocx ps --format json "no-such-$$"
	[ "$rrc" != 0 ] && [ "$RF_RC" != 0 ] && ok "ps of no such container fails, as runc's (control)" ||
		not_ok "ps of no such container fails, as runc's (control): $runc_out"
fi
ocx delete --force "$ID-u"
ocx ps --format json "$ID-u"
is "$RF_RC" 1 "ps of a deleted container: refused (1)"
reset_config

# --- linux.cgroupsPath: the container lives in exactly the cgroup it names -----
# (only ever beneath this test's own cgroups: the deepest of them, where the
# others are its prefixes, as on a hybrid host with a v1 memory cgroup)
if is_root && OWN=$(cgroup_own_deepest); then
	CGP="$OWN/rft-cg-$$-a/ctr"
	for m in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		CG_MADE+=("${m%/}$OWN/rft-cg-$$-a")
	done
	config 'c["process"]["args"]=["/bin/sh","-c","while :; do sleep 1; done"]
c["linux"]["resources"]={"memory":{"limit":134217728},"pids":{"limit":64}}
c["linux"]["cgroupsPath"]="'"$CGP"'"'
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" \
		--pid-file "$TOP/cgpid" "$ID-cg" </dev/null >/dev/null 2>"$TOP/err"
	is "$?" 0 "a cgroupsPath beneath ours: created ($(head -c 200 "$TOP/err"))"
	ocx start "$ID-cg"
	cgpid=$(cat "$TOP/cgpid" 2>/dev/null)
	mine=$(grep -E '^[0-9]+:(pids|memory|):' "/proc/$cgpid/cgroup" 2>/dev/null | cut -d: -f3 | sort -u)
	is "$mine" "$CGP" "... its init is in exactly that cgroup (pids, memory, cgroup2)"
	ocx update --pids-limit 40 "$ID-cg"
	is "$(cat "/sys/fs/cgroup/pids$CGP/pids.max" 2>/dev/null)" 40 \
		"... where update writes its limits (pids.max at the path)"
	ocx exec "$ID-cg" /bin/cat /proc/self/cgroup
	like "$RF_OUT" "pids:.*/ctr" "... and where exec'd processes join it"
	ocx delete --force "$ID-cg"
	[ ! -e "/sys/fs/cgroup/pids$CGP" ] && ok "... the leaf is removed with the container" ||
		not_ok "... the leaf is removed with the container"
else
	skip "a cgroupsPath beneath ours" "not root, or this process's cgroups do not nest"
fi
config 'c["linux"]["cgroupsPath"]="system.slice:libpod:rf'"$$"'"'
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" "$ID-cg" \
	</dev/null >/dev/null 2>"$TOP/err"
is "$?" 125 "systemd's slice:prefix:name cgroupsPath: refused (125)"
like "$(cat "$TOP/err")" "systemd" "... saying there is no systemd cgroup driver"
config 'c["linux"]["cgroupsPath"]="../escape-'"$$"'"'
RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" "$ID-cg" \
	</dev/null >/dev/null 2>"$TOP/err"
is "$?" 125 "a cgroupsPath with '..': refused (125)"
[ ! -e "$ROOT/$ID-cg" ] && ok "... nothing left" || not_ok "... nothing left"
if is_root && [ "$(cgroup_own_deepest)" != "" ] && [ "$(cgroup_own_deepest)" != / ]; then
	config 'c["linux"]["cgroupsPath"]="/rft-cg-'"$$"'-out/ctr"'
	RINGFENCE_STATE_DIR=$RF_STATE timeout 60 "$OCI" --root "$ROOT" create --bundle "$B" "$ID-cg" \
		</dev/null >/dev/null 2>"$TOP/err"
	is "$?" 125 "a cgroupsPath outside ours (and no --cgroup-root): refused (125)"
	like "$(cat "$TOP/err")" "outside ringfence's own cgroup" "... saying so"
	found=$(ls -d /sys/fs/cgroup/*/rft-cg-$$-out /sys/fs/cgroup/rft-cg-$$-out 2>/dev/null)
	is "$found" "" "... and no directory was made in any hierarchy"
else
	skip "a cgroupsPath outside ours" "this process is in the root cgroup of every hierarchy"
fi
ocx --cgroup-root relative/x list
is "$RF_RC" 1 "--cgroup-root of a relative path: refused (1)"
reset_config

# an engine's overlay root (Podman's overlay driver, containerd's overlayfs
# snapshotter): the kernel idmaps no overlay mount, so ringfence stacks its
# layers, each idmapped, into an overlay of its own
if is_root; then
	O=$TOP/ovl
	mkdir -p "$O/lower" "$O/upper" "$O/work" "$O/bundle/rootfs"
	cp -a "$B/rootfs/." "$O/lower/"
	echo "from-the-upper" >"$O/upper/upper-file"
	cp "$B/config.json" "$O/bundle/config.json"
	if mount -t overlay overlay -o "lowerdir=$O/lower,upperdir=$O/upper,workdir=$O/work" \
		"$O/bundle/rootfs"; then
		python3 - "$O/bundle/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/sh", "-c", "cat /upper-file; /bin/rf-probe stat /etc/marker; /bin/rf-probe write /upper-file x; exit 9"]
json.dump(c, open(sys.argv[1], "w"))
PY
		SHIM_OUT=$(RINGFENCE_STATE_DIR=$RF_STATE timeout 90 python3 "$SHIM" "$OCI" "$ROOT" \
			"$O/bundle" "$ID-ovl" 2>&1)
		umount "$O/bundle/rootfs"
		is "$(fact exit)" 9 "an overlay-mounted root: the container runs (9)"
		out=$(fact output)
		like "$out" "from-the-upper" "... its upper layer's files are there"
		like "$out" "uid=0 gid=0" "... the image's root-owned files are the container root's own (idmapped layers)"
		like "$out" "write /upper-file.*errno=E(ROFS|ACCES|PERM)|errno=E(ROFS|ACCES|PERM)" \
			"... and the engine's layers are never written through"
		is "$(cat "$O/upper/upper-file")" "from-the-upper" "... the upper layer's file unchanged on the host"
	else
		skip "an overlay-mounted root" "cannot mount an overlay here"
	fi
else
	skip "an overlay-mounted root" "needs root (mounting the overlay)"
fi

done_testing
