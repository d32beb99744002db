/*
 * lockdown.c — rf_fork_tied: the one fork-tied-and-lock-down routine
 * (lockdown.h has the contract and the order of the steps).
 *
 * Between fork and the report the routine itself calls no malloc and no
 * stdio (the callers fork from single-threaded processes; a prepare step
 * may allocate, as the egress process's does).
 * A step that fails is reported as {step, errno} on a CLOEXEC pipe and the
 * child _exits; the parent turns the report into its return value.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/lockdown.h"
#include "shared/macro.h"

#ifdef RF_TEST_BUILD
int rf_lockdown_test_fail_step;
#define FAULT(step) (rf_lockdown_test_fail_step == (step) ? (errno = EPERM, -1) : 0)
#else
#define FAULT(step) 0
#endif

struct report {
        int32_t step, err; /* {0, 0}: locked down */
};

static _noreturn_ void fail(int fd, int step, int err)
{
        struct report r = {.step = step, .err = err > 0 ? err : EIO};
        (void)!write(fd, &r, sizeof r);
        _exit(RF_LOCKDOWN_EXIT);
}

/* PR_SET_PDEATHSIG, then: is the parent still the one we were forked by? */
static void tie(int fd, pid_t parent)
{
        if (FAULT(RF_LOCK_TIE) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                fail(fd, RF_LOCK_TIE, errno);
        if (getppid() != parent)
                _exit(RF_LOCKDOWN_EXIT); /* it died first: no one to report to */
}

/* fd i = how->fds[i]; the report pipe at n_fds; nothing else. Returns the
 * report fd's new number. */
static int arrange_fds(const struct rf_lockdown *how, int fd)
{
        int copy[RF_LOCKDOWN_FDS_MAX];
        int min = (int)how->n_fds + 1;
        /* copies above every target first, so the renumbering cannot collide */
        for (size_t i = 0; i < how->n_fds; i++)
                if (how->fds[i] < 0)
                        copy[i] = -1;
                else if ((copy[i] = fcntl(how->fds[i], F_DUPFD_CLOEXEC, min)) < 0)
                        fail(fd, RF_LOCK_FDS, errno);
        int rep = fcntl(fd, F_DUPFD_CLOEXEC, min);
        if (rep < 0 || dup3(rep, (int)how->n_fds, O_CLOEXEC) < 0)
                fail(fd, RF_LOCK_FDS, errno);
        fd = (int)how->n_fds;
        for (size_t i = 0; i < how->n_fds; i++)
                if (copy[i] < 0)
                        (void)close((int)i);
                else if (dup2(copy[i], (int)i) < 0) /* not CLOEXEC: an exec keeps it */
                        fail(fd, RF_LOCK_FDS, errno);
        if (syscall(SYS_close_range, (unsigned)fd + 1, ~0U, 0) < 0)
                fail(fd, RF_LOCK_FDS, errno);
        return fd;
}

static bool have_setpcap(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct d[2] = {{0}};
        return syscall(SYS_capget, &h, d) == 0 && (d[0].effective & (1u << CAP_SETPCAP));
}

static void child(const struct rf_lockdown *how, int fd, pid_t parent)
{
        tie(fd, parent);
        if (how->arrange_fds)
                fd = arrange_fds(how, fd);
        int r = how->prepare ? how->prepare(how->ctx) : 0;
        if (r < 0 || FAULT(RF_LOCK_PREPARE) < 0)
                fail(fd, RF_LOCK_PREPARE, r < 0 ? -r : errno);
        /* the bounding set first: dropping it needs CAP_SETPCAP, which the
         * uid change below takes away */
        if (how->drop_caps && have_setpcap())
                for (int cap = 0; cap <= 63; cap++) {
                        if (FAULT(RF_LOCK_BOUNDING) < 0)
                                fail(fd, RF_LOCK_BOUNDING, errno);
                        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                                if (errno == EINVAL && cap > 0)
                                        break; /* past the kernel's last capability */
                                fail(fd, RF_LOCK_BOUNDING, errno);
                        }
                }
        if (how->set_ids && geteuid() == 0) {
                if (FAULT(RF_LOCK_IDS) < 0 || setgroups(0, NULL) < 0 ||
                    setresgid(how->gid, how->gid, how->gid) < 0 ||
                    setresuid(how->uid, how->uid, how->uid) < 0)
                        fail(fd, RF_LOCK_IDS, errno);
                tie(fd, parent); /* the uid change cleared the parent-death signal */
        }
        if (how->drop_caps) {
                struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
                struct __user_cap_data_struct d[2] = {{0}};
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                        fail(fd, RF_LOCK_CAPSET, errno);
                if (FAULT(RF_LOCK_CAPSET) < 0 || syscall(SYS_capset, &h, d) < 0)
                        fail(fd, RF_LOCK_CAPSET, errno);
        }
        if (how->drop_caps || how->seccomp) {
                if (FAULT(RF_LOCK_NNP) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        fail(fd, RF_LOCK_NNP, errno);
        }
        if (!how->keep_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                fail(fd, RF_LOCK_NNP, errno);
        if (how->seccomp && (FAULT(RF_LOCK_SECCOMP) < 0 ||
                             prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, how->seccomp, 0, 0) < 0))
                fail(fd, RF_LOCK_SECCOMP, errno);
        struct report ok = {0};
        if (write(fd, &ok, sizeof ok) != (ssize_t)sizeof ok || close(fd) < 0)
                _exit(RF_LOCKDOWN_EXIT);
}

pid_t rf_fork_tied(const struct rf_lockdown *how, int *step)
{
        int p[2];
        pid_t parent = getpid();

        if (step)
                *step = 0;
        if (how->n_fds > RF_LOCKDOWN_FDS_MAX)
                return -EINVAL;
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        pid_t pid;
        if (how->pidfd)
                pid = (pid_t)syscall(SYS_clone, SIGCHLD | CLONE_PIDFD, NULL, how->pidfd, NULL, 0);
        else
                pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close_pair(p);
                return r;
        }
        if (pid == 0) {
                close(p[0]);
                child(how, p[1], parent);
                return 0; /* back in the caller, as the child, locked down */
        }
        close(p[1]);
        if (how->report) { /* the caller collects the report later */
                *how->report = p[0];
                return pid;
        }
        return rf_fork_tied_wait(p[0], pid, how->pidfd, step);
}

pid_t rf_fork_tied_wait(int report, pid_t pid, int *pidfd, int *step)
{
        struct report rep = {.step = RF_LOCK_TIE, .err = ECHILD};
        ssize_t n = RETRY_EINTR(read(report, &rep, sizeof rep));
        close(report);
        if (step)
                *step = 0;
        if (n == (ssize_t)sizeof rep && rep.step == 0)
                return pid;
        if (n != (ssize_t)sizeof rep)
                rep.err = ECHILD; /* it died without a word */
        (void)RETRY_EINTR(waitpid(pid, NULL, 0));
        if (pidfd && *pidfd >= 0)
                *pidfd = safe_close(*pidfd);
        if (step)
                *step = rep.step;
        return rep.err > 0 ? -rep.err : -EIO;
}

const char *rf_lockdown_step_name(int step)
{
        static const char *const names[_RF_LOCK_STEP_MAX] = {
                [RF_LOCK_TIE] = "tie to the parent", [RF_LOCK_FDS] = "file descriptors",
                [RF_LOCK_PREPARE] = "setup",         [RF_LOCK_IDS] = "uid and gid",
                [RF_LOCK_BOUNDING] = "bounding set", [RF_LOCK_CAPSET] = "capabilities",
                [RF_LOCK_NNP] = "no_new_privs",      [RF_LOCK_SECCOMP] = "seccomp",
        };
        return step > 0 && step < _RF_LOCK_STEP_MAX ? names[step] : "lockdown";
}
