/*
 * joinplan.c — a run's join plan: written by its supervisor, read by
 * `ringfence-oci exec` (joinplan.h), and the plan's memory (plan_own,
 * plan_empty, plan_free: pure, so the parser's tests free what it made).
 * The parser is pure (allocation only)
 * and fuzzed by tests/fuzz/fuzz_joinplan.c; every line is checked against
 * its bounds, every number against its range, and anything unknown is a
 * refusal: a join plan that cannot be read whole gives no process.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinplan.h"
#include "shared/macro.h"

/* ---- the plan's memory (plan.h): its strings, an empty plan, its end ----------- */

char *plan_own(struct rf_plan *p, char *s)
{
        if (!s)
                return NULL;
        if (p->n_strings == p->cap_strings) {
                size_t cap = p->cap_strings ? p->cap_strings * 2 : 64;
                char **n = realloc(p->strings, cap * sizeof *n);
                if (!n) {
                        free(s);
                        return NULL;
                }
                p->strings = n;
                p->cap_strings = cap;
        }
        p->strings[p->n_strings++] = s;
        return s;
}

struct rf_plan *plan_empty(void)
{
        struct rf_plan *p = calloc(1, sizeof *p);
        if (p) {
                p->secrets_fd = -1;
                p->uid_lock_fd = -1;
                for (int i = 0; i < PLAN_JOIN_NS; i++)
                        p->join_ns[i] = -1;
        }
        return p;
}

struct rf_plan *plan_free(struct rf_plan *p)
{
        if (!p)
                return NULL;
        safe_close(p->secrets_fd);
        for (size_t i = 0; i < p->n_strings; i++)
                free(p->strings[i]);
        free(p->strings);
        free(p->argv);
        free(p->envp);
        free(p->seccomp.filter);
        free(p->seccomp_extra.filter);
        free(p->capture_rules);
        if (p->uid_lock_fd >= 0)
                safe_close(p->uid_lock_fd);
        for (int i = 0; i < PLAN_JOIN_NS; i++)
                if (p->join_ns[i] >= 0)
                        safe_close(p->join_ns[i]);
        for (size_t i = 0; i < p->n_kept_locks; i++)
                safe_close(p->kept_lock_fds[i]);
        free(p);
        return NULL;
}

/* ---- writing ---------------------------------------------------------------- */

struct out {
        char *buf;
        size_t len, cap;
        int err;
};

static void put(struct out *o, const char *fmt, ...) _printf_(2, 3);
static void put(struct out *o, const char *fmt, ...)
{
        va_list ap;
        if (o->err)
                return;
        for (;;) {
                va_start(ap, fmt);
                int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0,
                                  fmt, ap);
                va_end(ap);
                if (n < 0) {
                        o->err = -EINVAL;
                        return;
                }
                if (o->buf && o->len + (size_t)n < o->cap) {
                        o->len += (size_t)n;
                        return;
                }
                size_t need = o->len + (size_t)n + 1, cap = o->cap ? o->cap * 2 : 65536;
                if (need > JOINPLAN_MAX + 1) {
                        o->err = -E2BIG;
                        return;
                }
                cap = cap > JOINPLAN_MAX + 1 ? JOINPLAN_MAX + 1 : cap;
                cap = cap < need ? need : cap;
                char *b = realloc(o->buf, cap);
                if (!b) {
                        o->err = -ENOMEM;
                        return;
                }
                o->buf = b;
                o->cap = cap;
        }
}

/* A text value with its control bytes and '%' as %XX: one line whatever it
 * holds (an environment value may hold a newline; it must never become an
 * item of its own). */
static void put_text(struct out *o, const char *key, const char *s)
{
        put(o, "%s ", key);
        for (; *s && !o->err; s++) {
                unsigned char c = (unsigned char)*s;
                if (c < 0x20 || c == 0x7f || c == '%')
                        put(o, "%%%02x", c);
                else
                        put(o, "%c", c);
        }
        put(o, "\n");
}

static void put_bpf(struct out *o, const char *key, const struct rf_seccomp_plan *sp)
{
        const unsigned char *b = (const unsigned char *)sp->filter;
        size_t n = (size_t)sp->len * sizeof(struct sock_filter);
        if (!sp->filter || !sp->len)
                return;
        put(o, "%s ", key);
        for (size_t i = 0; i < n && !o->err; i++)
                put(o, "%02x", b[i]);
        put(o, "\n");
}

int joinplan_format(const struct rf_plan *p, char **out, size_t *len)
{
        struct out o = {0};
        const struct rf_landlock_plan *ll = &p->landlock;

        put(&o, "rfjoin 1\nids %u %u %d\n", (unsigned)p->uid, (unsigned)p->gid,
            p->map_as_root ? 1 : 0);
        put(&o, "limits %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->nofile, p->fsize,
            p->nproc_fallback);
        if (p->cwd)
                put_text(&o, "cwd", p->cwd);
        if (p->path_env)
                put_text(&o, "path", p->path_env);
        for (size_t i = 0; p->envp && p->envp[i]; i++)
                put_text(&o, "env", p->envp[i]);
        put(&o, "landlock %d %" PRIx64 " %" PRIx64 "\n", ll->abi, ll->handled_fs, ll->scoped);
        for (size_t i = 0; i < ll->n_rules; i++) {
                char key[40];
                snprintf(key, sizeof key, "rule %" PRIx64 " %d", ll->rules[i].access,
                         ll->rules[i].optional ? 1 : 0);
                put_text(&o, key, ll->rules[i].path);
        }
        put_bpf(&o, "bpf", &p->seccomp);
        put_bpf(&o, "bpfx", &p->seccomp_extra);
        put(&o, "end\n");
        if (o.err) {
                free(o.buf);
                return o.err;
        }
        *out = o.buf;
        *len = o.len;
        return 0;
}

/* ---- reading ---------------------------------------------------------------- */

static int bad(struct rf_error *err, size_t line, const char *why)
{
        return rf_error_set(err, -EBADMSG, "join plan, line %zu: %s", line, why);
}

/* A text value: 1..JOINPLAN_VALUE_MAX bytes, no control byte. */
static bool text_ok(const char *s, size_t n)
{
        if (n == 0 || n > JOINPLAN_VALUE_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return true;
}

static int hexval(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A text value (n bytes, %XX-escaped) decoded into a string the plan owns
 * (*out). 0, -EBADMSG for a bad or NUL escape, -ENOMEM. */
static int own(struct rf_plan *p, const char *s, size_t n, char **out)
{
        char *c = malloc(n + 1);
        size_t o = 0;
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (s[i] != '%') {
                        c[o++] = s[i];
                        continue;
                }
                int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = i + 2 < n ? hexval(s[i + 2]) : -1;
                if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                        free(c);
                        return -EBADMSG;
                }
                c[o++] = (char)(hi * 16 + lo);
                i += 2;
        }
        c[o] = '\0';
        return (*out = plan_own(p, c)) ? 0 : -ENOMEM;
}

/* Unsigned numbers of a line, space-separated, base 10 or 16, each <= max. */
static int numbers(const char *s, size_t n, int base, uint64_t *v, size_t count, uint64_t max)
{
        size_t i = 0;
        for (size_t k = 0; k < count; k++) {
                if (k && (i >= n || s[i++] != ' '))
                        return -1;
                uint64_t x = 0;
                size_t start = i;
                for (; i < n && s[i] != ' '; i++) {
                        int d = s[i] >= '0' && s[i] <= '9'                 ? s[i] - '0'
                                : base == 16 && s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                                                                           : -1;
                        if (d < 0 || x > (max - (uint64_t)d) / (uint64_t)base)
                                return -1;
                        x = x * (uint64_t)base + (uint64_t)d;
                }
                if (i == start || i - start > 20)
                        return -1;
                v[k] = x;
        }
        return (int)i;
}

static int bpf_of(const char *s, size_t n, struct rf_seccomp_plan *sp)
{
        size_t bytes = n / 2;
        if (sp->filter || n == 0 || n % 2 || bytes % sizeof(struct sock_filter) ||
            bytes / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -EBADMSG;
        unsigned char *b = malloc(bytes);
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < bytes; i++) {
                int v = 0;
                for (int h = 0; h < 2; h++) {
                        char c = s[2 * i + (size_t)h];
                        int d = hexval(c);
                        if (d < 0) {
                                free(b);
                                return -EBADMSG;
                        }
                        v = v * 16 + d;
                }
                b[i] = (unsigned char)v;
        }
        sp->filter = b;
        sp->len = (unsigned short)(bytes / sizeof(struct sock_filter));
        return 0;
}

int joinplan_parse(const char *buf, size_t len, struct rf_plan *p, struct rf_error *err)
{
        size_t n_env = 0, lineno = 0;
        bool head = false, ids = false, limits = false, landlock = false, end = false;

        if (len > JOINPLAN_MAX)
                return rf_error_set(err, -E2BIG, "join plan: longer than %d bytes", JOINPLAN_MAX);
        p->envp = calloc(JOINPLAN_ENV_MAX + 1, sizeof *p->envp);
        if (!p->envp)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                const char *l = buf + i, *nl = memchr(l, '\n', len - i);
                if (!nl)
                        return bad(err, lineno + 1, "no newline at the end");
                size_t n = (size_t)(nl - l);
                i += n + 1;
                lineno++;
                if (end)
                        return bad(err, lineno, "after end");
                const char *sp = memchr(l, ' ', n);
                size_t kl = sp ? (size_t)(sp - l) : n;
                const char *v = sp ? sp + 1 : l + n;
                size_t vn = sp ? n - kl - 1 : 0;
                uint64_t num[3];
#define KEY(k) (kl == sizeof(k) - 1 && !memcmp(l, k, kl))
                if (!head) {
                        if (!KEY("rfjoin") || vn != 1 || v[0] != '1')
                                return bad(err, lineno, "not a join plan of version 1");
                        head = true;
                } else if (KEY("ids")) {
                        if (ids || numbers(v, vn, 10, num, 3, UINT32_MAX) != (int)vn || num[2] > 1)
                                return bad(err, lineno, "ids: UID GID 0|1");
                        p->uid = (uid_t)num[0];
                        p->gid = (gid_t)num[1];
                        p->map_as_root = num[2];
                        ids = true;
                } else if (KEY("limits")) {
                        if (limits || numbers(v, vn, 10, num, 3, UINT64_MAX) != (int)vn)
                                return bad(err, lineno, "limits: NOFILE FSIZE NPROC");
                        p->nofile = num[0], p->fsize = num[1], p->nproc_fallback = num[2];
                        limits = true;
                } else if (KEY("cwd") || KEY("path")) {
                        char **slot = KEY("cwd") ? &p->cwd : &p->path_env;
                        if (*slot || !text_ok(v, vn) || (KEY("cwd") && v[0] != '/'))
                                return bad(err, lineno, "cwd or path: once, printable");
                        int r = own(p, v, vn, slot);
                        if (r < 0)
                                return r == -ENOMEM ? r : bad(err, lineno, "a bad escape");
                } else if (KEY("env")) {
                        const char *eq = memchr(v, '=', vn);
                        if (n_env >= JOINPLAN_ENV_MAX || !eq || eq == v || !text_ok(v, vn) ||
                            memchr(v, '%', (size_t)(eq - v)))
                                return bad(err, lineno, "env: NAME=VALUE");
                        size_t nl2 = (size_t)(eq - v) + 1;
                        for (size_t k = 0; k < n_env; k++)
                                if (!strncmp(p->envp[k], v, nl2))
                                        return bad(err, lineno, "env: a name twice");
                        int r = own(p, v, vn, &p->envp[n_env]);
                        if (r < 0)
                                return r == -ENOMEM ? r : bad(err, lineno, "a bad escape");
                        n_env++;
                } else if (KEY("landlock")) {
                        struct rf_landlock_plan *ll = &p->landlock;
                        int k = numbers(v, vn, 10, num, 1, 64);
                        if (landlock || k < 0 || (size_t)k >= vn || v[k] != ' ' ||
                            numbers(v + k + 1, vn - (size_t)k - 1, 16, num + 1, 2, UINT64_MAX) !=
                                    (int)(vn - (size_t)k - 1))
                                return bad(err, lineno, "landlock: ABI HANDLED SCOPED");
                        ll->abi = (int)num[0];
                        ll->handled_fs = num[1];
                        ll->scoped = num[2];
                        landlock = true;
                } else if (KEY("rule")) {
                        struct rf_landlock_plan *ll = &p->landlock;
                        int k = numbers(v, vn, 16, num, 1, UINT64_MAX);
                        if (!landlock || ll->n_rules >= JOINPLAN_RULES_MAX || k < 0 ||
                            (size_t)k + 3 >= vn || v[k] != ' ' ||
                            (v[k + 1] != '0' && v[k + 1] != '1') || v[k + 2] != ' ' ||
                            v[k + 3] != '/' || !text_ok(v + k + 3, vn - (size_t)k - 3) ||
                            (num[0] | ll->handled_fs) != ll->handled_fs)
                                return bad(err, lineno,
                                           "rule: ACCESS 0|1 /PATH within the handled");
                        struct rf_landlock_rule *rule = &ll->rules[ll->n_rules];
                        char *path;
                        int r = own(p, v + k + 3, vn - (size_t)k - 3, &path);
                        if (r < 0)
                                return r == -ENOMEM ? r : bad(err, lineno, "a bad escape");
                        rule->path = path;
                        rule->access = num[0];
                        rule->optional = v[k + 1] == '1';
                        ll->n_rules++;
                } else if (KEY("bpf") || KEY("bpfx")) {
                        int r = bpf_of(v, vn, KEY("bpf") ? &p->seccomp : &p->seccomp_extra);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return bad(err, lineno, "bpf: once, whole instructions in hex");
                } else if (KEY("end") && vn == 0) {
                        end = true;
                } else
                        return bad(err, lineno, "an unknown item");
#undef KEY
        }
        if (!end || !ids || !limits || !landlock || !p->cwd || !p->seccomp.filter)
                return rf_error_set(err, -EBADMSG,
                                    "join plan: incomplete (ids, limits, cwd, landlock, bpf, end)");
        return 0;
}
