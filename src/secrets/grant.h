/*
 * grant.h — a run's secret grants, from resolution to revocation.
 *
 * One struct rf_grants per run, held by its supervisor:
 *
 *   grants_resolve()   every binding's value, before anything of the run
 *                      exists (a provider failure refuses the run)
 *   grants_record()    secret.grant per binding (name, source kind,
 *                      delivery, version, keyed fingerprint)
 *   grants_blob()      the env and file values for the run's init, in a
 *                      sealed memfd (memfd_secret where the kernel has it)
 *   grants_read()      a broker read: checked against the live grant,
 *                      recorded (secret.read / secret.denied) first
 *   grants_revoke()    now: broker reads refused, the file unlinked
 *   grants_tick()      ttl expiry
 *   grants_end()       at the run's end or kill: revoke everything, wipe
 *
 * Values live in secret memory (secmem.h) only; they are kept for the
 * run's life because redaction (audit records) and output masking need
 * them, and wiped at grants_free().
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/binding.h"
#include "secrets/broker.h"
#include "secrets/mask.h"
#include "secrets/store.h"
#include "shared/error.h"

struct audit_emitter;
struct rf_policy;

struct grant {
        struct secret_binding b;
        unsigned char *value; /* secret memory */
        size_t len;
        uint32_t version;
        char fp[STORE_FP_HEX + 1];
        bool revoked;
        int64_t expires_ms; /* CLOCK_MONOTONIC ms; 0 = with the run */
        uint64_t reads;
        char placeholder[SECRET_PH_LEN_MAX + 1]; /* inject: what the run holds instead */
};

struct rf_grants {
        struct grant *g; /* owned: n of them, room for cap (the policy's bindings) */
        size_t n, cap;
        int dirfd;                /* the run's /run/secrets (writable clone), or -1 */
        struct audit_emitter *ev; /* borrowed, set by grants_record */
        struct mask_value *mv;    /* owned: n_mv of them, room for cap */
        size_t n_mv;
        bool any_env, any_file, any_broker, any_inject;
};

/*
 * grants_resolve — the policy's bindings resolved (provider.h). On a
 * provider failure returns -errno with `err` naming the secret and the
 * provider's error, *failed the index of that binding and `why` the short
 * reason for the secret.provider_error record. A policy without bindings
 * gives *ret NULL. `key_path` NULL: STATE_DIR/secrets.key.
 */
int grants_resolve(const struct rf_policy *pol, const char *state_dir, const char *key_path,
                   struct rf_grants **ret, size_t *failed, char *why, size_t why_len,
                   struct rf_error *err);

/* grants_record — secret.grant for every binding through `ev` (kept for
 * later records); must succeed before the run starts. Appended, not
 * synced: the caller makes them durable before the run's command can start
 * (one group commit with run.start). 0 or -errno. */
int grants_record(struct rf_grants *g, struct audit_emitter *ev, struct rf_error *err);

/* grants_blob — a memfd holding the env and file deliveries for init
 * (format in launch.c's read_secrets). Returns the fd (O_CLOEXEC) or -1
 * when there is nothing to deliver that way; -errno on failure. */
int grants_blob(const struct rf_grants *g, struct rf_error *err);

/*
 * grants_inject — the run's injections for its egress process: up to max
 * entries of out (egress/inject.h) with name, version, placeholder, hosts
 * (borrowed from the grants), header and on_exfil; `value` points into the
 * grant's secret memory, which is wiped in any fork: egress_spawn copies
 * it across its own fork. Returns the count.
 */
struct inject_secret;
size_t grants_inject(const struct rf_grants *g, struct inject_secret *out, size_t max);

/* grants_inject_live — an injection named `name` is granted and not revoked
 * (nor past its ttl: grants_tick first). */
bool grants_inject_live(const struct rf_grants *g, const char *name);

/* grants_set_dir — the run's secrets directory fd (taken). */
void grants_set_dir(struct rf_grants *g, int dirfd);

/*
 * grants_read — a broker request for `name`: on success *value and *len point
 * into the grant (valid until the next revoke) and secret.read was
 * recorded; else the broker error to send (secret.denied recorded,
 * coalesced per name). Returns 0 or -1.
 */
int grants_read(struct rf_grants *g, const char *name, const unsigned char **value, size_t *len,
                enum broker_err *code);

/* grants_revoke — revoke the grant(s) named `name` (every delivery), now;
 * `reason` for the secret.revoke record. Returns how many were revoked. */
int grants_revoke(struct rf_grants *g, const char *name, const char *reason);

/* grants_next_ms — ms until a ttl expires (0 now), or -1. grants_tick revokes those due. */
int64_t grants_next_ms(const struct rf_grants *g);
void grants_tick(struct rf_grants *g);

/* grants_end — the run is over: revoke everything still granted. */
void grants_end(struct rf_grants *g);

/* grants_redact — audit_redact_fn over the bound values (ctx = grants). */
int grants_redact(void *ctx, const char *s, char **ret);

/* Wipe every value and free. Accepts NULL; returns NULL. */
struct rf_grants *grants_free(struct rf_grants *g);
static inline void grants_freep(struct rf_grants **g)
{
        *g = grants_free(*g);
}
