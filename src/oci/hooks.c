/*
 * hooks.c — running a container's runtime-namespace hooks (see hooks.h).
 *
 * Each hook is forked from ringfence-oci with the state on a sealed memfd
 * as its stdin, stdout onto stderr, every other fd closed, the signal mask
 * and dispositions reset, and executed with the config's args and env
 * only. The parent follows it through a pidfd: a hook with a timeout is
 * killed (SIGKILL) when it is up; one without is waited for, as runc does.
 */
#include "oci/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/memfd.h"

/* the child: never returns */
static _noreturn_ void hook_exec(const struct oci_hook *h, int in)
{
        sigset_t all;
        sigemptyset(&all);
        (void)sigprocmask(SIG_SETMASK, &all, NULL);
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)signal(sig, SIG_DFL);
        /* the state as stdin (already fd 0: its close-on-exec cleared) */
        if ((in == 0 ? fcntl(0, F_SETFD, 0) : dup2(in, 0)) < 0 || dup2(2, 1) < 0 ||
            syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
                _exit(127);
        char *const none[] = {NULL};
        char *const self[] = {(char *)h->path, NULL};
        execve(h->path, h->args && h->n_args ? (char *const *)h->args : self,
               h->env ? (char *const *)h->env : none);
        _exit(errno == ENOENT ? 127 : 126);
}

/* one hook, started by `how` (NULL: a child of ours in our namespaces):
 * 0, or -errno with err set */
static int hook_run(const struct oci_hook *h, const char *what, int in,
                    const struct oci_hook_spawner *how, struct rf_error *err)
{
        if (lseek(in, 0, SEEK_SET) < 0)
                return rf_error_set(err, negative_errno(), "%s (%s): %m", what, h->path);
        pid_t pid;
        if (how) {
                struct rf_error why = {0};
                if ((pid = how->spawn(how->ctx, h, in, &why)) < 0)
                        return rf_error_set(err, pid, "%s (%s): %s", what, h->path, why.msg);
        } else if ((pid = fork()) < 0) {
                return rf_error_set(err, negative_errno(), "%s (%s): cannot fork: %m", what,
                                    h->path);
        } else if (pid == 0) {
                hook_exec(h, in);
        }
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        bool timed_out = false;
        if (h->timeout_s && pidfd < 0) {
                /* a timeout that cannot be kept: the hook does not run on */
                int e = errno;
                (void)kill(pid, SIGKILL);
                (void)RETRY_EINTR(waitpid(pid, NULL, 0));
                return rf_error_set(err, -e, "%s (%s): cannot follow it for its timeout: %s", what,
                                    h->path, strerror(e));
        }
        if (h->timeout_s) {
                /* a pidfd polls readable once the hook exits */
                struct pollfd p = {.fd = pidfd, .events = POLLIN};
                int ms = h->timeout_s > INT32_MAX / 1000 ? INT32_MAX : (int)(h->timeout_s * 1000);
                int r = RETRY_EINTR(poll(&p, 1, ms));
                if (r == 0) {
                        timed_out = true;
                        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                }
        }
        int st = 0;
        pid_t w = RETRY_EINTR(waitpid(pid, &st, 0));
        safe_close(pidfd);
        if (w < 0)
                return rf_error_set(err, negative_errno(), "%s (%s): %m", what, h->path);
        if (timed_out)
                return rf_error_set(err, -ETIMEDOUT, "%s (%s): timed out after %" PRIu64 " s", what,
                                    h->path, h->timeout_s);
        if (WIFSIGNALED(st))
                return rf_error_set(err, -ECANCELED, "%s (%s): killed by signal %d", what, h->path,
                                    WTERMSIG(st));
        if (WEXITSTATUS(st) != 0)
                return rf_error_set(err, -ECANCELED, "%s (%s): exit status %d%s", what, h->path,
                                    WEXITSTATUS(st),
                                    WEXITSTATUS(st) == 127   ? " (not found)"
                                    : WEXITSTATUS(st) == 126 ? " (cannot run)"
                                                             : "");
        return 0;
}

int oci_hooks_run(const struct oci_spec *s, enum oci_hook_stage st, const char *state, size_t len,
                  struct rf_error *err)
{
        return oci_hooks_run_as(s, st, state, len, NULL, err);
}

int oci_hooks_run_as(const struct oci_spec *s, enum oci_hook_stage st, const char *state,
                     size_t len, const struct oci_hook_spawner *how, struct rf_error *err)
{
        if (!s->n_hooks[st])
                return 0;
        _cleanup_close_ int in = memfd_new("ringfence-oci-state");
        int r;
        if (in < 0)
                return rf_error_set(err, in, "hooks: %s", strerror(-in));
        if ((r = fd_write_all(in, state, len)) < 0 || (r = memfd_seal(in)) < 0)
                return rf_error_set(err, r, "hooks: the state: %s", strerror(-r));
        for (size_t i = 0; i < s->n_hooks[st]; i++) {
                char what[64];
                snprintf(what, sizeof what, "hooks.%s[%zu]", oci_hook_stage_name(st), i);
                if ((r = hook_run(&s->hooks[st][i], what, in, how, err)) < 0)
                        return r;
        }
        return 0;
}

static void strv_json(struct json_buf *b, const char *key, const char *const *v, size_t n)
{
        json_buf_append(b, ",\"", 2);
        json_buf_append(b, key, strlen(key));
        json_buf_append(b, "\":", 2);
        json_buf_append_string_array(b, (char *const *)v, n);
}

void oci_hooks_json(const struct oci_spec *s, struct json_buf *b)
{
        static const enum oci_hook_stage later[] = {OCI_HOOK_START_CONTAINER, OCI_HOOK_POSTSTART,
                                                    OCI_HOOK_POSTSTOP};
        bool first = true;
        json_buf_append(b, "{", 1);
        for (size_t k = 0; k < ARRAY_SIZE(later); k++) {
                enum oci_hook_stage st = later[k];
                if (!s->n_hooks[st])
                        continue;
                if (!first)
                        json_buf_append(b, ",", 1);
                first = false;
                const char *name = oci_hook_stage_name(st);
                json_buf_append_string(b, name, strlen(name));
                json_buf_append(b, ":[", 2);
                for (size_t i = 0; i < s->n_hooks[st]; i++) {
                        const struct oci_hook *h = &s->hooks[st][i];
                        const char *open = i ? ",{\"path\":" : "{\"path\":";
                        json_buf_append(b, open, strlen(open));
                        json_buf_append_string(b, h->path, strlen(h->path));
                        if (h->args)
                                strv_json(b, "args", h->args, h->n_args);
                        if (h->env)
                                strv_json(b, "env", h->env, h->n_env);
                        if (h->timeout_s) {
                                json_buf_append(b, ",\"timeout\":", 11);
                                json_buf_append_uint(b, h->timeout_s);
                        }
                        json_buf_append(b, "}", 1);
                }
                json_buf_append(b, "]", 1);
        }
        json_buf_append(b, "}", 1);
}
