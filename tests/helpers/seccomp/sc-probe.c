/*
 * sc-probe — the seccomp layer's attack program (tests/integration/
 * harden_seccomp.sh). Each attempt makes one system call the way an
 * attacker would: raw syscall() rather than the libc wrapper, the i386 ABI
 * through `int $0x80`, x32 numbers, clone3 with a struct, high bits set in
 * 32-bit arguments. Legitimate controls sit beside the attacks.
 *
 *   sc-probe try NAME...   run each attempt in a child of its own and print
 *                          one line per attempt: "NAME ok", "NAME errno=E"
 *                          or "NAME signal=SIGSYS" (the child was killed)
 *   sc-probe do NAME       run one attempt in this process and print the
 *                          result; exit 0 (ok), 1 (errno); a killing
 *                          attempt kills the probe itself
 *   sc-probe list          every attempt's name
 *   sc-probe mode          "ok seccomp=N filters=N" from /proc/self/status
 *
 * Arguments are chosen so that, without the filter, the kernel answers
 * something other than EPERM wherever it can (a bad pointer -> EFAULT, a
 * bad fd -> EBADF, an own child -> success): the test runs the same list
 * with the layer switched off and shows the answers change, so an EPERM
 * here is the filter's.
 *
 * Built without sanitizers (their runtimes use ptrace and personality) and
 * self-contained: it is copied into the workspace and run inside the sandbox.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/kcmp.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#ifndef NR_fchmodat2
#define NR_fchmodat2 452 /* Linux 6.6; newer than the build headers */
#endif
#define I386_NR_getpid 20
#define HIGH_BITS      (1UL << 32) /* ignored by the kernel in 32-bit arguments */

extern char **environ;

/* ---- helpers ------------------------------------------------------------- */

static const char *errno_name(int e)
{
        static char buf[32];
        const char *n = strerrorname_np(e);

        if (n)
                return n;
        snprintf(buf, sizeof buf, "%d", e);
        return buf;
}

/* A child that waits to be probed; dies with us. */
static pid_t sleeper(void)
{
        pid_t pid = fork();

        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        return pid;
}

/* Raw clone without a new stack (fork-like); the child exits at once. */
static long raw_clone(unsigned long flags)
{
        long pid = syscall(SYS_clone, flags | SIGCHLD, 0UL, NULL, NULL, 0UL);

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return pid < 0 ? -1 : 0;
}

static long raw_clone3(uint64_t flags)
{
        struct clone_args args = {.flags = flags, .exit_signal = SIGCHLD};
        long pid = syscall(SYS_clone3, &args, sizeof args);

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return pid < 0 ? -1 : 0;
}

/* The i386 ABI from a 64-bit process: int $0x80 with 32-bit registers. */
static long int80(long nr, long a, long b, long c)
{
        long ret;

        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(nr), "b"(a), "c"(b), "d"(c)
                         : "memory", "r8", "r9", "r10", "r11");
        if ((unsigned long)ret >= (unsigned long)-4095) {
                errno = (int)-ret;
                return -1;
        }
        return 0;
}

/* A fresh name in the current directory for the mode attempts. */
static const char *fresh(const char *name)
{
        static char buf[128];

        snprintf(buf, sizeof buf, "sc-%s", name);
        unlink(buf);
        rmdir(buf);
        return buf;
}

/* A fresh regular file (mode 0644) for the chmod attempts. */
static const char *fresh_file(const char *name)
{
        const char *p = fresh(name);
        int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

        if (fd >= 0)
                close(fd);
        return p;
}

static int pipe_rd(void)
{
        int p[2];

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        return p[0];
}

/* ---- namespaces ----------------------------------------------------------- */

static long unshare_user(void)
{
        return syscall(SYS_unshare, CLONE_NEWUSER);
}
static long unshare_user_mount(void)
{
        return syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS);
}
static long unshare_mount(void)
{
        return syscall(SYS_unshare, CLONE_NEWNS);
}
static long unshare_net(void)
{
        return syscall(SYS_unshare, CLONE_NEWNET);
}
static long unshare_files(void)
{
        return syscall(SYS_unshare, CLONE_FILES);
}
static long setns_badfd(void)
{
        return syscall(SYS_setns, -1, 0);
}
static long setns_own_net(void)
{
        int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        return syscall(SYS_setns, fd, CLONE_NEWNET);
}
static long clone_newuser(void)
{
        return raw_clone(CLONE_NEWUSER);
}
static long clone_newuser_hibits(void)
{
        return raw_clone(HIGH_BITS | CLONE_NEWUSER);
}
static long clone_newns(void)
{
        return raw_clone(CLONE_NEWNS);
}
static long clone_newpid(void)
{
        return raw_clone(CLONE_NEWPID);
}
static long clone_newnet(void)
{
        return raw_clone(CLONE_NEWNET);
}
static long clone_newipc(void)
{
        return raw_clone(CLONE_NEWIPC);
}
static long clone_newuts(void)
{
        return raw_clone(CLONE_NEWUTS);
}
static long clone_newcgroup(void)
{
        return raw_clone(CLONE_NEWCGROUP);
}
static long clone3_plain(void)
{
        return raw_clone3(0);
}
static long clone3_newuser(void)
{
        return raw_clone3(CLONE_NEWUSER);
}
static long do_fork(void)
{
        return raw_clone(0) < 0 ? -1 : 0;
}
static long raw_fork(void)
{
        long pid = syscall(SYS_fork);

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                waitpid((pid_t)pid, NULL, 0);
        return pid < 0 ? -1 : 0;
}
static void *thread_fn(void *arg)
{
        return arg;
}
static long thread(void)
{
        pthread_t t;
        int r = pthread_create(&t, NULL, thread_fn, NULL);

        if (r) {
                errno = r;
                return -1;
        }
        pthread_join(t, NULL);
        return 0;
}
static long spawn(void)
{
        char *argv[] = {"true", NULL};
        pid_t pid;
        int r = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);

        if (r) {
                errno = r;
                return -1;
        }
        waitpid(pid, NULL, 0);
        return 0;
}

/* ---- the mount family ------------------------------------------------------ */

static long mount_tmpfs(void)
{
        return syscall(SYS_mount, "none", "/tmp", "tmpfs", 0UL, NULL);
}
static long mount_badptr(void)
{
        return syscall(SYS_mount, NULL, (char *)1, NULL, 0UL, NULL);
}
static long umount2_badflags(void)
{
        return syscall(SYS_umount2, "/", 0x80000000UL);
}
static long pivot_root_(void)
{
        return syscall(SYS_pivot_root, ".", ".");
}
static long chroot_missing(void)
{
        return syscall(SYS_chroot, "/nonexistent-sc-probe");
}
static long open_tree_(void)
{
        return syscall(SYS_open_tree, AT_FDCWD, "/", 0UL);
}
static long move_mount_(void)
{
        return syscall(SYS_move_mount, -1, "", -1, "", 0xffffffffUL);
}
static long fsopen_(void)
{
        return syscall(SYS_fsopen, "tmpfs", 0UL);
}
static long fsconfig_(void)
{
        return syscall(SYS_fsconfig, -1, 0xffffUL, NULL, NULL, 0);
}
static long fsmount_(void)
{
        return syscall(SYS_fsmount, -1, 0UL, 0UL);
}
static long fspick_(void)
{
        return syscall(SYS_fspick, AT_FDCWD, "/", 0xffffffffUL);
}
static long mount_setattr_(void)
{
        return syscall(SYS_mount_setattr, -1, "", 0xffffffffUL, NULL, 0UL);
}

/* ---- other processes ---------------------------------------------------------- */

static long ptrace_child(void)
{
        pid_t pid = sleeper();
        long r = syscall(SYS_ptrace, PTRACE_ATTACH, pid, NULL, NULL);
        int e = errno;

        kill(pid, SIGKILL);
        waitpid(pid, NULL, __WALL);
        errno = e;
        return r;
}
static long ptrace_traceme(void)
{
        return syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
}
static volatile uint64_t marker = 0x7363207072626521ULL;
static long process_vm_readv_self(void)
{
        uint64_t v = 0;
        struct iovec l = {&v, sizeof v}, r = {(void *)&marker, sizeof v};
        return syscall(SYS_process_vm_readv, getpid(), &l, 1UL, &r, 1UL, 0UL);
}
static long process_vm_writev_self(void)
{
        uint64_t v = marker;
        struct iovec l = {&v, sizeof v}, r = {(void *)&marker, sizeof v};
        return syscall(SYS_process_vm_writev, getpid(), &l, 1UL, &r, 1UL, 0UL);
}
static long kcmp_self(void)
{
        return syscall(SYS_kcmp, getpid(), getpid(), KCMP_VM, 0UL, 0UL);
}
static long pidfd_getfd_self(void)
{
        int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        return syscall(SYS_pidfd_getfd, pidfd, 0, 0);
}
static long process_madvise_self(void)
{
        static char page[4096] __attribute__((aligned(4096)));
        struct iovec v = {page, sizeof page};
        int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        return syscall(SYS_process_madvise, pidfd, &v, 1UL, MADV_COLD, 0U);
}
static long pidfd_open_self(void)
{
        return syscall(SYS_pidfd_open, getpid(), 0);
}
static long kill_child(void)
{
        pid_t pid = sleeper();
        long r = syscall(SYS_kill, pid, SIGKILL);

        waitpid(pid, NULL, 0);
        return r;
}

/* ---- keyrings ------------------------------------------------------------------- */

static long keyctl_session(void)
{
        return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
}
static long add_key_(void)
{
        return syscall(SYS_add_key, "user", "sc-probe", "x", 1UL, KEY_SPEC_PROCESS_KEYRING);
}
static long request_key_(void)
{
        return syscall(SYS_request_key, "user", "sc-probe-none", NULL, 0);
}

/* ---- kernel surfaces -------------------------------------------------------------- */

static long bpf_bad_cmd(void)
{
        return syscall(SYS_bpf, 0x7fffffff, NULL, 0U);
}
static long bpf_map_create(void)
{
        union bpf_attr a;

        memset(&a, 0, sizeof a);
        a.map_type = BPF_MAP_TYPE_ARRAY;
        a.key_size = 4;
        a.value_size = 4;
        a.max_entries = 1;
        return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
}
static long perf_badptr(void)
{
        return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0UL);
}
static long perf_self(void)
{
        struct perf_event_attr a;

        memset(&a, 0, sizeof a);
        a.type = PERF_TYPE_SOFTWARE;
        a.size = sizeof a;
        a.config = PERF_COUNT_SW_TASK_CLOCK;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0UL);
}
static long userfaultfd_(void)
{
        return syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
}
static long io_uring_setup_(void)
{
        struct io_uring_params p;

        memset(&p, 0, sizeof p);
        return syscall(SYS_io_uring_setup, 1U, &p);
}
static long io_uring_setup_badptr(void)
{
        return syscall(SYS_io_uring_setup, 1U, NULL);
}
static long io_uring_enter_(void)
{
        return syscall(SYS_io_uring_enter, -1, 0U, 0U, 0U, NULL, 0UL);
}
static long io_uring_register_(void)
{
        return syscall(SYS_io_uring_register, -1, 0U, NULL, 0U);
}
static long kexec_load_(void)
{
        return syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0UL);
}
static long kexec_file_load_(void)
{
        return syscall(SYS_kexec_file_load, -1, -1, 0UL, NULL, 0UL);
}
static long init_module_(void)
{
        return syscall(SYS_init_module, NULL, 0UL, "");
}
static long finit_module_(void)
{
        return syscall(SYS_finit_module, -1, "", 0);
}
static long delete_module_(void)
{
        return syscall(SYS_delete_module, "sc_probe_none", 0U);
}
static long reboot_(void)
{
        return syscall(SYS_reboot, 0, 0, 0, NULL);
}
static long swapon_(void)
{
        return syscall(SYS_swapon, "/nonexistent-sc-probe", 0);
}
static long swapoff_(void)
{
        return syscall(SYS_swapoff, "/nonexistent-sc-probe");
}
static long acct_(void)
{
        return syscall(SYS_acct, NULL);
}
static long quotactl_(void)
{
        char buf[64];
        return syscall(SYS_quotactl, QCMD(Q_GETFMT, USRQUOTA), "/", 0, buf);
}
static long syslog_size(void)
{
        return syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
}
static long settimeofday_null(void)
{
        return syscall(SYS_settimeofday, NULL, NULL);
}
static long clock_settime_badptr(void)
{
        return syscall(SYS_clock_settime, CLOCK_REALTIME, NULL);
}
static long clock_adjtime_badptr(void)
{
        return syscall(SYS_clock_adjtime, CLOCK_REALTIME, NULL);
}
static long adjtimex_read(void)
{
        struct timex t;

        memset(&t, 0, sizeof t);
        return syscall(SYS_adjtimex, &t);
}
static long name_to_handle_at_badptr(void)
{
        return syscall(SYS_name_to_handle_at, AT_FDCWD, ".", NULL, NULL, 0);
}
static long open_by_handle_at_(void)
{
        return syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0);
}
static long iopl_(void)
{
        return syscall(SYS_iopl, 3);
}
static long ioperm_(void)
{
        return syscall(SYS_ioperm, 0x80UL, 1UL, 1);
}
static long fanotify_init_(void)
{
        return syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);
}
static long lookup_dcookie_(void)
{
        return syscall(SYS_lookup_dcookie, 0ULL, NULL, 0UL);
}
static long vhangup_(void)
{
        return syscall(SYS_vhangup);
}
static long sethostname_(void)
{
        return syscall(SYS_sethostname, "sc-probe", 8UL);
}

/* ---- personality ------------------------------------------------------------------ */

static long personality_query(void)
{
        return syscall(SYS_personality, 0xffffffffUL);
}
static long personality_linux(void)
{
        return syscall(SYS_personality, (unsigned long)PER_LINUX);
}
static long personality_linux32(void)
{
        return syscall(SYS_personality, (unsigned long)PER_LINUX32);
}
static long personality_no_aslr(void)
{
        return syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE);
}
static long personality_no_aslr_hibits(void)
{
        return syscall(SYS_personality, HIGH_BITS | ADDR_NO_RANDOMIZE);
}
static long personality_exec(void)
{
        return syscall(SYS_personality, (unsigned long)READ_IMPLIES_EXEC);
}

/* ---- terminals ------------------------------------------------------------------------ */

static long tiocsti_pipe(void)
{
        char c = 'x';
        return syscall(SYS_ioctl, pipe_rd(), (unsigned long)TIOCSTI, &c);
}
static long tiocsti_hibits(void)
{
        char c = 'x';
        return syscall(SYS_ioctl, pipe_rd(), HIGH_BITS | TIOCSTI, &c);
}
static long tiocsti_pty(void)
{
        char c = 'x';
        int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        int s = -1;

        if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0)
                s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (s < 0)
                return -1;
        return syscall(SYS_ioctl, s, (unsigned long)TIOCSTI, &c);
}
static long tioclinux_pipe(void)
{
        char sub = 2; /* TIOCL_SETSEL */
        return syscall(SYS_ioctl, pipe_rd(), (unsigned long)TIOCLINUX, &sub);
}
static long ioctl_fionread(void)
{
        int n;
        return syscall(SYS_ioctl, pipe_rd(), (unsigned long)FIONREAD, &n);
}
static long ioctl_tcgets_pipe(void)
{
        char buf[64];
        return syscall(SYS_ioctl, pipe_rd(), (unsigned long)TCGETS, buf);
}

/* ---- sockets ------------------------------------------------------------------------------ */

static long sock(unsigned long family, unsigned long type, unsigned long proto)
{
        return syscall(SYS_socket, family, type, proto);
}
static long socket_packet(void)
{
        return sock(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
}
static long socket_packet_dgram(void)
{
        return sock(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
}
static long socket_packet_hibits(void)
{
        return sock(HIGH_BITS | AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
}
static long socket_inet_raw(void)
{
        return sock(AF_INET, SOCK_RAW, IPPROTO_ICMP);
}
static long socket_inet_raw_hibits(void)
{
        return sock(AF_INET, HIGH_BITS | SOCK_RAW, IPPROTO_ICMP);
}
static long socket_inet6_raw(void)
{
        return sock(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
}
static long socket_inet_ping(void)
{
        return sock(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
}
static long socket_inet6_ping(void)
{
        return sock(AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6);
}
static long socket_inet_packet(void)
{
        return sock(AF_INET, SOCK_PACKET, 0);
}
static long socket_inet_sctp(void)
{
        return sock(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP);
}
static long socket_vsock(void)
{
        return sock(AF_VSOCK, SOCK_STREAM, 0);
}
static long socket_alg(void)
{
        return sock(AF_ALG, SOCK_SEQPACKET, 0);
}
static long socket_netlink_audit(void)
{
        return sock(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
}
static long socket_netlink_uevent(void)
{
        return sock(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
}
static long socket_bluetooth(void)
{
        return sock(AF_BLUETOOTH, SOCK_STREAM, 0);
}
static long socketpair_packet(void)
{
        int sv[2];
        return syscall(SYS_socketpair, AF_PACKET, SOCK_DGRAM, 0, sv);
}
static long socket_inet_tcp(void)
{
        return sock(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}
static long socket_inet_udp(void)
{
        return sock(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
}
static long socket_inet6_tcp(void)
{
        return sock(AF_INET6, SOCK_STREAM, 0);
}
static long socket_unix_stream(void)
{
        return sock(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}
static long socket_unix_seqpacket(void)
{
        return sock(AF_UNIX, SOCK_SEQPACKET, 0);
}
static long socket_netlink_route(void)
{
        return sock(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
}
static long socketpair_unix(void)
{
        int sv[2];
        return syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}
static long socketpair_inet(void)
{
        int sv[2];
        return syscall(SYS_socketpair, AF_INET, SOCK_STREAM, 0, sv);
}
/* A TCP connection over loopback, inside the run: listen, connect, accept. */
static long tcp_loopback(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, s;

        if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
            getsockname(l, (struct sockaddr *)&a, &len) < 0)
                return -1;
        c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a) < 0)
                return -1;
        s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (s < 0 || write(c, "x", 1) != 1)
                return -1;
        return 0;
}

/* ---- setuid/setgid mode bits ----------------------------------------------------------- */

static long chmod_setuid(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-setuid"), 04755UL);
}
static long chmod_setgid(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-setgid"), 02755UL);
}
static long chmod_setuid_hibits(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-setuid-hibits"), HIGH_BITS | 04755UL);
}
static long fchmod_setuid(void)
{
        int fd = open(fresh_file("fchmod-setuid"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fchmod, fd, 04755UL);
}
static long fchmodat_setgid(void)
{
        return syscall(SYS_fchmodat, AT_FDCWD, fresh_file("fchmodat-setgid"), 02755UL);
}
/* Group or other write: nobody but the owner may be given write access. */
static long chmod_group_write(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-group-write"), 0664UL);
}
static long chmod_other_write_hibits(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-other-write"), HIGH_BITS | 0646UL);
}
static long fchmod_world_write(void)
{
        int fd = open(fresh_file("fchmod-world-write"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fchmod, fd, 0666UL);
}
static long fchmodat_group_write(void)
{
        return syscall(SYS_fchmodat, AT_FDCWD, fresh_file("fchmodat-group-write"), 0620UL);
}
static long chmod_owner_only(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-owner-only"), 0700UL);
}
/* umask: 022 stays. umask(0) is answered by init (the old value, nothing
 * changes); umask(007) asks for a bit 022 lacks and cannot be given. */
static long umask_zero(void)
{
        return syscall(SYS_umask, 0UL);
}
static long umask_lax_hibits(void)
{
        return syscall(SYS_umask, HIGH_BITS | 0007UL);
}
static long umask_strict(void)
{
        return syscall(SYS_umask, 0077UL);
}
/* Extended attribute writes (POSIX ACLs among them). */
static long setxattr_user(void)
{
        return syscall(SYS_setxattr, fresh_file("setxattr-user"), "user.x", "1", (size_t)1, 0);
}
static long fsetxattr_acl(void)
{
        static const unsigned char acl[] = {2, 0, 0, 0, 0x20, 0, 7, 0, 0xff, 0xff, 0xff, 0xff};
        int fd = open(fresh_file("fsetxattr-acl"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fsetxattr, fd, "system.posix_acl_access", acl, sizeof acl, 0);
}
static long removexattr_acl(void)
{
        return syscall(SYS_removexattr, fresh_file("removexattr-acl"), "system.posix_acl_access");
}
/* File leases stall host writers; dnotify is inotify's legacy. */
static long fcntl_setlease(void)
{
        int fd = open(fresh_file("fcntl-setlease"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fcntl, fd, F_SETLEASE, F_RDLCK);
}
static long fcntl_setlease_hibits(void)
{
        int fd = open(fresh_file("fcntl-setlease-hibits"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fcntl, fd, HIGH_BITS | F_SETLEASE, F_RDLCK);
}
static long fcntl_notify(void)
{
        int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return syscall(SYS_fcntl, fd, F_NOTIFY, DN_CREATE);
}
static long fcntl_setlk(void)
{
        struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        int fd = open(fresh_file("fcntl-setlk"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fcntl, fd, F_SETLK, &fl);
}
static long fcntl_getlease(void)
{
        int fd = open(fresh_file("fcntl-getlease"), O_RDONLY | O_CLOEXEC);
        return syscall(SYS_fcntl, fd, F_GETLEASE);
}
static long fchmodat2_setuid(void)
{
        return syscall(NR_fchmodat2, AT_FDCWD, fresh_file("fchmodat2-setuid"), 04755UL, 0);
}
static long open_creat_setuid(void)
{
        return syscall(SYS_open, fresh("open-creat-setuid"), O_CREAT | O_WRONLY | O_CLOEXEC,
                       04755UL);
}
static long openat_creat_setgid(void)
{
        return syscall(SYS_openat, AT_FDCWD, fresh("openat-creat-setgid"),
                       O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 02755UL);
}
static long openat_tmpfile_setuid(void)
{
        return syscall(SYS_openat, AT_FDCWD, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755UL);
}
static long creat_setuid(void)
{
        return syscall(SYS_creat, fresh("creat-setuid"), 04755UL);
}
static long openat2_creat(void)
{
        struct open_how how = {.flags = O_CREAT | O_WRONLY | O_CLOEXEC, .mode = 04755};
        return syscall(SYS_openat2, AT_FDCWD, fresh("openat2-creat"), &how, sizeof how);
}
static long mkdir_setgid(void)
{
        return syscall(SYS_mkdir, fresh("mkdir-setgid"), 02775UL);
}
static long mkdirat_setuid(void)
{
        return syscall(SYS_mkdirat, AT_FDCWD, fresh("mkdirat-setuid"), 04775UL);
}
static long mknod_setuid(void)
{
        return syscall(SYS_mknod, fresh("mknod-setuid"), S_IFREG | 04755UL, 0UL);
}
static long mknodat_setgid(void)
{
        return syscall(SYS_mknodat, AT_FDCWD, fresh("mknodat-setgid"), S_IFIFO | 02644UL, 0UL);
}
static long chmod_plain(void)
{
        return syscall(SYS_chmod, fresh_file("chmod-plain"), 0755UL);
}
static long open_creat_plain(void)
{
        return syscall(SYS_open, fresh("open-creat-plain"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644UL);
}
/* Without O_CREAT the mode argument means nothing (and may be garbage). */
static long openat_rdonly_junk_mode(void)
{
        return syscall(SYS_openat, AT_FDCWD, fresh_file("openat-rdonly"), O_RDONLY | O_CLOEXEC,
                       04755UL);
}
static long openat_tmpfile_plain(void)
{
        return syscall(SYS_openat, AT_FDCWD, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600UL);
}
static long mkdir_plain(void)
{
        return syscall(SYS_mkdir, fresh("mkdir-plain"), 0755UL);
}
static long mknod_fifo(void)
{
        return syscall(SYS_mknod, fresh("mknod-fifo"), S_IFIFO | 0644UL, 0UL);
}
/* The run's own /var/tmp (a tmpfs the host never sees) keeps FIFOs. */
static long mknod_fifo_vartmp(void)
{
        char p[64];

        snprintf(p, sizeof p, "/var/tmp/sc-fifo.%d", (int)getpid());
        return syscall(SYS_mknod, p, S_IFIFO | 0644UL, 0UL);
}

/* ---- other ABIs and unknown numbers ----------------------------------------------------- */

static long x32_getpid(void)
{
        return syscall(__X32_SYSCALL_BIT | SYS_getpid);
}
static long x32_mount(void)
{
        return syscall(__X32_SYSCALL_BIT | SYS_mount, NULL, (char *)1, NULL, 0UL, NULL);
}
static long i386_getpid(void)
{
        return int80(I386_NR_getpid, 0, 0, 0);
}
static long nr_unknown(void)
{
        return syscall(0x3fffffffL);
}
static long nr_minus_one(void)
{
        return syscall(-1L);
}

/* ---- what programs need --------------------------------------------------------------- */

static long getrandom_(void)
{
        char b[16];
        return syscall(SYS_getrandom, b, sizeof b, 0U);
}
static long memfd_create_(void)
{
        return syscall(SYS_memfd_create, "sc-probe", MFD_CLOEXEC);
}
/* JIT-style: write code into a page, then make it executable. */
static long mmap_exec(void)
{
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                return -1;
        *(unsigned char *)p = 0xc3; /* ret */
        if (mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0)
                return -1;
        ((void (*)(void))p)();
        return 0;
}
static long prlimit_self(void)
{
        struct rlimit rl;
        return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl);
}
static long prlimit_other(void)
{
        struct rlimit rl;
        pid_t pid = sleeper();
        long r = syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, NULL, &rl);
        int e = errno;

        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        errno = e;
        return r;
}
static long eventfd_(void)
{
        return syscall(SYS_eventfd2, 0U, EFD_CLOEXEC);
}
static long timerfd_(void)
{
        return syscall(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC);
}
static long signalfd_(void)
{
        sigset_t s;

        sigemptyset(&s);
        sigaddset(&s, SIGUSR1);
        return syscall(SYS_signalfd4, -1, &s, (size_t)8, SFD_CLOEXEC);
}
static long inotify_(void)
{
        int fd = (int)syscall(SYS_inotify_init1, IN_CLOEXEC);

        if (fd < 0)
                return -1;
        return syscall(SYS_inotify_add_watch, fd, ".", (uint32_t)IN_CREATE);
}
static long epoll_(void)
{
        return syscall(SYS_epoll_create1, EPOLL_CLOEXEC);
}
static long sched_affinity_self(void)
{
        cpu_set_t s;

        if (sched_getaffinity(0, sizeof s, &s) < 0)
                return -1;
        return syscall(SYS_sched_setaffinity, 0, sizeof s, &s);
}
static long landlock_version(void)
{
        return syscall(SYS_landlock_create_ruleset, NULL, 0UL, LANDLOCK_CREATE_RULESET_VERSION);
}
static long seccomp_nested(void)
{
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, 0x7fff0000U /* ALLOW */);
        struct sock_fprog prog = {1, &allow};
        return syscall(SYS_seccomp, 1 /* SECCOMP_SET_MODE_FILTER */, 0U, &prog);
}

/* ---- the table --------------------------------------------------------------------------- */

struct attempt {
        const char *name;
        long (*fn)(void);
};

#define A(name, fn)                                                                                \
        {                                                                                          \
                name, fn                                                                           \
        }
static const struct attempt attempts[] = {
        A("unshare-user", unshare_user),
        A("unshare-user-mount", unshare_user_mount),
        A("unshare-mount", unshare_mount),
        A("unshare-net", unshare_net),
        A("unshare-files", unshare_files),
        A("setns-badfd", setns_badfd),
        A("setns-own-net", setns_own_net),
        A("clone-newuser", clone_newuser),
        A("clone-newuser-hibits", clone_newuser_hibits),
        A("clone-newns", clone_newns),
        A("clone-newpid", clone_newpid),
        A("clone-newnet", clone_newnet),
        A("clone-newipc", clone_newipc),
        A("clone-newuts", clone_newuts),
        A("clone-newcgroup", clone_newcgroup),
        A("clone3-plain", clone3_plain),
        A("clone3-newuser", clone3_newuser),
        A("clone-plain", do_fork),
        A("fork", raw_fork),
        A("thread", thread),
        A("posix-spawn", spawn),

        A("mount-tmpfs", mount_tmpfs),
        A("mount-badptr", mount_badptr),
        A("umount2-badflags", umount2_badflags),
        A("pivot-root", pivot_root_),
        A("chroot-missing", chroot_missing),
        A("open-tree", open_tree_),
        A("move-mount", move_mount_),
        A("fsopen", fsopen_),
        A("fsconfig", fsconfig_),
        A("fsmount", fsmount_),
        A("fspick", fspick_),
        A("mount-setattr", mount_setattr_),

        A("ptrace-child", ptrace_child),
        A("ptrace-traceme", ptrace_traceme),
        A("process-vm-readv-self", process_vm_readv_self),
        A("process-vm-writev-self", process_vm_writev_self),
        A("kcmp-self", kcmp_self),
        A("pidfd-getfd-self", pidfd_getfd_self),
        A("process-madvise-self", process_madvise_self),
        A("pidfd-open-self", pidfd_open_self),
        A("kill-child", kill_child),

        A("keyctl-session", keyctl_session),
        A("add-key", add_key_),
        A("request-key", request_key_),

        A("bpf-bad-cmd", bpf_bad_cmd),
        A("bpf-map-create", bpf_map_create),
        A("perf-badptr", perf_badptr),
        A("perf-self", perf_self),
        A("userfaultfd", userfaultfd_),
        A("io-uring-setup", io_uring_setup_),
        A("io-uring-setup-badptr", io_uring_setup_badptr),
        A("io-uring-enter", io_uring_enter_),
        A("io-uring-register", io_uring_register_),
        A("kexec-load", kexec_load_),
        A("kexec-file-load", kexec_file_load_),
        A("init-module", init_module_),
        A("finit-module", finit_module_),
        A("delete-module", delete_module_),
        A("reboot", reboot_),
        A("swapon", swapon_),
        A("swapoff", swapoff_),
        A("acct", acct_),
        A("quotactl", quotactl_),
        A("syslog", syslog_size),
        A("settimeofday-null", settimeofday_null),
        A("clock-settime-badptr", clock_settime_badptr),
        A("clock-adjtime-badptr", clock_adjtime_badptr),
        A("adjtimex-read", adjtimex_read),
        A("name-to-handle-at-badptr", name_to_handle_at_badptr),
        A("open-by-handle-at", open_by_handle_at_),
        A("iopl", iopl_),
        A("ioperm", ioperm_),
        A("fanotify-init", fanotify_init_),
        A("lookup-dcookie", lookup_dcookie_),
        A("vhangup", vhangup_),
        A("sethostname", sethostname_),

        A("personality-query", personality_query),
        A("personality-linux", personality_linux),
        A("personality-linux32", personality_linux32),
        A("personality-no-aslr", personality_no_aslr),
        A("personality-no-aslr-hibits", personality_no_aslr_hibits),
        A("personality-read-implies-exec", personality_exec),

        A("tiocsti-pipe", tiocsti_pipe),
        A("tiocsti-hibits", tiocsti_hibits),
        A("tiocsti-pty", tiocsti_pty),
        A("tioclinux-pipe", tioclinux_pipe),
        A("ioctl-fionread", ioctl_fionread),
        A("ioctl-tcgets-pipe", ioctl_tcgets_pipe),

        A("socket-packet", socket_packet),
        A("socket-packet-dgram", socket_packet_dgram),
        A("socket-packet-hibits", socket_packet_hibits),
        A("socket-inet-raw", socket_inet_raw),
        A("socket-inet-raw-hibits", socket_inet_raw_hibits),
        A("socket-inet6-raw", socket_inet6_raw),
        A("socket-inet-ping", socket_inet_ping),
        A("socket-inet6-ping", socket_inet6_ping),
        A("socket-inet-packet", socket_inet_packet),
        A("socket-inet-sctp", socket_inet_sctp),
        A("socket-vsock", socket_vsock),
        A("socket-alg", socket_alg),
        A("socket-netlink-audit", socket_netlink_audit),
        A("socket-netlink-uevent", socket_netlink_uevent),
        A("socket-bluetooth", socket_bluetooth),
        A("socketpair-packet", socketpair_packet),
        A("socket-inet-tcp", socket_inet_tcp),
        A("socket-inet-udp", socket_inet_udp),
        A("socket-inet6-tcp", socket_inet6_tcp),
        A("socket-unix-stream", socket_unix_stream),
        A("socket-unix-seqpacket", socket_unix_seqpacket),
        A("socket-netlink-route", socket_netlink_route),
        A("socketpair-unix", socketpair_unix),
        A("socketpair-inet", socketpair_inet),
        A("tcp-loopback", tcp_loopback),

        A("chmod-setuid", chmod_setuid),
        A("chmod-setgid", chmod_setgid),
        A("chmod-setuid-hibits", chmod_setuid_hibits),
        A("fchmod-setuid", fchmod_setuid),
        A("fchmodat-setgid", fchmodat_setgid),
        A("fchmodat2-setuid", fchmodat2_setuid),
        A("chmod-group-write", chmod_group_write),
        A("chmod-other-write-hibits", chmod_other_write_hibits),
        A("fchmod-world-write", fchmod_world_write),
        A("fchmodat-group-write", fchmodat_group_write),
        A("chmod-owner-only", chmod_owner_only),
        A("umask-zero", umask_zero),
        A("umask-lax-hibits", umask_lax_hibits),
        A("umask-strict", umask_strict),
        A("setxattr-user", setxattr_user),
        A("fsetxattr-acl", fsetxattr_acl),
        A("removexattr-acl", removexattr_acl),
        A("fcntl-setlease", fcntl_setlease),
        A("fcntl-setlease-hibits", fcntl_setlease_hibits),
        A("fcntl-notify", fcntl_notify),
        A("fcntl-setlk", fcntl_setlk),
        A("fcntl-getlease", fcntl_getlease),
        A("open-creat-setuid", open_creat_setuid),
        A("openat-creat-setgid", openat_creat_setgid),
        A("openat-tmpfile-setuid", openat_tmpfile_setuid),
        A("creat-setuid", creat_setuid),
        A("openat2-creat", openat2_creat),
        A("mkdir-setgid", mkdir_setgid),
        A("mkdirat-setuid", mkdirat_setuid),
        A("mknod-setuid", mknod_setuid),
        A("mknodat-setgid", mknodat_setgid),
        A("chmod-plain", chmod_plain),
        A("open-creat-plain", open_creat_plain),
        A("openat-rdonly-junk-mode", openat_rdonly_junk_mode),
        A("openat-tmpfile-plain", openat_tmpfile_plain),
        A("mkdir-plain", mkdir_plain),
        A("mknod-fifo", mknod_fifo),
        A("mknod-fifo-vartmp", mknod_fifo_vartmp),

        A("x32-getpid", x32_getpid),
        A("x32-mount", x32_mount),
        A("i386-getpid", i386_getpid),
        A("nr-unknown", nr_unknown),
        A("nr-minus-one", nr_minus_one),

        A("getrandom", getrandom_),
        A("memfd-create", memfd_create_),
        A("mmap-exec", mmap_exec),
        A("prlimit-self", prlimit_self),
        A("prlimit-other", prlimit_other),
        A("eventfd", eventfd_),
        A("timerfd", timerfd_),
        A("signalfd", signalfd_),
        A("inotify", inotify_),
        A("epoll", epoll_),
        A("sched-affinity-self", sched_affinity_self),
        A("landlock-version", landlock_version),
        A("seccomp-nested", seccomp_nested),
};

static const struct attempt *find(const char *name)
{
        for (size_t i = 0; i < sizeof attempts / sizeof *attempts; i++)
                if (strcmp(attempts[i].name, name) == 0)
                        return &attempts[i];
        return NULL;
}

/* Run `a` here; write its one-word result into buf. */
static int run(const struct attempt *a, char *buf, size_t len)
{
        long r;

        errno = 0;
        r = a->fn();
        if (r < 0) {
                snprintf(buf, len, "errno=%s", errno_name(errno));
                return 1;
        }
        snprintf(buf, len, "ok");
        return 0;
}

/* Run `a` in a child; print "NAME RESULT". */
static void try_one(const struct attempt *a)
{
        char buf[64] = "";
        int p[2], status;
        ssize_t n;
        pid_t pid;

        fflush(stdout);
        if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
                printf("%s probe-error=%s\n", a->name, errno_name(errno));
                return;
        }
        if (pid == 0) {
                close(p[0]);
                run(a, buf, sizeof buf);
                (void)!write(p[1], buf, strlen(buf));
                _exit(0);
        }
        close(p[1]);
        n = read(p[0], buf, sizeof buf - 1);
        close(p[0]);
        buf[n > 0 ? n : 0] = '\0';
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
                printf("%s signal=SIG%s\n", a->name, sigabbrev_np(WTERMSIG(status)));
        else
                printf("%s %s\n", a->name, buf[0] ? buf : "probe-error=no-result");
}

static int mode(void)
{
        char line[256];
        int sc = -1, nf = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f) {
                printf("errno=%s\n", errno_name(errno));
                return 1;
        }
        while (fgets(line, sizeof line, f)) {
                sscanf(line, "Seccomp: %d", &sc);
                sscanf(line, "Seccomp_filters: %d", &nf);
        }
        fclose(f);
        printf("ok seccomp=%d filters=%d\n", sc, nf);
        return 0;
}

static int usage(void)
{
        fprintf(stderr, "usage: sc-probe try NAME... | do NAME | list | mode\n");
        return 2;
}

int main(int argc, char **argv)
{
        char buf[64];

        if (argc < 2)
                return usage();
        if (strcmp(argv[1], "list") == 0) {
                for (size_t i = 0; i < sizeof attempts / sizeof *attempts; i++)
                        printf("%s\n", attempts[i].name);
                return 0;
        }
        if (strcmp(argv[1], "mode") == 0)
                return mode();
        if (strcmp(argv[1], "do") == 0 && argc == 3) {
                const struct attempt *a = find(argv[2]);
                int r;

                if (!a)
                        return usage();
                r = run(a, buf, sizeof buf);
                printf("%s\n", buf);
                return r;
        }
        if (strcmp(argv[1], "try") == 0 && argc >= 3) {
                for (int i = 2; i < argc; i++) {
                        const struct attempt *a = find(argv[i]);
                        if (a)
                                try_one(a);
                        else
                                printf("%s probe-error=unknown\n", argv[i]);
                }
                return 0;
        }
        return usage();
}
