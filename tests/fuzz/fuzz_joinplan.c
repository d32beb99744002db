/*
 * fuzz_joinplan.c — libFuzzer target for joinplan_parse
 * (src/sandbox/joinplan.c), which `ringfence-oci exec` uses to read the
 * layers a joining process gets.
 *
 * The input is copied into a heap buffer of exactly its length (no NUL),
 * so a read past `len` is an ASan report. Beyond "no crash, no UB": an
 * accepted plan has a cwd, a seccomp program and no rule outside what its
 * ruleset handles, and writing it out and reading it back gives the same
 * plan (no value can turn into an item of its own).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/joinplan.h"

static size_t n_env(const struct rf_plan *p)
{
        size_t n = 0;
        while (p->envp && p->envp[n])
                n++;
        return n;
}

static void same(const struct rf_plan *a, const struct rf_plan *b)
{
        if (a->uid != b->uid || a->gid != b->gid || a->map_as_root != b->map_as_root ||
            a->nofile != b->nofile || a->fsize != b->fsize ||
            a->nproc_fallback != b->nproc_fallback || strcmp(a->cwd, b->cwd) ||
            !a->path_env != !b->path_env || (a->path_env && strcmp(a->path_env, b->path_env)) ||
            n_env(a) != n_env(b) || a->landlock.abi != b->landlock.abi ||
            a->landlock.handled_fs != b->landlock.handled_fs ||
            a->landlock.scoped != b->landlock.scoped ||
            a->landlock.n_rules != b->landlock.n_rules || a->seccomp.len != b->seccomp.len ||
            memcmp(a->seccomp.filter, b->seccomp.filter, a->seccomp.len * 8u) ||
            a->seccomp_extra.len != b->seccomp_extra.len ||
            (a->seccomp_extra.len &&
             memcmp(a->seccomp_extra.filter, b->seccomp_extra.filter, a->seccomp_extra.len * 8u)))
                abort();
        for (size_t i = 0; i < n_env(a); i++)
                if (strcmp(a->envp[i], b->envp[i]))
                        abort();
        for (size_t i = 0; i < a->landlock.n_rules; i++)
                if (strcmp(a->landlock.rules[i].path, b->landlock.rules[i].path) ||
                    a->landlock.rules[i].access != b->landlock.rules[i].access ||
                    a->landlock.rules[i].optional != b->landlock.rules[i].optional)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct rf_error err = {0};
        char *buf = malloc(size ? size : 1);
        struct rf_plan *p = plan_empty();
        if (!buf || !p)
                abort();
        memcpy(buf, data, size);
        if (joinplan_parse(buf, size, p, &err) == 0) {
                if (!p->cwd || p->cwd[0] != '/' || !p->seccomp.filter || !p->seccomp.len)
                        abort();
                for (size_t i = 0; i < p->landlock.n_rules; i++)
                        if ((p->landlock.rules[i].access | p->landlock.handled_fs) !=
                            p->landlock.handled_fs)
                                abort();
                char *text = NULL;
                size_t len = 0;
                if (joinplan_format(p, &text, &len) == 0) {
                        struct rf_plan *q = plan_empty();
                        if (!q || joinplan_parse(text, len, q, &err) != 0)
                                abort();
                        same(p, q);
                        plan_free(q);
                        free(text);
                }
        }
        plan_free(p);
        free(buf);
        return 0;
}
