/*
 * provider.c — resolve a binding's source: store, exec, env.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "secrets/provider.h"
#include "secrets/secmem.h"
#include "secrets/store.h"
#include "shared/lockdown.h"
#include "shared/macro.h"

#define EXEC_PATH   "PATH=/usr/local/bin:/usr/bin:/bin"
#define STDERR_KEEP 160

extern char **environ;

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first line of what the command wrote to stderr, printable ASCII only. */
static void first_line(const char *in, size_t n, char *out, size_t size)
{
        size_t o = 0;
        for (size_t i = 0; i < n && o + 1 < size; i++) {
                unsigned char ch = (unsigned char)in[i];
                if (ch == '\n') {
                        if (o)
                                break;
                        continue;
                }
                out[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
        }
        out[o] = '\0';
}

/* rf_fork_tied's prepare step for a provider: its own process group and
 * the default signal dispositions, while it is still being set up. */
static int provider_prepare(void *ctx)
{
        (void)ctx;
        (void)setpgid(0, 0);
        /* not ringfence's blocked signals and ignored ones: a provider (and
         * what it starts) can be interrupted like any command */
        sigset_t none;
        sigemptyset(&none);
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        signal(sig, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        return 0;
}

/* The provider, locked down already (rf_fork_tied: stdio set, nothing
 * else open, no capability, no_new_privs): a clean environment and exec. */
static _noreturn_ void exec_child(const struct secret_binding *b)
{
        char *envp[SECRET_PASS_ENV_MAX + 3];
        size_t n = 0;

        envp[n++] = (char *)EXEC_PATH;
        static char home[4200];
        const char *h = getenv("HOME");
        if (h && strlen(h) < sizeof home - 6) {
                snprintf(home, sizeof home, "HOME=%s", h);
                envp[n++] = home;
        }
        /* the pass-through list: exactly the named variables, as set for ringfence */
        for (size_t i = 0; i < b->n_pass_env; i++)
                for (char **e = environ; e && *e; e++) {
                        size_t l = strlen(b->pass_env[i]);
                        if (!strncmp(*e, b->pass_env[i], l) && (*e)[l] == '=') {
                                envp[n++] = *e;
                                break;
                        }
                }
        envp[n] = NULL;
        environ = envp; /* execvp searches the clean PATH */
        execvp(b->argv[0], b->argv);
        dprintf(2, "%s: %s\n", b->argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

static int resolve_exec(const struct secret_binding *b, unsigned char **value, size_t *len,
                        char *why, size_t why_len, struct rf_error *err)
{
        int out[2] = {-1, -1}, errp[2] = {-1, -1};
        uint64_t timeout = b->timeout_ms ? b->timeout_ms : SECRET_EXEC_TIMEOUT_MS;
        unsigned char *buf = secmem_alloc(SECRET_VALUE_MAX + 1);
        char ebuf[1024];
        size_t n = 0, en = 0;
        int r;

        if (!buf)
                return rf_error_set(err, negative_errno(), "cannot lock memory: %m");
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
                r = rf_error_set(err, negative_errno(), "pipe: %m");
                close_pair(out);
                close_pair(errp);
                secmem_free(buf);
                return r;
        }
        /* tied to its parent, stdio only, every capability dropped
         * (bounding set included) and no_new_privs: a provider resolves a
         * value with the invoker's identity, never with ringfence's
         * privileges (shared/lockdown.h) */
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        struct rf_lockdown how = {.what = "secret provider",
                                  .arrange_fds = true,
                                  .fds = {nul, out[1], errp[1]},
                                  .n_fds = 3,
                                  .prepare = provider_prepare,
                                  .drop_caps = true,
                                  .keep_dumpable = true};
        int step = 0;
        pid_t pid = nul < 0 ? negative_errno() : rf_fork_tied(&how, &step);
        safe_close(nul);
        if (pid < 0) {
                r = rf_error_set(err, pid, "cannot start the provider (%s): %s",
                                 nul < 0 ? "/dev/null" : rf_lockdown_step_name(step),
                                 strerror((int)-pid));
                close_pair(out);
                close_pair(errp);
                secmem_free(buf);
                return r;
        }
        if (pid == 0)
                exec_child(b);
        (void)setpgid(pid, pid); /* both sides: no race with the kill below */
        out[1] = safe_close(out[1]);
        errp[1] = safe_close(errp[1]);
        int64_t deadline = now_ms() + (int64_t)timeout;
        bool timed_out = false, too_big = false;
        while (out[0] >= 0 || errp[0] >= 0) {
                int64_t left = deadline - now_ms();
                if (left <= 0) {
                        timed_out = true;
                        break;
                }
                struct pollfd p[2] = {{.fd = out[0], .events = POLLIN},
                                      {.fd = errp[0], .events = POLLIN}};
                int pr = poll(p, 2, left < 20 ? (int)left : 20);
                if (pr < 0 && errno != EINTR)
                        break;
                if (pr == 0) {
                        /* nothing to read: has the provider itself exited? Then its
                         * output is complete, even if something it started still
                         * holds the pipe (that is killed below). */
                        siginfo_t si = {0};
                        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                            si.si_pid == pid) {
                                out[0] = safe_close(out[0]);
                                errp[0] = safe_close(errp[0]);
                        }
                        continue;
                }
                if (p[0].revents) {
                        ssize_t k = read(out[0], buf + n, SECRET_VALUE_MAX + 1 - n);
                        if (k > 0)
                                n += (size_t)k;
                        else if (k == 0 || errno != EINTR)
                                out[0] = safe_close(out[0]);
                        if (n > SECRET_VALUE_MAX) {
                                too_big = true;
                                break;
                        }
                }
                if (p[1].revents) {
                        char drop[512];
                        ssize_t k = en < sizeof ebuf ? read(errp[0], ebuf + en, sizeof ebuf - en)
                                                     : read(errp[0], drop, sizeof drop);
                        if (k > 0 && en < sizeof ebuf)
                                en += (size_t)k;
                        else if (k == 0 || (k < 0 && errno != EINTR))
                                errp[0] = safe_close(errp[0]);
                }
        }
        close_pair(out);
        close_pair(errp);
        /* the deadline holds for its exit too (it may close its pipes and
         * linger); whatever it leaves behind in its group dies now */
        int status = 0;
        for (;;) {
                /* WNOWAIT: while it is an unreaped zombie its pid (and its group's
                 * id) cannot be reused, so the group kill below hits only its own */
                siginfo_t si = {0};
                if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
                    errno != EINTR)
                        break;
                if (si.si_pid == pid)
                        break;
                if (now_ms() >= deadline && !timed_out && !too_big)
                        timed_out = true;
                if (timed_out || too_big)
                        (void)kill(pid, SIGKILL);
                nanosleep(&(struct timespec){0, 2000000}, NULL);
        }
        (void)kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (!timed_out && !too_big && out[0] < 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                if (n > 0 && buf[n - 1] == '\n')
                        n--;
                if (n == 0) {
                        secmem_free(buf);
                        rf_why(why, why_len, 0, "printed nothing");
                        return rf_error_set(err, -ENODATA, "%s printed nothing", b->argv[0]);
                }
                *value = buf;
                *len = n;
                return 0;
        }
        explicit_bzero(buf, n);
        secmem_free(buf);
        char line[STDERR_KEEP + 1];
        first_line(ebuf, en, line, sizeof line);
        if (timed_out)
                rf_why(why, why_len, 0, "timed out after %llu ms", (unsigned long long)timeout);
        else if (too_big)
                rf_why(why, why_len, 0, "printed more than %d bytes", SECRET_VALUE_MAX);
        else if (WIFSIGNALED(status))
                rf_why(why, why_len, 0, "killed by signal %d", WTERMSIG(status));
        else
                rf_why(why, why_len, 0, "exited with status %d", WEXITSTATUS(status));
        return rf_error_set(err, timed_out ? -ETIMEDOUT : -EIO, "%s %s%s%s", b->argv[0], why,
                            line[0] ? ": " : "", line);
}

int provider_resolve(const struct secret_binding *b, const char *state_dir,
                     const unsigned char *key, unsigned char **value, size_t *len,
                     uint32_t *version, char *why, size_t why_len, struct rf_error *err)
{
        *version = 0;
        why[0] = '\0';
        switch (b->source) {
        case SOURCE_STORE: {
                int r = store_get(state_dir, key, b->key, b->version, value, len, version, err);
                if (r < 0)
                        rf_why(why, why_len, 0, "%s", err->msg);
                return r;
        }
        case SOURCE_EXEC:
                return resolve_exec(b, value, len, why, why_len, err);
        case SOURCE_ENV: {
                const char *v = getenv(b->key);
                if (!v || !*v) {
                        rf_why(why, why_len, 0, "variable %s is not set", b->key);
                        return rf_error_set(err, -ENOENT, "%s", why);
                }
                size_t l = strlen(v);
                if (l > SECRET_VALUE_MAX) {
                        rf_why(why, why_len, 0, "value larger than %d bytes", SECRET_VALUE_MAX);
                        return rf_error_set(err, -E2BIG, "%s", why);
                }
                unsigned char *m = secmem_alloc(l);
                if (!m)
                        return rf_error_set(err, negative_errno(), "cannot lock memory: %m");
                memcpy(m, v, l);
                *value = m;
                *len = l;
                return 0;
        }
        default:
                return rf_error_set(err, -EINVAL, "unknown source");
        }
}

void provider_wipe_env(const char *name)
{
        char *v = getenv(name);
        if (v)
                explicit_bzero(v, strlen(v));
}
