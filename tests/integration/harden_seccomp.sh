#!/bin/bash
# tests/integration/harden_seccomp.sh — the seccomp layer.
#
# sc-probe (tests/helpers/seccomp) makes each attack with the raw system
# call — syscall(), clone3 with its struct, `int $0x80` for i386, x32
# numbers, high bits in 32-bit arguments — and the test asserts the answer
# that comes from the filter: EPERM for the named refusals, ENOSYS for what
# the allowlist leaves out (clone3, openat2, a syscall newer than the
# table), SIGSYS (exit 159) for any other ABI (each first tried outside
# any sandbox: a host that cannot make an i386 or x32 call at all skips
# those cases, saying so). Legitimate controls run in
# the same batch (fork, threads, TCP over loopback, chmod 0755, the
# personality query), then real workloads (coreutils, python3, git, cc,
# make, node).
#
# Everything runs as root and as an unprivileged caller. Then the same batch
# runs with the layer switched off (test build, RINGFENCE_TEST_SKIP=seccomp):
# unshare(CLONE_NEWUSER) then succeeds, and every attack marked "!" below
# gets a different answer from the kernel alone — so an EPERM seen with the
# layer on is the filter's, and the test can go red.
#
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
require_bin

SC_PROBE=$(dirname "$RF_PROBE")/seccomp/sc-probe
[ -x "$SC_PROBE" ] || bail_out "sc-probe ($SC_PROBE) is not built"

# What each attempt must give with the filter on, and what switching the
# layer off shows:
#   !  the kernel alone answers differently (asserted with the layer off)
#   =  the kernel refuses too, for lack of a capability: two layers
#   ~  the kernel's own answer depends on its configuration (shown only)
#   c  a legitimate control: the same answer with and without the layer
EXPECT=$(
	cat <<'EOF'
unshare-user                  errno=EPERM           !  unshare(CLONE_NEWUSER)
unshare-user-mount            errno=EPERM           !  unshare(CLONE_NEWUSER|CLONE_NEWNS)
unshare-mount                 errno=EPERM           =  unshare(CLONE_NEWNS)
unshare-net                   errno=EPERM           =  unshare(CLONE_NEWNET)
unshare-files                 errno=EPERM           !  unshare(CLONE_FILES) (unshare is refused whole)
setns-badfd                   errno=EPERM           !  setns(-1, 0)
setns-own-net                 errno=EPERM           =  setns(own net ns)
clone-newuser                 errno=EPERM           !  raw clone(CLONE_NEWUSER)
clone-newuser-hibits          errno=EPERM           !  raw clone(1<<32 | CLONE_NEWUSER)
clone-newns                   errno=EPERM           =  raw clone(CLONE_NEWNS)
clone-newpid                  errno=EPERM           =  raw clone(CLONE_NEWPID)
clone-newnet                  errno=EPERM           =  raw clone(CLONE_NEWNET)
clone-newipc                  errno=EPERM           =  raw clone(CLONE_NEWIPC)
clone-newuts                  errno=EPERM           =  raw clone(CLONE_NEWUTS)
clone-newcgroup               errno=EPERM           =  raw clone(CLONE_NEWCGROUP)
clone3-plain                  errno=ENOSYS          !  raw clone3 (callers fall back to clone)
clone3-newuser                errno=ENOSYS          !  raw clone3(CLONE_NEWUSER)
clone-plain                   ok                    c  control: raw clone(SIGCHLD)
fork                          ok                    c  control: raw fork
thread                        ok                    c  control: pthread_create
posix-spawn                   ok                    c  control: posix_spawn /bin/true
mount-tmpfs                   errno=EPERM           =  mount tmpfs on /tmp
mount-badptr                  errno=EPERM           !  mount with a bad pointer
umount2-badflags              errno=EPERM           !  umount2 with bad flags
pivot-root                    errno=EPERM           =  pivot_root(".", ".")
chroot-missing                errno=EPERM           !  chroot to a missing path
open-tree                     errno=EPERM           !  open_tree(/)
move-mount                    errno=EPERM           =  move_mount
fsopen                        errno=EPERM           =  fsopen(tmpfs)
fsconfig                      errno=EPERM           !  fsconfig(-1)
fsmount                       errno=EPERM           =  fsmount(-1)
fspick                        errno=EPERM           =  fspick(/)
mount-setattr                 errno=EPERM           !  mount_setattr with bad flags
ptrace-child                  errno=EPERM           !  ptrace(ATTACH, own child)
ptrace-traceme                errno=EPERM           !  ptrace(TRACEME)
process-vm-readv-self         errno=EPERM           !  process_vm_readv(self)
process-vm-writev-self        errno=EPERM           !  process_vm_writev(self)
kcmp-self                     errno=EPERM           !  kcmp(self, self)
pidfd-getfd-self              errno=EPERM           !  pidfd_getfd(self)
process-madvise-self          errno=EPERM           ~  process_madvise(self)
pidfd-open-self               ok                    c  control: pidfd_open(self)
kill-child                    ok                    c  control: kill(own child)
keyctl-session                errno=EPERM           !  keyctl(GET_KEYRING_ID, session)
add-key                       errno=EPERM           !  add_key(user)
request-key                   errno=EPERM           !  request_key(user)
bpf-bad-cmd                   errno=EPERM           ~  bpf(bad command)
bpf-map-create                errno=EPERM           =  bpf(MAP_CREATE)
perf-badptr                   errno=EPERM           !  perf_event_open with a bad pointer
perf-self                     errno=EPERM           ~  perf_event_open(task clock, self)
userfaultfd                   errno=EPERM           ~  userfaultfd(USER_MODE_ONLY)
io-uring-setup                errno=EPERM           ~  io_uring_setup
io-uring-setup-badptr         errno=EPERM           ~  io_uring_setup with a bad pointer
io-uring-enter                errno=EPERM           !  io_uring_enter(-1)
io-uring-register             errno=EPERM           !  io_uring_register(-1)
kexec-load                    errno=EPERM           ~  kexec_load
kexec-file-load               errno=EPERM           ~  kexec_file_load
init-module                   errno=EPERM           ~  init_module
finit-module                  errno=EPERM           ~  finit_module
delete-module                 errno=EPERM           ~  delete_module
reboot                        errno=EPERM           =  reboot
swapon                        errno=EPERM           =  swapon
swapoff                       errno=EPERM           =  swapoff
acct                          errno=EPERM           =  acct
quotactl                      errno=EPERM           ~  quotactl
syslog                        errno=EPERM           ~  syslog(SIZE_BUFFER)
settimeofday-null             errno=EPERM           =  settimeofday(NULL, NULL)
clock-settime-badptr          errno=EPERM           !  clock_settime with a bad pointer
clock-adjtime-badptr          errno=EPERM           !  clock_adjtime with a bad pointer
adjtimex-read                 errno=EPERM           !  adjtimex (read-only)
name-to-handle-at-badptr      errno=EPERM           !  name_to_handle_at with a bad pointer
open-by-handle-at             errno=EPERM           ~  open_by_handle_at
iopl                          errno=EPERM           ~  iopl(3)
ioperm                        errno=EPERM           ~  ioperm
fanotify-init                 errno=EPERM           ~  fanotify_init
lookup-dcookie                errno=EPERM           ~  lookup_dcookie
vhangup                       errno=EPERM           =  vhangup
sethostname                   errno=EPERM           =  sethostname
personality-query             ok                    c  control: personality(0xffffffff) query
personality-linux             ok                    c  control: personality(PER_LINUX)
personality-linux32           errno=EPERM           !  personality(PER_LINUX32)
personality-no-aslr           errno=EPERM           !  personality(ADDR_NO_RANDOMIZE)
personality-no-aslr-hibits    errno=EPERM           !  personality(1<<32 | ADDR_NO_RANDOMIZE)
personality-read-implies-exec errno=EPERM           !  personality(READ_IMPLIES_EXEC)
tiocsti-pipe                  errno=EPERM           !  ioctl(TIOCSTI) (on a pipe)
tiocsti-hibits                errno=EPERM           !  ioctl(1<<32 | TIOCSTI)
tiocsti-pty                   errno=EPERM           =  ioctl(TIOCSTI) on a pty
tioclinux-pipe                errno=EPERM           !  ioctl(TIOCLINUX)
ioctl-fionread                ok                    c  control: ioctl(FIONREAD)
ioctl-tcgets-pipe             errno=ENOTTY          c  control: ioctl(TCGETS) on a pipe reaches the kernel
socket-packet                 errno=EPERM           =  socket(AF_PACKET, SOCK_RAW)
socket-packet-dgram           errno=EPERM           =  socket(AF_PACKET, SOCK_DGRAM)
socket-packet-hibits          errno=EPERM           =  socket(1<<32 | AF_PACKET)
socket-inet-raw               errno=EPERM           =  socket(AF_INET, SOCK_RAW)
socket-inet-raw-hibits        errno=EPERM           =  socket(AF_INET, 1<<32 | SOCK_RAW)
socket-inet6-raw              errno=EPERM           =  socket(AF_INET6, SOCK_RAW)
socket-inet-ping              errno=EPERM           ~  socket(AF_INET, SOCK_DGRAM, ICMP): an ICMP "ping" socket
socket-inet6-ping             errno=EPERM           ~  socket(AF_INET6, SOCK_DGRAM, ICMPV6)
socket-inet-packet            errno=EPERM           =  socket(AF_INET, SOCK_PACKET)
socket-inet-sctp              errno=EPERM           ~  socket(AF_INET, SOCK_SEQPACKET, SCTP)
socket-vsock                  errno=EPERM           ~  socket(AF_VSOCK)
socket-alg                    errno=EPERM           ~  socket(AF_ALG)
socket-netlink-audit          errno=EPERM           ~  socket(AF_NETLINK, NETLINK_AUDIT)
socket-netlink-uevent         errno=EPERM           ~  socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)
socket-bluetooth              errno=EPERM           ~  socket(AF_BLUETOOTH)
socketpair-packet             errno=EPERM           =  socketpair(AF_PACKET)
socket-inet-tcp               ok                    c  control: socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC)
socket-inet-udp               ok                    c  control: socket(AF_INET, SOCK_DGRAM|SOCK_NONBLOCK)
socket-inet6-tcp              ok                    c  control: socket(AF_INET6, SOCK_STREAM)
socket-unix-stream            ok                    c  control: socket(AF_UNIX, SOCK_STREAM)
socket-unix-seqpacket         ok                    c  control: socket(AF_UNIX, SOCK_SEQPACKET)
socket-netlink-route          ok                    c  control: socket(AF_NETLINK, NETLINK_ROUTE)
socketpair-unix               ok                    c  control: socketpair(AF_UNIX)
socketpair-inet               errno=EOPNOTSUPP      c  control: socketpair(AF_INET) reaches the kernel
tcp-loopback                  ok                    c  control: TCP listen/connect/accept on 127.0.0.1
chmod-setuid                  errno=EPERM           !  chmod 04755
chmod-setgid                  errno=EPERM           !  chmod 02755
chmod-setuid-hibits           errno=EPERM           !  chmod (1<<32 | 04755)
fchmod-setuid                 errno=EPERM           !  fchmod 04755
fchmodat-setgid               errno=EPERM           !  fchmodat 02755
fchmodat2-setuid              errno=ENOSYS          ~  fchmodat2 04755 (newer than the table)
chmod-group-write             errno=EPERM           !  chmod 0664 (group write)
chmod-other-write-hibits      errno=EPERM           !  chmod (1<<32 | 0646) (other write)
fchmod-world-write            errno=EPERM           !  fchmod 0666
fchmodat-group-write          errno=EPERM           !  fchmodat 0620
chmod-owner-only              ok                    c  control: chmod 0700
umask-zero                    ok                    c  control: umask(0) answers (the old umask; nothing changes)
umask-lax-hibits              errno=EPERM           !  umask(1<<32 | 007): asks for bits the kept 022 lacks
umask-strict                  ok                    c  control: umask(077)
setxattr-user                 errno=EOPNOTSUPP      !  setxattr(user.x)
fsetxattr-acl                 errno=EOPNOTSUPP      !  fsetxattr(system.posix_acl_access, other::rwx)
removexattr-acl               errno=EOPNOTSUPP      !  removexattr(system.posix_acl_access)
fcntl-setlease                errno=EPERM           !  fcntl(F_SETLEASE, F_RDLCK)
fcntl-setlease-hibits         errno=EPERM           !  fcntl(1<<32 | F_SETLEASE)
fcntl-notify                  errno=EPERM           !  fcntl(F_NOTIFY) (dnotify)
fcntl-setlk                   ok                    c  control: fcntl(F_SETLK, F_RDLCK)
fcntl-getlease                ok                    c  control: fcntl(F_GETLEASE)
open-creat-setuid             errno=EPERM           !  open(O_CREAT, 04755)
openat-creat-setgid           errno=EPERM           !  openat(O_CREAT|O_EXCL, 02755)
openat-tmpfile-setuid         errno=EPERM           !  openat(O_TMPFILE, 04755)
creat-setuid                  errno=EPERM           !  creat 04755
openat2-creat                 errno=ENOSYS          !  openat2(O_CREAT, 04755)
mkdir-setgid                  errno=EPERM           !  mkdir 02775
mkdirat-setuid                errno=EPERM           !  mkdirat 04775
mknod-setuid                  errno=EPERM           !  mknod(S_IFREG | 04755)
mknodat-setgid                errno=EPERM           !  mknodat(S_IFIFO | 02644)
chmod-plain                   ok                    c  control: chmod 0755
open-creat-plain              ok                    c  control: open(O_CREAT, 0644)
openat-rdonly-junk-mode       ok                    c  control: openat(O_RDONLY) with setuid bits in the unused mode
openat-tmpfile-plain          ok                    c  control: openat(O_TMPFILE, 0600)
mkdir-plain                   ok                    c  control: mkdir 0755
mknod-fifo                    errno=EACCES          c  mknod(S_IFIFO) in the workspace: Landlock's refusal, not the filter's
mknod-fifo-vartmp             ok                    c  control: mknod(S_IFIFO) in the run's own /var/tmp
x32-getpid                    signal=SIGSYS         !  x32 getpid (0x40000000 | nr)
x32-mount                     signal=SIGSYS         !  x32 mount
i386-getpid                   signal=SIGSYS         !  i386 getpid through int $0x80
nr-unknown                    errno=ENOSYS          c  control: an unknown syscall number
nr-minus-one                  errno=ENOSYS          c  control: syscall -1
getrandom                     ok                    c  control: getrandom
memfd-create                  ok                    c  control: memfd_create
mmap-exec                     ok                    c  control: mmap RW then mprotect RX and run it
prlimit-self                  ok                    c  control: prlimit64(0)
prlimit-other                 errno=EPERM           !  prlimit64(own child)
eventfd                       ok                    c  control: eventfd2
timerfd                       ok                    c  control: timerfd_create
signalfd                      ok                    c  control: signalfd4
inotify                       ok                    c  control: inotify_init1 + add_watch
epoll                         ok                    c  control: epoll_create1
sched-affinity-self           ok                    c  control: sched_setaffinity(self)
landlock-version              ok                    c  control: landlock_create_ruleset(VERSION)
seccomp-nested                ok                    c  control: a nested seccomp filter
EOF
)
NAMES=$(printf '%s\n' "$EXPECT" | awk '{print $1}')

# The other ABIs are a host assumption: some hosts cannot make an i386
# system call at all (a hypervisor whose IA-32 emulation faults on
# `int $0x80`: SIGSEGV before any filter runs), and x32 is usually compiled
# out (ENOSYS). So each is first tried outside any sandbox, and its result
# shown. Where the host itself gets a signal, the call never reaches a
# seccomp filter and the cases are skipped with that reason; wherever the
# host answers (a pid, ENOSYS, EFAULT), the filter's SIGSYS is asserted.
ABI_CASES="x32-getpid x32-mount i386-getpid"
declare -A ABI_HOST=() ABI_SKIP=()
# shellcheck disable=SC2086 # ABI_CASES is a word list
while read -r name result; do
	[ -n "$name" ] && ABI_HOST["$name"]=$result
done <<<"$("$SC_PROBE" try $ABI_CASES)"
for name in $ABI_CASES; do
	diag "control outside the sandbox: $name -> ${ABI_HOST[$name]:-missing}"
	case ${ABI_HOST[$name]:-missing} in
	signal=* | missing | probe-error=*)
		case $name in
		i386-*) ABI_SKIP["$name"]="host cannot make i386 syscalls: control got ${ABI_HOST[$name]#signal=}" ;;
		*) ABI_SKIP["$name"]="host cannot make x32 syscalls: control got ${ABI_HOST[$name]#signal=}" ;;
		esac
		;;
	esac
done

# install_sc_probe — copy sc-probe into $WS (SCP is its path there).
install_sc_probe() {
	if ! cp "$SC_PROBE" "$WS/sc-probe" || ! chmod 0755 "$WS/sc-probe"; then
		bail_out "cannot copy sc-probe"
	fi
	SCP=$WS/sc-probe
}

# batch ARRAY — run every attempt in one sandbox; ARRAY[name]=result.
batch() {
	local -n _res=$1
	local name result
	# shellcheck disable=SC2086 # NAMES is a word list
	rf_run -- "$SCP" try $NAMES
	[ "$RF_RC" = 0 ] || not_ok "the probe batch ran" "exit $RF_RC" "$(_rf_last_run_diag)"
	while read -r name result; do
		[ -n "$name" ] && _res["$name"]=$result
	done <<<"$RF_OUT"
}

# check_batch WHO ARRAY — every attempt gave the answer EXPECT names.
check_batch() {
	local who=$1 name want mark what
	local -n _got=$2
	while read -r name want mark what; do
		if [ -n "${ABI_SKIP[$name]:-}" ]; then
			skip "$who: $what -> $want" "${ABI_SKIP[$name]}"
			continue
		fi
		is "${_got[$name]:-missing}" "$want" "$who: $what -> $want"
	done <<<"$EXPECT"
}

# no_setid_on_host WHO — nothing in the workspace carries a setuid/setgid bit.
no_setid_on_host() {
	local found
	found=$(find "$WS" -perm /6000 2>/dev/null)
	is "$found" "" "$1: no setuid/setgid file or directory reached the host workspace"
}

# killed_abi WHO — the non-native ABIs end the run with SIGSYS (128+31).
killed_abi() {
	local a
	for a in x32-getpid i386-getpid; do
		if [ -n "${ABI_SKIP[$a]:-}" ]; then
			skip "$1: $a in the command itself: killed by SIGSYS, run exits 159" "${ABI_SKIP[$a]}"
			continue
		fi
		rf_run -- "$SCP" "do" "$a"
		is "$RF_RC" 159 "$1: $a in the command itself: killed by SIGSYS, run exits 159"
	done
}

# workloads WHO — real tools work under the filter.
workloads() {
	local who=$1
	# shellcheck disable=SC2016 # expanded by the shell inside the run
	rf_run -- /bin/sh -c 'set -e; mkdir -p d; echo hello >d/f; cp d/f d/g; mv d/g d/h
		chmod 0755 d/h; ln -s f d/l; ls -la d >/dev/null; sort d/f >/dev/null
		tar czf t.tgz d; rm -rf d; tar xzf t.tgz; find d -type f | wc -l
		ps ax >/dev/null; stat -c %a d/h; sleep 0.01; timeout 5 true
		bash -c "x=\$(echo sub); (sleep 0.01 & wait); echo \$x"'
	is "$RF_RC $(printf '%s' "$RF_OUT" | tr '\n' ' ')" "0 2 755 sub" "$who: sh, coreutils, tar, find, ps, bash work"

	if [ -x /usr/bin/python3 ]; then
		rf_run -- /usr/bin/python3 -c '
import os, threading, subprocess, socket, tempfile, multiprocessing, asyncio
t = threading.Thread(target=lambda: None); t.start(); t.join()
out = subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip()
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b"x"); assert a.recv(1) == b"x"
with tempfile.TemporaryDirectory() as d: open(os.path.join(d, "x"), "w").write("y")
with multiprocessing.Pool(2) as p: n = sum(p.map(abs, [-1, -2, 3]))
async def m(): await asyncio.sleep(0.01); return 1
print(out, n, asyncio.run(m()))'
		is "$RF_RC $RF_OUT" "0 sub 6 1" "$who: python3 (threads, subprocess, sockets, multiprocessing, asyncio) works"
	else
		skip "$who: python3 works" "/usr/bin/python3 is not installed"
	fi

	if command -v git >/dev/null; then
		rf_run -- /bin/sh -c 'set -e; git init -q r; cd r; git config user.email a@example.org
			git config user.name agent; echo a >f; git add f; git commit -qm first
			git log --oneline | wc -l'
		is "$RF_RC $RF_OUT" "0 1" "$who: git init + commit in the workspace works"
	else
		skip "$who: git init + commit works" "git is not installed"
	fi

	if command -v cc >/dev/null && command -v make >/dev/null; then
		printf '#include <pthread.h>\n#include <stdio.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts("built"); return 0; }\n' >"$WS/hello.c"
		printf 'hello: hello.c\n\tcc -O2 -o hello hello.c\n' >"$WS/Makefile"
		rf_run -- /bin/sh -c 'make -s && ./hello'
		is "$RF_RC $RF_OUT" "0 built" "$who: make + cc (cc1, as, ld) build and run a program"
	else
		skip "$who: make + cc build a program" "cc or make is not installed"
	fi

	if command -v node >/dev/null; then
		rf_run -- node -e '
const cp = require("child_process"), http = require("http");
const child = cp.execSync("echo child").toString().trim();
http.createServer((q, r) => r.end("http")).listen(0, "127.0.0.1", function () {
  http.get("http://127.0.0.1:" + this.address().port, (r) => r.on("data", (d) => {
    console.log(child, d.toString()); process.exit(0); }));
});'
		is "$RF_RC $RF_OUT" "0 child http" "$who: node (child process, http over loopback) works"
	else
		skip "$who: node works" "node is not installed"
	fi
}

# one_caller WHO — the whole set for one kind of caller.
one_caller() {
	local who=$1
	# shellcheck disable=SC2034 # filled through a nameref by batch
	declare -A res=()
	rf_run -- "$SCP" mode
	is "$RF_OUT" "ok seccomp=2 filters=1" "$who: the command runs under one seccomp filter"
	batch res
	check_batch "$who" res
	no_setid_on_host "$who"
	killed_abi "$who"
	workloads "$who"
}

# ---- root and unprivileged callers ------------------------------------------------

new_workspace
install_sc_probe
if is_root; then
	one_caller root
	new_workspace
	install_sc_probe
	as_user_setup
	export RF_AS_USER=1
	one_caller unprivileged
	unset RF_AS_USER
else
	one_caller unprivileged
fi

# ---- the layer switched off: the same attacks, answered by the kernel alone --------

if [ "${RF_BIN_IS_TEST_BUILD:-0}" != 1 ]; then
	new_workspace
	install_sc_probe
	RF_ENV=(RINGFENCE_TEST_SKIP=seccomp)
	rf_run -- "$SCP" mode
	is "$RF_OUT" "ok seccomp=2 filters=1" "the release binary has no layer switch (RINGFENCE_TEST_SKIP ignored)"
	RF_ENV=()
fi

if [ -z "$RF_TEST_BIN" ]; then
	skip "with the layer off, the attacks are answered by the kernel" "no test build (RF_TEST_BIN)"
	done_testing
fi

new_workspace
install_sc_probe
declare -A on=() off=()
batch on
RF_RUN_BIN=$RF_TEST_BIN
RF_ENV=(RINGFENCE_TEST_SKIP=seccomp)
rf_run -- "$SCP" mode
is "$RF_OUT" "ok seccomp=0 filters=0" "layer off: no filter is installed"
batch off
RF_ENV=()
unset RF_RUN_BIN

is "${off[unshare-user]:-missing}" ok "layer off: unshare(CLONE_NEWUSER) succeeds (the test can go red)"
double="" envdep=""
while read -r name want mark what; do
	if [ -n "${ABI_SKIP[$name]:-}" ]; then
		skip "layer off: $what is answered differently" "${ABI_SKIP[$name]}"
		continue
	fi
	case $mark in
	'!') isnt "${off[$name]:-missing}" "${on[$name]:-missing}" \
		"layer off: $what is answered differently (${off[$name]:-missing}): the refusal was the filter's" ;;
	'c') is "${off[$name]:-missing}" "$want" "layer off: $what gives the same answer" ;;
	'=') double+="$name=${off[$name]:-missing} " ;;
	'~') envdep+="$name=${off[$name]:-missing} " ;;
	*) not_ok "expectation table: bad mark '$mark' for $name" ;;
	esac
done <<<"$EXPECT"
diag "kernel refuses too (two layers): $double" "kernel-dependent answers without the filter: $envdep"

if is_root; then
	found=$(find "$WS" -perm -4000 -name 'sc-chmod-setuid' 2>/dev/null)
	is "$found" "$WS/sc-chmod-setuid" "layer off: as root, chmod 04755 plants a setuid file on the host (what the filter stops)"
fi

# Internet sockets are TCP and UDP only: MPTCP, UDP-Lite, SCTP are refused
# by the filter (EPERM), plain and IPPROTO_TCP/UDP work (control).
if command -v python3 >/dev/null; then
	rf_run -- python3 -c '
import socket
for fam, typ, proto, name in [(2, 1, 0, "tcp0"), (2, 1, 6, "tcp"), (2, 2, 17, "udp"),
                              (10, 1, 0, "tcp6"), (2, 1, 262, "mptcp"), (10, 1, 262, "mptcp6"),
                              (2, 2, 136, "udplite"), (2, 1, 132, "sctp")]:
    try:
        socket.socket(fam, typ, proto).close(); print(name, "ok")
    except OSError as e:
        print(name, e.errno)'
	for ctl in tcp0 tcp udp tcp6; do
		like "$RF_OUT" "(^|$(printf '
'))$ctl ok" "control: socket $ctl works"
	done
	for atk in mptcp mptcp6 udplite sctp; do
		like "$RF_OUT" "(^|$(printf '
'))$atk 1(\$|$(printf '
'))" "socket $atk -> EPERM (filter: TCP/UDP only)"
	done
else
	skip "internet socket protocols" "python3 is not installed"
fi

# A filter that cannot be installed means the command does not run.
RF_RUN_BIN=$RF_TEST_BIN
RF_ENV=(RINGFENCE_TEST_FAIL=seccomp)
rf_run -- /bin/sh -c "echo ran >'$WS/ran'"
RF_ENV=()
unset RF_RUN_BIN
is "$RF_RC" 125 "seccomp install failure: ringfence refuses with 125"
like "$RF_ERR" 'seccomp' "... and says it was the seccomp filter"
check "... and the command did not run" test ! -e "$WS/ran"

done_testing
