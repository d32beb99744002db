/*
 * test_lockdown.c — rf_fork_tied (src/shared/lockdown.h): the one routine
 * that forks every helper process tied to its parent and locked down.
 *
 * A locked-down child has no effective capability, no_new_privs, the
 * parent-death signal armed (also after a uid change, which clears it),
 * only the fds it was given, and its seccomp filter. In a test build
 * (compile-time RF_TEST_BUILD) each step is made to fail in turn: the
 * child must never return into the caller (it reports nothing on the pipe
 * the caller's code would write to) and the parent must get the failure
 * with the step that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/lockdown.h"
#include "tap.h"

/* What the child's /proc/self/status says about `key` ("CapEff"), or "". */
static void status_field(const char *key, char *out, size_t size)
{
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");
        out[0] = '\0';
        while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
                        const char *v = line + strlen(key) + 1;
                        while (*v == '\t' || *v == ' ')
                                v++;
                        snprintf(out, size, "%.*s", (int)strcspn(v, "\n"), v);
                }
        if (f)
                fclose(f);
}

struct seen {
        char cap_eff[64], cap_bnd[64], nnp[8], seccomp[8];
        int pdeathsig;
        unsigned uid;
        int extra_fd_open; /* was fd 4 (not given) open in the child? */
};

/* A TAP skip (tap.h has none). */
static void skip(const char *why)
{
        printf("ok %d # SKIP %s\n", ++tap_state.run, why);
        fflush(stdout);
}

static int prep_fail(void *ctx)
{
        (void)ctx;
        return -EACCES;
}

/* Fork with `how` (fd 3: a pipe to us); the child reports what it sees.
 * Returns rf_fork_tied's result; *got filled when the child reported. */
static pid_t run_child(struct rf_lockdown *how, struct seen *got, bool *reported, int *step)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        how->arrange_fds = true;
        how->fds[0] = how->fds[1] = how->fds[2] = -1;
        how->fds[3] = p[1];
        how->n_fds = 4;
        int extra = open("/dev/null", O_RDONLY); /* not given: must be closed */
        pid_t pid = rf_fork_tied(how, step);
        if (pid > 0 && how->report) /* deferred: collected now */
                pid = rf_fork_tied_wait(*how->report, pid, NULL, step);
        if (pid == 0) {
                struct seen s = {0};
                status_field("CapEff", s.cap_eff, sizeof s.cap_eff);
                status_field("CapBnd", s.cap_bnd, sizeof s.cap_bnd);
                status_field("NoNewPrivs", s.nnp, sizeof s.nnp);
                status_field("Seccomp", s.seccomp, sizeof s.seccomp);
                (void)prctl(PR_GET_PDEATHSIG, &s.pdeathsig, 0, 0, 0);
                s.uid = (unsigned)getuid();
                s.extra_fd_open = fcntl(extra, F_GETFD) >= 0 && extra != 3;
                (void)!write(3, &s, sizeof s);
                _exit(0);
        }
        close(p[1]);
        close(extra);
        *reported = false;
        if (pid > 0) {
                *reported = read(p[0], got, sizeof *got) == (ssize_t)sizeof *got;
                (void)waitpid(pid, NULL, 0);
        } else {
                struct seen junk;
                *reported = read(p[0], &junk, sizeof junk) > 0; /* must stay false */
        }
        close(p[0]);
        return pid;
}

int main(void)
{
        struct seen s;
        bool rep;
        int step;
        bool root = geteuid() == 0;

        /* a locked-down child */
        struct rf_lockdown how = {.what = "test", .drop_caps = true};
        pid_t pid = run_child(&how, &s, &rep, &step);
        ok(pid > 0 && rep, "rf_fork_tied: the child is locked down and runs the caller's code");
        is_str(s.cap_eff, "0000000000000000", "... with no effective capability");
        if (root)
                is_str(s.cap_bnd, "0000000000000000", "... an empty bounding set (root)");
        else
                skip("an empty bounding set: not root (no CAP_SETPCAP to drop it)");
        is_str(s.nnp, "1", "... no_new_privs");
        is_int(s.pdeathsig, SIGKILL, "... the parent-death signal SIGKILL");
        ok(!s.extra_fd_open, "... and no fd but those it was given");

        /* a uid change clears the parent-death signal: it is set again */
        if (root) {
                how = (struct rf_lockdown){.what = "test",
                                           .drop_caps = true,
                                           .set_ids = true,
                                           .uid = 65534,
                                           .gid = 65534};
                pid = run_child(&how, &s, &rep, &step);
                ok(pid > 0 && rep && s.uid == 65534, "set_ids: the child runs as uid 65534");
                is_int(s.pdeathsig, SIGKILL, "... with the parent-death signal armed again");
        } else {
                skip("set_ids: not root");
                skip("set_ids: not root");
        }

        /* a seccomp filter (allow all: what matters is that it is there) */
        struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
        struct sock_fprog prog = {.len = 1, .filter = allow};
        how = (struct rf_lockdown){.what = "test", .drop_caps = true, .seccomp = &prog};
        pid = run_child(&how, &s, &rep, &step);
        ok(pid > 0 && rep, "with a seccomp filter: locked down");
        is_str(s.seccomp, "2", "... the filter installed");

        /* a prepare step that fails: the child never reaches the caller's code */
        how = (struct rf_lockdown){.what = "test", .drop_caps = true, .prepare = prep_fail};
        pid = run_child(&how, &s, &rep, &step);
        is_int(pid, -EACCES, "a failing prepare step: the parent gets its errno");
        is_int(step, RF_LOCK_PREPARE, "... and the step");
        ok(!rep, "... and the child did not go on");

        /* the report deferred (how->report): the parent goes on at once and
         * collects it later (rf_fork_tied_wait), with the same outcome */
        int report = -1;
        how = (struct rf_lockdown){.what = "test", .drop_caps = true, .report = &report};
        pid = run_child(&how, &s, &rep, &step);
        ok(pid > 0 && rep, "report deferred: the child is locked down and runs the caller's code");
        is_str(s.cap_eff, "0000000000000000", "... with no effective capability");
        ok(report >= 0 && fcntl(report, F_GETFD) < 0,
           "... and the report's fd was closed by rf_fork_tied_wait");
        how = (struct rf_lockdown){
                .what = "test", .drop_caps = true, .prepare = prep_fail, .report = &report};
        pid = run_child(&how, &s, &rep, &step);
        is_int(pid, -EACCES,
               "report deferred, a failing prepare step: rf_fork_tied_wait gets its errno");
        is_int(step, RF_LOCK_PREPARE, "... and the step");
        ok(!rep, "... and the child did not go on");

#ifdef RF_TEST_BUILD
        /* fault injection (test builds only): every lockdown step, in turn */
        static const int steps[] = {RF_LOCK_BOUNDING, RF_LOCK_CAPSET, RF_LOCK_NNP, RF_LOCK_SECCOMP};
        for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
                if (steps[i] == RF_LOCK_BOUNDING && !root) {
                        for (int k = 0; k < 3; k++)
                                skip("bounding set: not root");
                        continue;
                }
                rf_lockdown_test_fail_step = steps[i];
                how = (struct rf_lockdown){.what = "test", .drop_caps = true, .seccomp = &prog};
                pid = run_child(&how, &s, &rep, &step);
                rf_lockdown_test_fail_step = 0;
                is_int(pid, -EPERM, "%s fails: rf_fork_tied fails (-EPERM)",
                       rf_lockdown_step_name(steps[i]));
                is_int(step, steps[i], "... naming that step");
                ok(!rep, "... and the child refused to continue (fail closed)");
        }
#else
        for (int k = 0; k < 12; k++)
                skip("fault injection: not a test build (-Dtest_build=true)");
#endif
        return done();
}
