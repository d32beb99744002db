/*
 * grant.c — a run's grants: resolve, record, deliver, serve, revoke.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "audit/emit.h"
#include "egress/inject.h"
#include "policy/policy.h"
#include "secrets/grant.h"
#include "secrets/provider.h"
#include "secrets/secmem.h"
#include "shared/macro.h"

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct rf_grants *grants_free(struct rf_grants *g)
{
        if (!g)
                return NULL;
        for (size_t i = 0; g->g && i < g->n; i++) {
                g->g[i].value = secmem_free(g->g[i].value);
                secret_binding_clear(&g->g[i].b);
        }
        g->dirfd = safe_close(g->dirfd);
        if (g->mv)
                explicit_bzero(g->mv, g->cap * sizeof *g->mv);
        free(g->mv);
        free(g->g);
        free(g);
        return NULL;
}

/* Without a declared length, a placeholder as long as the value (when
 * that gives it 128 bits): responses are scrubbed to exactly the placeholder. */
static uint32_t ph_length(const struct secret_binding *b, size_t value_len)
{
        size_t pl = strlen(b->ph_prefix);
        if (b->ph_length)
                return b->ph_length;
        if (value_len >= pl + SECRET_PH_RANDOM_MIN && value_len <= SECRET_PH_LEN_MAX)
                return (uint32_t)value_len;
        return 0;
}

int grants_resolve(const struct rf_policy *pol, const char *state_dir, const char *key_path,
                   struct rf_grants **ret, size_t *failed, char *why, size_t why_len,
                   struct rf_error *err)
{
        char kp[4096];
        size_t total = 0;
        int r;

        *ret = NULL;
        *failed = SIZE_MAX;
        why[0] = '\0';
        if (pol->n_secrets == 0)
                return 0;
        /* sized by the policy's bindings: the tables of a run with one
         * secret stay a few pages (their zeroing is on the start path) */
        struct rf_grants *g = calloc(1, sizeof *g);
        if (!g)
                return rf_error_set(err, -ENOMEM, "out of memory");
        g->dirfd = -1;
        g->cap = pol->n_secrets;
        if (!(g->g = calloc(g->cap, sizeof *g->g)) || !(g->mv = calloc(g->cap, sizeof *g->mv))) {
                grants_free(g);
                return rf_error_set(err, -ENOMEM, "out of memory");
        }
        /* the master key: sealing (store:) and the keyed fingerprints */
        unsigned char *key = secmem_alloc(STORE_KEY_LEN);
        if (!key) {
                r = rf_error_set(err, negative_errno(), "cannot lock memory for secrets: %m");
                goto fail;
        }
        if (!key_path) {
                snprintf(kp, sizeof kp, "%s/%s", state_dir, STORE_KEY_FILE);
                key_path = kp;
        }
        if ((r = store_key_load(key_path, true, key, err)) < 0)
                goto fail;
        for (size_t i = 0; i < pol->n_secrets; i++) {
                struct grant *gr = &g->g[g->n];
                if ((r = secret_binding_copy(&gr->b, &pol->bindings[i])) < 0) {
                        r = rf_error_set(err, r, "out of memory");
                        goto fail;
                }
                g->n++;
                struct rf_error perr = {0};
                r = provider_resolve(&gr->b, state_dir, key, &gr->value, &gr->len, &gr->version,
                                     why, why_len, &perr);
                if (r == 0 && gr->b.delivery == SECRET_ENV && memchr(gr->value, '\0', gr->len)) {
                        snprintf(why, why_len,
                                 "the value contains a NUL byte (use file or broker)");
                        rf_error_set(&perr, -EINVAL, "%s", why);
                        r = -EINVAL;
                }
                if (r == 0 && gr->b.delivery == SECRET_INJECT) {
                        /* the value goes into a request header: no NUL, CR or
                         * LF (header splitting), and a header's size */
                        if (gr->len == 0 || gr->len > INJECT_VALUE_MAX ||
                            memchr(gr->value, '\0', gr->len) || memchr(gr->value, '\r', gr->len) ||
                            memchr(gr->value, '\n', gr->len)) {
                                snprintf(why, why_len,
                                         "an injected value must be 1-%d bytes without NUL, CR "
                                         "or LF",
                                         INJECT_VALUE_MAX);
                                rf_error_set(&perr, -EINVAL, "%s", why);
                                r = -EINVAL;
                        } else {
                                uint8_t rnd[SECRET_PH_LEN_MAX];
                                if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd ||
                                    inject_placeholder(rnd, sizeof rnd, gr->b.ph_prefix,
                                                       ph_length(&gr->b, gr->len), gr->placeholder,
                                                       sizeof gr->placeholder) < 0) {
                                        snprintf(why, why_len, "cannot make a placeholder");
                                        rf_error_set(&perr, -EIO, "%s", why);
                                        r = -EIO;
                                }
                                explicit_bzero(rnd, sizeof rnd);
                        }
                }
                if (r == 0 && (total += gr->len) > SECRET_TOTAL_MAX) {
                        snprintf(why, why_len, "the run's values exceed %d bytes",
                                 SECRET_TOTAL_MAX);
                        rf_error_set(&perr, -E2BIG, "%s", why);
                        r = -E2BIG;
                }
                if (r < 0) {
                        *failed = i;
                        r = rf_error_set(err, r, "secret %s (%s): %s", gr->b.name,
                                         secret_source_name(gr->b.source), perr.msg);
                        goto fail;
                }
                store_fingerprint(key, gr->value, gr->len, gr->fp);
                if (gr->b.ttl_ms)
                        gr->expires_ms = now_ms() + (int64_t)gr->b.ttl_ms;
                g->any_env |= gr->b.delivery == SECRET_ENV;
                g->any_file |= gr->b.delivery == SECRET_FILE;
                g->any_broker |= gr->b.delivery == SECRET_BROKER;
                g->any_inject |= gr->b.delivery == SECRET_INJECT;
                g->mv[g->n_mv++] = (struct mask_value){gr->value, gr->len, gr->b.name};
        }
        /* env: sources are read once; wipe them from our own environment
         * so no later fork (egress, init) carries them */
        for (size_t i = 0; i < g->n; i++) {
                if (g->g[i].b.source == SOURCE_ENV)
                        provider_wipe_env(g->g[i].b.key);
                /* a provider's own credential (VAULT_TOKEN, ...) unlocks more
                 * than this run's secrets: gone too */
                for (size_t k = 0; k < g->g[i].b.n_pass_env; k++)
                        provider_wipe_env(g->g[i].b.pass_env[k]);
        }
        secmem_free(key);
        *ret = g;
        return 0;
fail:
        secmem_free(key);
        grants_free(g);
        return r;
}

int grants_record(struct rf_grants *g, struct audit_emitter *ev, struct rf_error *err)
{
        g->ev = ev;
        for (size_t i = 0; i < g->n; i++) {
                const struct grant *gr = &g->g[i];
                char src[SECRET_TARGET_MAX + 16] = "";
                if (gr->b.source == SOURCE_STORE)
                        snprintf(src, sizeof src, "%s", gr->b.key);
                else if (gr->b.source == SOURCE_ENV)
                        snprintf(src, sizeof src, "%s", gr->b.key);
                else
                        snprintf(src, sizeof src, "%s", gr->b.argv[0]);
                struct audit_field f[] = {
                        {.key = "name", .type = AUDIT_STR, .s = gr->b.name},
                        {.key = "delivery",
                         .type = AUDIT_STR,
                         .s = secret_delivery_name(gr->b.delivery)},
                        {.key = "source", .type = AUDIT_STR, .s = secret_source_name(gr->b.source)},
                        {.key = "source_ref", .type = AUDIT_STR, .s = src},
                        {.key = "secret_version", .type = AUDIT_UINT, .u = gr->version},
                        {.key = "fingerprint", .type = AUDIT_STR, .s = gr->fp},
                        {.key = "ttl_ms", .type = AUDIT_UINT, .u = gr->b.ttl_ms},
                        {.key = "dev_only", .type = AUDIT_BOOL, .b = gr->b.source == SOURCE_ENV},
                };
                /* durable with run.start, in the group commit made before
                 * the command may start (cmd_run's register_run) */
                int64_t r = audit_emit(ev, "secret.grant", NULL, NULL, f, ARRAY_SIZE(f), 0, err);
                if (r < 0)
                        return (int)r;
        }
        return 0;
}

#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447
#endif

static int put_rec(unsigned char *m, size_t *off, uint8_t kind, const char *name, size_t nl,
                   const void *a, size_t al, const void *b2, size_t bl, bool nul)
{
        uint32_t dl = (uint32_t)(al + bl + (nul ? 1 : 0)), nlen = (uint32_t)nl;
        m[*off] = kind;
        memset(m + *off + 1, 0, 3);
        memcpy(m + *off + 4, &nlen, 4);
        memcpy(m + *off + 8, &dl, 4);
        *off += 12;
        memcpy(m + *off, name, nl);
        *off += nl;
        memcpy(m + *off, a, al);
        *off += al;
        if (bl)
                memcpy(m + *off, b2, bl);
        *off += bl;
        if (nul)
                m[(*off)++] = '\0';
        return 0;
}

int grants_blob(const struct rf_grants *g, struct rf_error *err)
{
        size_t size = 8, count = 0;
        for (size_t i = 0; i < g->n; i++) {
                const struct grant *gr = &g->g[i];
                if (gr->b.delivery == SECRET_BROKER)
                        continue;
                if (gr->b.delivery == SECRET_INJECT)
                        size += 12 + strlen(gr->b.env) + 1 + strlen(gr->placeholder) + 1;
                else
                        size += 12 + strlen(gr->b.name) + 2 + gr->len + 1;
                count++;
        }
        if (count == 0)
                return -1;
        /* memfd_secret: pages outside the kernel's direct map, locked;
         * else an ordinary sealed memfd */
        int fd = (int)syscall(__NR_memfd_secret, (unsigned)O_CLOEXEC);
        if (fd < 0)
                fd = memfd_create("ringfence-secrets", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return rf_error_set(err, negative_errno(), "memfd: %m");
        if (ftruncate(fd, (off_t)size) < 0) {
                int r = rf_error_set(err, negative_errno(), "memfd: %m");
                close(fd);
                return r;
        }
        unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
                int r = rf_error_set(err, negative_errno(), "memfd: %m");
                close(fd);
                return r;
        }
        size_t off = 8;
        uint32_t c32 = (uint32_t)count, s32 = (uint32_t)size;
        memcpy(m, &c32, 4);
        memcpy(m + 4, &s32, 4);
        for (size_t i = 0; i < g->n; i++) {
                const struct grant *gr = &g->g[i];
                size_t nl = strlen(gr->b.name);
                if (gr->b.delivery == SECRET_ENV) {
                        /* data: "NAME=value\0", ready to be an envp entry */
                        char head[SECRET_TARGET_MAX + 2];
                        snprintf(head, sizeof head, "%s=", gr->b.name);
                        put_rec(m, &off, 1, "", 0, head, nl + 1, gr->value, gr->len, true);
                } else if (gr->b.delivery == SECRET_INJECT) {
                        /* the run holds the placeholder, never the value */
                        char head[SECRET_TARGET_MAX + 2];
                        size_t el = strlen(gr->b.env);
                        snprintf(head, sizeof head, "%s=", gr->b.env);
                        put_rec(m, &off, 1, "", 0, head, el + 1, gr->placeholder,
                                strlen(gr->placeholder), true);
                } else if (gr->b.delivery == SECRET_FILE) {
                        put_rec(m, &off, 2, gr->b.name, nl + 1, gr->value, gr->len, NULL, 0, false);
                }
        }
        munmap(m, size);
        (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
        return fd;
}

size_t grants_inject(const struct rf_grants *g, struct inject_secret *out, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; g && i < g->n && n < max; i++) {
                const struct grant *gr = &g->g[i];
                if (gr->b.delivery != SECRET_INJECT)
                        continue;
                struct inject_secret *s = &out[n++];
                memset(s, 0, sizeof *s);
                snprintf(s->name, sizeof s->name, "%s", gr->b.name);
                s->version = gr->version;
                snprintf(s->placeholder, sizeof s->placeholder, "%s", gr->placeholder);
                s->ph_len = strlen(s->placeholder);
                s->value = gr->value;
                s->len = gr->len;
                s->hosts = gr->b.hosts;
                s->n_hosts = gr->b.n_hosts;
                snprintf(s->header, sizeof s->header, "%s", gr->b.header);
                snprintf(s->query, sizeof s->query, "%s", gr->b.query);
                snprintf(s->basic, sizeof s->basic, "%s", gr->b.basic);
                s->body = gr->b.body;
                s->exfil_kill = gr->b.exfil_kill;
        }
        return n;
}

bool grants_inject_live(const struct rf_grants *g, const char *name)
{
        for (size_t i = 0; g && i < g->n; i++)
                if (g->g[i].b.delivery == SECRET_INJECT && !strcmp(g->g[i].b.name, name))
                        return !g->g[i].revoked;
        return false;
}

void grants_set_dir(struct rf_grants *g, int dirfd)
{
        safe_close(g->dirfd);
        g->dirfd = dirfd;
}

static void record(struct rf_grants *g, const char *event, const char *coalesce, const char *what,
                   const struct audit_field *f, size_t n, int64_t *seq)
{
        struct rf_error e = {0};
        int64_t r = g->ev ? audit_emit(g->ev, event, coalesce, what, f, n, 0, &e) : -ENOENT;
        if (seq)
                *seq = r;
}

int grants_read(struct rf_grants *g, const char *name, const unsigned char **value, size_t *len,
                enum broker_err *code)
{
        struct grant *gr = NULL;
        int64_t now = now_ms();
        for (size_t i = 0; i < g->n; i++)
                if (g->g[i].b.delivery == SECRET_BROKER && !strcmp(g->g[i].b.name, name))
                        gr = &g->g[i];
        if (gr && !gr->revoked && gr->expires_ms && now >= gr->expires_ms)
                grants_tick(g);
        const char *reason = !gr ? "not granted" : gr->revoked ? "revoked" : NULL;
        if (reason) {
                *code = !gr                                       ? BROKER_E_UNKNOWN
                        : gr->expires_ms && now >= gr->expires_ms ? BROKER_E_EXPIRED
                                                                  : BROKER_E_REVOKED;
                struct audit_field f[] = {
                        {.key = "name", .type = AUDIT_STR, .s = name},
                        {.key = "reason", .type = AUDIT_STR, .s = broker_err_name(*code)},
                };
                record(g, "secret.denied", name, "denied reads of", f, ARRAY_SIZE(f), NULL);
                return -1;
        }
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = gr->b.name},
                {.key = "secret_version", .type = AUDIT_UINT, .u = gr->version},
                {.key = "fingerprint", .type = AUDIT_STR, .s = gr->fp},
                {.key = "read", .type = AUDIT_UINT, .u = gr->reads + 1},
        };
        int64_t seq;
        record(g, "secret.read", NULL, NULL, f, ARRAY_SIZE(f), &seq);
        if (seq <= 0) { /* no record, no read */
                *code = BROKER_E_REFUSED;
                return -1;
        }
        gr->reads++;
        *value = gr->value;
        *len = gr->len;
        return 0;
}

static void revoke_one(struct rf_grants *g, struct grant *gr, const char *reason)
{
        if (gr->revoked)
                return;
        gr->revoked = true;
        const char *effect = "none";
        if (gr->b.delivery == SECRET_FILE) {
                effect = "file removed";
                if (g->dirfd < 0 || unlinkat(g->dirfd, gr->b.name, 0) < 0)
                        effect = errno == ENOENT ? "file already gone" : "file not removed";
        } else if (gr->b.delivery == SECRET_BROKER)
                effect = "reads refused";
        else if (gr->b.delivery == SECRET_INJECT)
                effect = "injection stops (a new egress process without the value)";
        else
                effect = "env stays in running processes";
        struct audit_field f[] = {
                {.key = "name", .type = AUDIT_STR, .s = gr->b.name},
                {.key = "delivery", .type = AUDIT_STR, .s = secret_delivery_name(gr->b.delivery)},
                {.key = "reason", .type = AUDIT_STR, .s = reason},
                {.key = "effect", .type = AUDIT_STR, .s = effect},
                {.key = "reads", .type = AUDIT_UINT, .u = gr->reads},
        };
        record(g, "secret.revoke", NULL, NULL, f, ARRAY_SIZE(f), NULL);
}

int grants_revoke(struct rf_grants *g, const char *name, const char *reason)
{
        int n = 0;
        for (size_t i = 0; g && i < g->n; i++)
                if (!strcmp(g->g[i].b.name, name) && !g->g[i].revoked) {
                        revoke_one(g, &g->g[i], reason);
                        n++;
                }
        return n;
}

int64_t grants_next_ms(const struct rf_grants *g)
{
        int64_t next = -1, now = now_ms();
        for (size_t i = 0; g && i < g->n; i++) {
                const struct grant *gr = &g->g[i];
                if (gr->revoked || !gr->expires_ms)
                        continue;
                int64_t d = gr->expires_ms > now ? gr->expires_ms - now : 0;
                if (next < 0 || d < next)
                        next = d;
        }
        return next;
}

void grants_tick(struct rf_grants *g)
{
        int64_t now = now_ms();
        for (size_t i = 0; g && i < g->n; i++)
                if (!g->g[i].revoked && g->g[i].expires_ms && now >= g->g[i].expires_ms)
                        revoke_one(g, &g->g[i], "ttl");
}

void grants_end(struct rf_grants *g)
{
        for (size_t i = 0; g && i < g->n; i++)
                revoke_one(g, &g->g[i], "run ended");
        if (g)
                g->dirfd = safe_close(g->dirfd);
}

int grants_redact(void *ctx, const char *s, char **ret)
{
        const struct rf_grants *g = ctx;
        size_t len;
        return redact(s, strlen(s), g->mv, g->n_mv, ret, &len);
}
