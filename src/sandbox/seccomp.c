/*
 * seccomp.c — the run's system-call filter: an allowlist, built once in the
 * supervisor with libseccomp, installed by the command child just before exec.
 *
 * Design
 *  - Default action ERRNO(ENOSYS). A syscall that is not on the list looks
 *    like one the kernel does not have: libc and runtimes fall back (glibc's
 *    clone3 -> clone, openat2 users -> openat), and syscalls newer than this
 *    table, libseccomp or the headers are refused without anyone listing them.
 *  - Named refusals ERRNO(EPERM): the syscalls that create namespaces, mount,
 *    reach other processes' memory, or open kernel surfaces an agent never
 *    needs (keys, bpf, perf, userfaultfd, io_uring, modules, kexec, clocks).
 *    EPERM rather than the default so that a test, a log and a person can
 *    tell "refused by the filter" from "not implemented".
 *  - Argument rules where a syscall is needed but one use of it is not:
 *    clone without CLONE_NEW* flags, personality queries only, ioctl except
 *    TIOCSTI/TIOCLINUX, socket families and types, prlimit64 on self, and no
 *    setuid/setgid mode bits in the chmod, open/creat, mkdir and mknod
 *    families (a root-owned workspace presented through an idmapped mount
 *    would otherwise let the run plant a setuid-root file on the host).
 *  - The workspace stays its owner's: a run must not give anyone else
 *    write access to anything in it (a world-writable .git/hooks is the
 *    owner's next `git` running a stranger's hook). Modes that chmod sets
 *    as given are checked: no S_IWGRP/S_IWOTH (EPERM). Modes of creating
 *    calls (open/openat/creat with O_CREAT or O_TMPFILE, mkdir, mknod)
 *    cannot be: programs pass 0666/0777 and rely on the umask, which the
 *    kernel applies after the filter. So the umask keeps 022: init sets it
 *    before exec (launch.c), and umask() calls that keep both bits go
 *    through; one that would clear either (umask(0), umask(002), also the
 *    `m = umask(0); umask(m)` idiom programs use to read it) is sent to
 *    the run's init (SECCOMP_RET_USER_NOTIF), which answers it without
 *    changing anything: it returns the current umask when the call asked
 *    for no bit the umask lacks, EPERM otherwise (umask(007) under 022
 *    cannot be given). A plain EPERM for every such call would not do:
 *    glibc's umask() returns the raw -1, which the read idiom then sets
 *    as a umask of 0777 (node, pip and coreutils read it that way).
 *    openat2 (mode in a struct) stays ENOSYS; xattr writes (POSIX ACLs)
 *    get EOPNOTSUPP (see the table); FIFOs and sockets in the workspace are Landlock's
 *    (landlock.c).
 *  - Only the native ABI (x86_64). Any other audit arch (i386 via int 0x80)
 *    hits SCMP_FLTATR_ACT_BADARCH = KILL_PROCESS; libseccomp's x86_64 filter
 *    also sends every number with the x32 bit (0x40000000) there. The run
 *    dies with SIGSYS (exit 159); tests/integration/harden_seccomp.sh pins both
 *    wherever the host itself can make such a call (its control outside).
 *
 * How argument rules are written. Arguments the kernel reads as `int` or
 * `unsigned int` (fd, cmd, family, mode, flags) are compared on their low 32
 * bits only: a caller can set the high bits freely, and the kernel drops
 * them (ioctl(fd, (1UL << 32) | TIOCSTI) is TIOCSTI). A rule of the form
 * "this, else that" ends with OTHERWISE(n), a `>= 0` on the same argument:
 * libseccomp orders the comparisons on one argument equality-first, so the
 * specific rules are tested before the catch-all whatever the table order.
 * (An always-true masked compare would not do: libseccomp folds it into an
 * unconditional rule, which replaces the specific ones.) Where two rules
 * look at different arguments (open's flags and mode) they are written to
 * be disjoint instead, so no ordering matters.
 *
 * The rule set is stated as tables, grouped, each group with why; the
 * builder only walks them. A syscall may appear in one table only (checked
 * when the filter is built: an unconditional rule would silently replace
 * conditional ones for the same syscall).
 *
 * Threat notes. The filter is the last layer, not the only one: the run
 * already has no capabilities, no_new_privs, its own namespaces, Landlock.
 * Many refusals here (mount, kexec, modules) duplicate a capability check;
 * the ones that do not (user namespaces, clone3, keyctl, io_uring, bpf,
 * perf, userfaultfd, TIOCSTI, AF_ALG/vsock/netlink families, setuid bits,
 * other ABIs) are the reason it exists. Not covered here: what the allowed
 * syscalls do to allowed objects (that is the filesystem and network
 * layers' job).
 *
 * Cost (libseccomp 2.5.4, measured on x86_64): building takes ~2.3-2.9 ms
 * (libseccomp's rule database and code generator are quadratic in the
 * number of rules; ~330 syscalls are decided here). So the program is
 * generated once, at build time: seccomp-gen.c runs seccomp_build() and
 * emits seccomp-bpf.h, and a run pays only for a copy and the install.
 * Since building is free per run, the binary-tree layout
 * (SCMP_FLTATR_CTL_OPTIMIZE=2) is used: the kernel prepares it in ~0.15 ms
 * at install, against ~0.4 ms for the priority-ordered list.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#ifdef RF_SECCOMP_GENERATOR
#include <seccomp.h> /* only the build-time generator links libseccomp */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp.h"
#ifdef RF_SECCOMP_GENERATOR
#include "seccomp-export.h"
#endif
#include "shared/macro.h"

#ifdef RF_SECCOMP_GENERATOR
/* ---- the rule tables ------------------------------------------------------ */

enum sc_verdict {
        SC_ALLOW,
        SC_EPERM,
        SC_NOTIFY,     /* answered by the run's init (seccomp_umask_answer) */
        SC_EOPNOTSUPP, /* as a filesystem without the feature would answer */
        _SC_VERDICT_MAX,
        _SC_VERDICT_INVALID = -EINVAL,
};

#define SC_ARGS_MAX 3

/* One argument rule: the syscall, what happens, when (all comparisons hold;
 * unused slots have op 0). */
struct sc_rule {
        int nr; /* SCMP_SYS(); negative: not a syscall of this arch */
        enum sc_verdict verdict;
        struct scmp_arg_cmp cmp[SC_ARGS_MAX];
};

#define LO32 UINT64_C(0xffffffff)

/* The comparisons, as initializers of struct scmp_arg_cmp {arg, op, a, b}. */
// clang-format off
/* Argument n (an int for the kernel: low 32 bits) is v. */
#define IS(n, v)              {(n), SCMP_CMP_MASKED_EQ, LO32, (uint32_t)(v)}
/* Argument n, masked, is v (the mask says which bits the kernel looks at). */
#define MASKED_IS(n, mask, v) {(n), SCMP_CMP_MASKED_EQ, (mask), (v)}
/* Every bit of `bits` is set in argument n / none is. */
#define HAS(n, bits)          {(n), SCMP_CMP_MASKED_EQ, (bits), (bits)}
#define LACKS(n, bits)        {(n), SCMP_CMP_MASKED_EQ, (bits), 0}
/* Any value of argument n not matched by a rule above (see the header). */
#define OTHERWISE(n)          {(n), SCMP_CMP_GE, 0, 0}

#define RULE(sc, verdict, ...) {SCMP_SYS(sc), (verdict), {__VA_ARGS__}}
// clang-format on

/*
 * Allowed whatever the arguments: what shells, coreutils, python3, git,
 * gcc/cc1/as/ld, make, tar, find, ps, node and their libcs use.
 */
static const int sc_allow[] = {
        /* I/O on descriptors the process already has. */
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
        SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev), SCMP_SYS(preadv2),
        SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(close_range), SCMP_SYS(dup),
        SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(flock), SCMP_SYS(fsync), SCMP_SYS(fdatasync),
        SCMP_SYS(sync), SCMP_SYS(syncfs), SCMP_SYS(sync_file_range), SCMP_SYS(fallocate),
        SCMP_SYS(ftruncate), SCMP_SYS(sendfile), SCMP_SYS(splice), SCMP_SYS(tee),
        SCMP_SYS(vmsplice), SCMP_SYS(copy_file_range), SCMP_SYS(readahead), SCMP_SYS(fadvise64),

        /* Paths: lookup, metadata, links, renames. Which paths exist and are
         * writable is the filesystem layers' business, not this one's. */
        SCMP_SYS(stat), SCMP_SYS(fstat), SCMP_SYS(lstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
        SCMP_SYS(statfs), SCMP_SYS(fstatfs), SCMP_SYS(access), SCMP_SYS(faccessat),
        SCMP_SYS(faccessat2), SCMP_SYS(getcwd), SCMP_SYS(chdir), SCMP_SYS(fchdir), SCMP_SYS(rename),
        SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(rmdir), SCMP_SYS(link), SCMP_SYS(linkat),
        SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat),
        SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getdents), SCMP_SYS(getdents64),
        SCMP_SYS(truncate), SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat),
        SCMP_SYS(utime), SCMP_SYS(utimes), SCMP_SYS(futimesat), SCMP_SYS(utimensat),
        SCMP_SYS(getxattr), SCMP_SYS(lgetxattr), SCMP_SYS(fgetxattr), SCMP_SYS(listxattr),
        SCMP_SYS(llistxattr), SCMP_SYS(flistxattr), SCMP_SYS(inotify_init), SCMP_SYS(inotify_init1),
        SCMP_SYS(inotify_add_watch), SCMP_SYS(inotify_rm_watch),

        /* Memory, including PROT_EXEC (JITs, the dynamic loader) and
         * memfd_create (used by runtimes and linkers). */
        SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect),
        SCMP_SYS(madvise), SCMP_SYS(msync), SCMP_SYS(mincore), SCMP_SYS(mlock), SCMP_SYS(mlock2),
        SCMP_SYS(munlock), SCMP_SYS(mlockall), SCMP_SYS(munlockall), SCMP_SYS(membarrier),
        SCMP_SYS(memfd_create), SCMP_SYS(pkey_mprotect), SCMP_SYS(pkey_alloc), SCMP_SYS(pkey_free),
        SCMP_SYS(mbind), SCMP_SYS(get_mempolicy), SCMP_SYS(set_mempolicy),

        /* System V and POSIX IPC: the run has an IPC namespace of its own. */
        SCMP_SYS(shmget), SCMP_SYS(shmat), SCMP_SYS(shmdt), SCMP_SYS(shmctl), SCMP_SYS(semget),
        SCMP_SYS(semop), SCMP_SYS(semtimedop), SCMP_SYS(semctl), SCMP_SYS(msgget), SCMP_SYS(msgsnd),
        SCMP_SYS(msgrcv), SCMP_SYS(msgctl), SCMP_SYS(mq_open), SCMP_SYS(mq_unlink),
        SCMP_SYS(mq_timedsend), SCMP_SYS(mq_timedreceive), SCMP_SYS(mq_notify),
        SCMP_SYS(mq_getsetattr),

        /* Processes and threads (clone is an argument rule below). Signals
         * reach only the run's own pid namespace. */
        SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(exit),
        SCMP_SYS(exit_group), SCMP_SYS(wait4), SCMP_SYS(waitid), SCMP_SYS(getpid),
        SCMP_SYS(getppid), SCMP_SYS(gettid), SCMP_SYS(getpgid), SCMP_SYS(setpgid),
        SCMP_SYS(getpgrp), SCMP_SYS(getsid), SCMP_SYS(setsid), SCMP_SYS(kill), SCMP_SYS(tkill),
        SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo),
        SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(set_tid_address),
        SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(arch_prctl), SCMP_SYS(prctl),
        SCMP_SYS(futex), SCMP_SYS(futex_waitv), SCMP_SYS(getrlimit), SCMP_SYS(setrlimit),
        SCMP_SYS(getrusage), SCMP_SYS(times), SCMP_SYS(getpriority), SCMP_SYS(setpriority),
        SCMP_SYS(ioprio_get), SCMP_SYS(ioprio_set), SCMP_SYS(sched_yield), SCMP_SYS(sched_getparam),
        SCMP_SYS(sched_setparam), SCMP_SYS(sched_getscheduler), SCMP_SYS(sched_setscheduler),
        SCMP_SYS(sched_get_priority_max), SCMP_SYS(sched_get_priority_min),
        SCMP_SYS(sched_rr_get_interval), SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_setaffinity),
        SCMP_SYS(sched_getattr), SCMP_SYS(sched_setattr), SCMP_SYS(getcpu),

        /* Credentials: the run holds no capabilities, so these can only
         * report or drop. seccomp and Landlock can only restrict further
         * (an agent sandboxing its own tools keeps working). */
        SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
        SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(getgroups), SCMP_SYS(setuid),
        SCMP_SYS(setgid), SCMP_SYS(setreuid), SCMP_SYS(setregid), SCMP_SYS(setresuid),
        SCMP_SYS(setresgid), SCMP_SYS(setfsuid), SCMP_SYS(setfsgid), SCMP_SYS(setgroups),
        SCMP_SYS(capget), SCMP_SYS(capset), SCMP_SYS(seccomp), SCMP_SYS(landlock_create_ruleset),
        SCMP_SYS(landlock_add_rule), SCMP_SYS(landlock_restrict_self),

        /* Signals. */
        SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
        SCMP_SYS(rt_sigpending), SCMP_SYS(rt_sigtimedwait), SCMP_SYS(rt_sigsuspend),
        SCMP_SYS(sigaltstack), SCMP_SYS(pause), SCMP_SYS(alarm), SCMP_SYS(getitimer),
        SCMP_SYS(setitimer), SCMP_SYS(signalfd), SCMP_SYS(signalfd4), SCMP_SYS(restart_syscall),

        /* Time: reading clocks, sleeping, timers (setting clocks is refused). */
        SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(timer_create),
        SCMP_SYS(timer_settime), SCMP_SYS(timer_gettime), SCMP_SYS(timer_getoverrun),
        SCMP_SYS(timer_delete), SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime),
        SCMP_SYS(timerfd_gettime),

        /* Waiting for events; pipes; asynchronous I/O (the legacy AIO, not
         * io_uring). */
        SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6),
        SCMP_SYS(epoll_create), SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait),
        SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2), SCMP_SYS(eventfd), SCMP_SYS(eventfd2),
        SCMP_SYS(pipe), SCMP_SYS(pipe2), SCMP_SYS(io_setup), SCMP_SYS(io_destroy),
        SCMP_SYS(io_submit), SCMP_SYS(io_cancel), SCMP_SYS(io_getevents), SCMP_SYS(io_pgetevents),

        /* Sockets once created (creation is an argument rule below). Where
         * they lead is the network layer's business. */
        SCMP_SYS(connect), SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(getsockname), SCMP_SYS(getpeername), SCMP_SYS(sendto), SCMP_SYS(recvfrom),
        SCMP_SYS(sendmsg), SCMP_SYS(recvmsg), SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg),
        SCMP_SYS(shutdown), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt),

        /* The rest of what programs ask about their system. */
        SCMP_SYS(uname), SCMP_SYS(sysinfo), SCMP_SYS(getrandom)};

/* Refused with EPERM whatever the arguments. */
static const int sc_refuse[] = {
        /* New namespaces are how a process regains capabilities (a user
         * namespace) and the entry to most kernel bugs reachable without
         * privilege; joining one is an escape route. unshare is refused
         * whole: its other uses (CLONE_FILES/FS/SYSVSEM) are rare, and a
         * future namespace flag is then refused too. */
        SCMP_SYS(unshare), SCMP_SYS(setns),

        /* The mount family, old and new API: the run's tree is fixed. */
        SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot),
        SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fsopen), SCMP_SYS(fsconfig),
        SCMP_SYS(fsmount), SCMP_SYS(fspick), SCMP_SYS(mount_setattr),

        /* Other processes' memory and descriptors. */
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
        SCMP_SYS(process_madvise), SCMP_SYS(kcmp), SCMP_SYS(pidfd_getfd),

        /* Kernel keyrings: not namespaced; secrets of the host's user. */
        SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),

        /* Kernel surfaces with a history of privilege escalations that no
         * agent workload needs. */
        SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(io_uring_setup),
        SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(fanotify_init),
        SCMP_SYS(lookup_dcookie), SCMP_SYS(name_to_handle_at), SCMP_SYS(open_by_handle_at),

        /* Administering the host: modules, kexec, power, swap, accounting,
         * quotas, the kernel log, the clocks, I/O ports, terminals. */
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
        SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(reboot), SCMP_SYS(swapon),
        SCMP_SYS(swapoff), SCMP_SYS(acct), SCMP_SYS(quotactl), SCMP_SYS(quotactl_fd),
        SCMP_SYS(syslog), SCMP_SYS(settimeofday), SCMP_SYS(clock_settime), SCMP_SYS(clock_adjtime),
        SCMP_SYS(adjtimex), SCMP_SYS(iopl), SCMP_SYS(ioperm), SCMP_SYS(vhangup),
        SCMP_SYS(sethostname), SCMP_SYS(setdomainname)};

/*
 * Left to the default ENOSYS on purpose (listed so the decision is stated;
 * the builder adds nothing for them):
 *  - clone3: its flags live in a struct the filter cannot read; ENOSYS makes
 *    glibc fall back to clone, whose flags the rule below checks.
 *  - openat2: its mode lives in a struct too; callers fall back to openat.
 *  - fchmodat2 (6.6), setxattrat/removexattrat (6.13), file_setattr (6.17):
 *    newer than libseccomp 2.5.4's table, so not even nameable here; ENOSYS
 *    makes glibc fall back to fchmodat / setxattr, which the rules check.
 */
static const int sc_default[] = {SCMP_SYS(clone3), SCMP_SYS(openat2)};

/* clone(2) flags that create namespaces. (CLONE_NEWTIME does not exist for
 * clone(2): 0x80 is part of the exit signal there.) */
#define CLONE_NS_FLAGS                                                                             \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET)

/* The socket type without SOCK_NONBLOCK / SOCK_CLOEXEC (unknown bits stay,
 * and then match no allowed type). */
#define SOCK_TYPE_BITS (LO32 & ~(uint64_t)(SOCK_NONBLOCK | SOCK_CLOEXEC))

/* The kernel's __O_TMPFILE bit (glibc's __O_TMPFILE includes O_DIRECTORY);
 * with it or O_CREAT, open/openat use the mode argument. */
#define RF_O_TMPFILE_BIT 020000000
#define O_CREATING       (O_CREAT | RF_O_TMPFILE_BIT)
#define SETID_BITS       (S_ISUID | S_ISGID)
/* Write access for the group or for others: never given by a run (see
 * "The workspace stays its owner's" in the header). */
#define SHARE_W_BITS (S_IWGRP | S_IWOTH)

/* A mode argument at position n without setuid/setgid bits: allowed;
 * with either: EPERM. */
#define NO_SETID_MODE(sc, n)                                                                       \
        RULE(sc, SC_ALLOW, LACKS(n, SETID_BITS)), RULE(sc, SC_EPERM, HAS(n, S_ISUID)),             \
                RULE(sc, SC_EPERM, HAS(n, S_ISGID))

/* A mode that chmod sets as given (no umask applies): neither setuid/setgid
 * nor group/other write; EPERM for any of the four bits. */
#define OWNER_ONLY_MODE(sc, n)                                                                     \
        RULE(sc, SC_ALLOW, LACKS(n, SETID_BITS | SHARE_W_BITS)),                                   \
                RULE(sc, SC_EPERM, HAS(n, S_ISUID)), RULE(sc, SC_EPERM, HAS(n, S_ISGID)),          \
                RULE(sc, SC_EPERM, HAS(n, S_IWGRP)), RULE(sc, SC_EPERM, HAS(n, S_IWOTH))

/* open-like: flags at position f, mode at m. The mode counts only when the
 * call creates (O_CREAT or O_TMPFILE); the four rules are disjoint. */
#define NO_SETID_CREATE(sc, f, m)                                                                  \
        RULE(sc, SC_ALLOW, LACKS(f, O_CREATING)), RULE(sc, SC_ALLOW, LACKS(m, SETID_BITS)),        \
                RULE(sc, SC_EPERM, HAS(f, O_CREAT), HAS(m, S_ISUID)),                              \
                RULE(sc, SC_EPERM, HAS(f, O_CREAT), HAS(m, S_ISGID)),                              \
                RULE(sc, SC_EPERM, HAS(f, RF_O_TMPFILE_BIT), HAS(m, S_ISUID)),                     \
                RULE(sc, SC_EPERM, HAS(f, RF_O_TMPFILE_BIT), HAS(m, S_ISGID))

/* Socket families the run needs: Unix sockets; TCP and UDP over IPv4/IPv6
 * (no raw or packet types, no SCTP); rtnetlink, which glibc's getaddrinfo
 * uses to learn the interfaces. Everything else (packet, vsock, AF_ALG,
 * other netlink protocols, bluetooth, ...) is refused. socketpair gets the
 * same list: the kernel only implements it for Unix sockets anyway. */
/* TCP and UDP only, named or as protocol 0: not MPTCP, UDP-Lite, SCTP,
 * L2TP/IP (MPTCP and UDP-Lite are built in here; the others would autoload
 * modules on distribution kernels). */
#define INET_RULES(sc, fam)                                                                        \
        RULE(sc, SC_ALLOW, IS(0, fam), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_STREAM), IS(2, 0)),       \
                RULE(sc, SC_ALLOW, IS(0, fam), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_STREAM),          \
                     IS(2, IPPROTO_TCP)),                                                          \
                RULE(sc, SC_ALLOW, IS(0, fam), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_DGRAM),           \
                     IS(2, 0)),                                                                    \
                RULE(sc, SC_ALLOW, IS(0, fam), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_DGRAM),           \
                     IS(2, IPPROTO_UDP))

#define SOCKET_RULES(sc)                                                                           \
        RULE(sc, SC_ALLOW, IS(0, AF_UNIX), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_STREAM)),             \
                RULE(sc, SC_ALLOW, IS(0, AF_UNIX), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_DGRAM)),      \
                RULE(sc, SC_ALLOW, IS(0, AF_UNIX), MASKED_IS(1, SOCK_TYPE_BITS, SOCK_SEQPACKET)),  \
                INET_RULES(sc, AF_INET), INET_RULES(sc, AF_INET6),                                 \
                RULE(sc, SC_ALLOW, IS(0, AF_NETLINK), IS(2, NETLINK_ROUTE)),                       \
                RULE(sc, SC_EPERM, OTHERWISE(0))

/* Syscalls that are needed, with one use of them refused. */
static const struct sc_rule sc_rules[] = {
        /* Processes and threads yes, namespaces no (see sc_refuse). */
        RULE(clone, SC_ALLOW, LACKS(0, CLONE_NS_FLAGS)),
        RULE(clone, SC_EPERM, OTHERWISE(0)),

        /* Execution domains: the query (0xffffffff) and PER_LINUX only.
         * Others turn off ASLR (ADDR_NO_RANDOMIZE), make data executable
         * (READ_IMPLIES_EXEC) or pretend another kernel. */
        RULE(personality, SC_ALLOW, IS(0, 0xffffffff)),
        RULE(personality, SC_ALLOW, IS(0, PER_LINUX)),
        RULE(personality, SC_EPERM, OTHERWISE(0)),

        /* Terminal injection: TIOCSTI pushes input into a terminal, and
         * TIOCLINUX can (paste selection) on a virtual console. */
        RULE(ioctl, SC_EPERM, IS(1, TIOCSTI)),
        RULE(ioctl, SC_EPERM, IS(1, TIOCLINUX)),
        RULE(ioctl, SC_ALLOW, OTHERWISE(1)),

        /* Resource limits of the process itself (pid 0), as libc uses it. */
        RULE(prlimit64, SC_ALLOW, IS(0, 0)),
        RULE(prlimit64, SC_EPERM, OTHERWISE(0)),

        SOCKET_RULES(socket),
        SOCKET_RULES(socketpair),

        /* File leases: F_SETLEASE lets the run hold a host writer's open()
         * of a workspace file for lease-break-time (5-45 s) each time.
         * F_NOTIFY (dnotify) stalls nobody but is the legacy of inotify,
         * which stays: nothing an agent runs uses it. Locks (F_SETLK,
         * F_OFD_SETLK, flock) stay: they are advisory. */
        RULE(fcntl, SC_EPERM, IS(1, F_SETLEASE)),
        RULE(fcntl, SC_EPERM, IS(1, F_NOTIFY)),
        RULE(fcntl, SC_ALLOW, OTHERWISE(1)),

        /* The workspace stays its owner's (see the header): the umask keeps
         * 022 (a call that would clear either bit is answered by init,
         * which leaves the umask as it is), and chmod neither sets
         * setuid/setgid nor gives group/other write. */
        RULE(umask, SC_ALLOW, HAS(0, SHARE_W_BITS)),
        RULE(umask, SC_NOTIFY, LACKS(0, S_IWGRP)),
        RULE(umask, SC_NOTIFY, LACKS(0, S_IWOTH)),
        OWNER_ONLY_MODE(chmod, 1),
        OWNER_ONLY_MODE(fchmod, 1),
        OWNER_ONLY_MODE(fchmodat, 2),

        /* Writing extended attributes, whatever the arguments. The filter
         * cannot read the name, and "system.posix_acl_access"/"_default"
         * would give other users access no mode bit shows (removing an ACL
         * can widen the owning group's to the old mask). EOPNOTSUPP, not
         * EPERM: it is what a filesystem without xattrs answers, and what
         * cp -a/-p, tar --xattrs, rsync -X and shutil.copystat take as
         * "nothing to copy" (gnulib's ACL copy then falls back to chmod;
         * with EPERM `cp -a` fails). Reading xattrs stays allowed. */
        RULE(setxattr, SC_EOPNOTSUPP),
        RULE(lsetxattr, SC_EOPNOTSUPP),
        RULE(fsetxattr, SC_EOPNOTSUPP),
        RULE(removexattr, SC_EOPNOTSUPP),
        RULE(lremovexattr, SC_EOPNOTSUPP),
        RULE(fremovexattr, SC_EOPNOTSUPP),

        /* No setuid/setgid file or directory can be made (see the header);
         * their group/other write bits are the umask's to clear (programs
         * pass 0666/0777 and rely on it). */
        NO_SETID_MODE(creat, 1),
        NO_SETID_MODE(mkdir, 1),
        NO_SETID_MODE(mkdirat, 2),
        NO_SETID_MODE(mknod, 1),
        NO_SETID_MODE(mknodat, 2),
        NO_SETID_CREATE(open, 1, 2),
        NO_SETID_CREATE(openat, 2, 3),
};

/* Argument-checked syscalls that programs make often (every file open,
 * every isatty): placed first in the program. */
static const int sc_hot[] = {SCMP_SYS(openat), SCMP_SYS(ioctl), SCMP_SYS(fcntl)};

/* ---- building ---------------------------------------------------------------- */

/* Syscall numbers of x86_64 stay below this; the consistency check uses a
 * bitmap of them. */
#define SC_NR_LIMIT 1024

static void sc_ctx_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

/* Mark `nr` as decided by table `which` (1-based); -EEXIST if another
 * table already decides it. */
static int sc_claim(unsigned char *owner, int nr, unsigned char which)
{
        if (nr < 0) /* not a syscall of this architecture */
                return 0;
        if (nr >= SC_NR_LIMIT)
                return -ERANGE;
        if (owner[nr] && owner[nr] != which)
                return -EEXIST;
        owner[nr] = which;
        return 0;
}

static int sc_check_tables(struct rf_error *err)
{
        unsigned char owner[SC_NR_LIMIT] = {0};
        int r = 0;

        for (size_t i = 0; i < ARRAY_SIZE(sc_allow) && r == 0; i++)
                r = sc_claim(owner, sc_allow[i], 1);
        for (size_t i = 0; i < ARRAY_SIZE(sc_refuse) && r == 0; i++)
                r = sc_claim(owner, sc_refuse[i], 2);
        for (size_t i = 0; i < ARRAY_SIZE(sc_default) && r == 0; i++)
                r = sc_claim(owner, sc_default[i], 3);
        for (size_t i = 0; i < ARRAY_SIZE(sc_rules) && r == 0; i++)
                r = sc_claim(owner, sc_rules[i].nr, 4);
        if (r == -ERANGE)
                return rf_error_set(err, -EINVAL, "seccomp filter: syscall number out of range");
        if (r < 0)
                return rf_error_set(err, -EINVAL,
                                    "seccomp filter: a syscall is decided by two tables");
        return 0;
}

static int sc_add(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n_cmp,
                  const struct scmp_arg_cmp *cmp, struct rf_error *err)
{
        int r;

        if (nr < 0) /* not a syscall of this architecture */
                return 0;
        r = seccomp_rule_add_exact_array(ctx, action, nr, n_cmp, cmp);
        if (r < 0) {
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
                rf_error_set(err, r, "seccomp filter: cannot add the rule for %s: %s",
                             name ? name : "?", strerror(-r));
                free(name);
        }
        return r;
}

/* One rule to add, from any table. */
struct sc_entry {
        int nr;
        unsigned idx; /* position in the tables: keeps the sort deterministic */
        uint32_t action;
        unsigned n_cmp;
        const struct scmp_arg_cmp *cmp;
};

/* Descending syscall number; table order among rules of one syscall. */
static int sc_entry_cmp(const void *a, const void *b)
{
        const struct sc_entry *x = a, *y = b;

        if (x->nr != y->nr)
                return x->nr > y->nr ? -1 : 1;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sc_add_rules(scmp_filter_ctx ctx, struct rf_error *err)
{
        static const uint32_t action[_SC_VERDICT_MAX] = {
                [SC_ALLOW] = SCMP_ACT_ALLOW,
                [SC_EPERM] = SCMP_ACT_ERRNO(EPERM),
                [SC_NOTIFY] = SCMP_ACT_NOTIFY,
                [SC_EOPNOTSUPP] = SCMP_ACT_ERRNO(EOPNOTSUPP),
        };
        struct sc_entry e[ARRAY_SIZE(sc_allow) + ARRAY_SIZE(sc_refuse) + ARRAY_SIZE(sc_rules)];
        size_t n = 0;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(sc_allow); i++) {
                e[n] = (struct sc_entry){sc_allow[i], n, SCMP_ACT_ALLOW, 0, NULL};
                n++;
        }
        for (size_t i = 0; i < ARRAY_SIZE(sc_refuse); i++) {
                e[n] = (struct sc_entry){sc_refuse[i], n, SCMP_ACT_ERRNO(EPERM), 0, NULL};
                n++;
        }
        for (size_t i = 0; i < ARRAY_SIZE(sc_rules); i++) {
                const struct sc_rule *rule = &sc_rules[i];
                unsigned k = 0;

                while (k < SC_ARGS_MAX && rule->cmp[k].op != 0)
                        k++;
                e[n] = (struct sc_entry){rule->nr, n, action[rule->verdict], k, rule->cmp};
                n++;
        }
        /* libseccomp keeps its syscalls in a list sorted by number, walked
         * on every insertion: adding from the highest number down makes each
         * insertion O(1). (Among one syscall's rules the order
         * does not matter, see the header; the tie-break keeps the result
         * the same on every run.) */
        qsort(e, n, sizeof *e, sc_entry_cmp);
        for (size_t i = 0; i < n; i++)
                if ((r = sc_add(ctx, e[i].action, e[i].nr, e[i].n_cmp, e[i].cmp, err)) < 0)
                        return r;
        return 0;
}

int seccomp_build(struct rf_seccomp_plan *out, struct rf_error *err)
{
        _cleanup_(sc_ctx_releasep) scmp_filter_ctx ctx = NULL;
        int r;

        /* The tables and the x32 reasoning are x86_64's; elsewhere refuse
         * rather than install a filter nobody checked. */
        if (seccomp_arch_native() != SCMP_ARCH_X86_64)
                return rf_error_set(err, -EOPNOTSUPP, "seccomp filter: only x86_64 is supported");
        if ((r = sc_check_tables(err)) < 0)
                return r;

        ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
        if (!ctx)
                return rf_error_set(err, -ENOMEM, "seccomp filter: cannot initialise libseccomp");
        /* Only the native arch is in the filter; anything else is killed.
         * no_new_privs is ringfence's own step (launch.c), and the filter is
         * installed by seccomp_apply(), not seccomp_load(). */
        if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
            (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0 ||
            /* binary tree: slower to build (done once, at build time),
             * cheaper for the kernel to prepare when a run installs it */
            (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0)
                return rf_error_set(err, r, "seccomp filter: cannot set attributes: %s",
                                    strerror(-r));
        if ((r = sc_add_rules(ctx, err)) < 0)
                return r;
        /* The kernel caches the verdict of syscalls allowed whatever their
         * arguments, so only argument-checked syscalls run the program:
         * the frequent ones get the highest priority. */
        for (size_t i = 0; i < ARRAY_SIZE(sc_hot); i++)
                if ((r = seccomp_syscall_priority(ctx, sc_hot[i], 255)) < 0)
                        return rf_error_set(err, r, "seccomp filter: cannot set priority: %s",
                                            strerror(-r));
        return seccomp_export(ctx, out, err);
}

#else /* !RF_SECCOMP_GENERATOR */
/* The program seccomp-gen built from the tables above at build time. */
#include "sandbox/seccomp-bpf.h"

int seccomp_plan(struct rf_plan *p, struct rf_error *err)
{
        /* Building with libseccomp costs ~2.5 ms per run; the program is the
         * same every time, so it was generated at build time (seccomp-gen.c)
         * from these very tables, and each run only copies it. */
        _Static_assert(ARRAY_SIZE(rf_seccomp_bpf) <= BPF_MAXINSNS, "filter too long");
        free(p->seccomp.filter);
        p->seccomp.filter = malloc(sizeof rf_seccomp_bpf);
        if (!p->seccomp.filter)
                return rf_error_set(err, -ENOMEM, "seccomp filter: out of memory");
        memcpy(p->seccomp.filter, rf_seccomp_bpf, sizeof rf_seccomp_bpf);
        p->seccomp.len = (unsigned short)ARRAY_SIZE(rf_seccomp_bpf);
        return 0;
}
#endif

/* ---- installing (command child, between fork and exec) ------------------------ */

int seccomp_apply(const struct rf_plan *p)
{
        struct sock_fprog prog = {
                .len = p->seccomp.len,
                .filter = p->seccomp.filter,
        };
        long fd;

        if (!p->seccomp.filter || p->seccomp.len == 0)
                return -EINVAL;
        /* The listener (O_CLOEXEC) receives the umask() calls the filter
         * hands on (SC_NOTIFY): the caller passes it to init. */
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd < 0)
                return -errno;
        return (int)fd;
}

/* ---- answering (the run's init) ----------------------------------------------- */

/* The "Umask:" line of /proc/PID/status (Linux >= 4.7), or -errno. */
static int sc_read_umask(int pid)
{
        char path[40], buf[2048];
        const char *at, *key = "\nUmask:\t";
        int fd, mask = 0;
        ssize_t n;

        snprintf(path, sizeof path, "/proc/%d/status", pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return negative_errno();
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return n < 0 ? -errno : -EIO;
        buf[n] = '\0';
        if (!(at = strstr(buf, key)))
                return -EIO;
        for (at += strlen(key); *at >= '0' && *at <= '7'; at++)
                mask = mask * 8 + (*at - '0');
        if (*at != '\n' || mask > 0777)
                return -EIO;
        return mask;
}

int seccomp_umask_answer(int listener)
{
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        int cur;

        memset(&req, 0, sizeof req);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
                /* ENOENT: the caller died (or was signalled) meanwhile */
                return errno == ENOENT || errno == EINTR ? 0 : -errno;
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.error = -EPERM;
        if (req.data.nr == SYS_umask && req.data.arch == AUDIT_ARCH_X86_64 &&
            (cur = sc_read_umask((int)req.pid)) >= 0 &&
            /* the pid read above is still the caller */
            ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0 &&
            ((unsigned)req.data.args[0] & 0777 & ~(unsigned)cur) == 0) {
                resp.error = 0;
                resp.val = cur;
        }
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}
