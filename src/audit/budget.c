/*
 * budget.c — per-run audit budgets and coalescing. See budget.h.
 *
 * Pure: no I/O, no clock of its own. A flooding run spends only its own
 * bucket; the slots are a fixed array, so neither memory nor the number of
 * summary records grows with what the run sends.
 */
#include <stddef.h>
#include <string.h>

#include "audit/budget.h"

void audit_budget_init(struct audit_budget *b, const struct audit_budget_cfg *cfg, int64_t now_ms)
{
        memset(b, 0, offsetof(struct audit_budget, slot));
        if (cfg)
                b->cfg = *cfg;
        if (!b->cfg.rate)
                b->cfg.rate = AUDIT_BUDGET_RATE;
        if (!b->cfg.burst)
                b->cfg.burst = AUDIT_BUDGET_BURST;
        if (!b->cfg.bytes)
                b->cfg.bytes = AUDIT_BUDGET_BYTES;
        if (!b->cfg.coalesce_window_ms)
                b->cfg.coalesce_window_ms = AUDIT_COALESCE_WINDOW_MS;
        b->tokens_milli = (int64_t)b->cfg.burst * 1000;
        b->refill_ms = now_ms;
}

static void refill(struct audit_budget *b, int64_t now_ms)
{
        if (now_ms <= b->refill_ms)
                return;
        int64_t add = (now_ms - b->refill_ms) * (int64_t)b->cfg.rate; /* ms × ev/s = milli-tokens */
        int64_t cap = (int64_t)b->cfg.burst * 1000;
        b->tokens_milli = add > cap - b->tokens_milli ? cap : b->tokens_milli + add;
        b->refill_ms = now_ms;
}

static bool slot_matches(const struct audit_coalesced *s, const char *event, const char *key)
{
        return s->used && !strcmp(s->event, event) && !strcmp(s->key, key);
}

/* The slot of (event, key) whose window is still open at now_ms. */
static struct audit_coalesced *slot_find(struct audit_budget *b, const char *event, const char *key,
                                         int64_t now_ms)
{
        for (size_t i = 0; i < b->n_slots; i++)
                if (slot_matches(&b->slot[i], event, key) && now_ms < b->slot[i].until_ms)
                        return &b->slot[i];
        return NULL;
}

/* A free slot, else a never used one, else the one whose window ends
 * first. */
static struct audit_coalesced *slot_take(struct audit_budget *b)
{
        struct audit_coalesced *old = &b->slot[0];
        for (size_t i = 0; i < b->n_slots; i++)
                if (!b->slot[i].used)
                        return &b->slot[i];
        if (b->n_slots < AUDIT_COALESCE_SLOTS)
                return &b->slot[b->n_slots++];
        for (size_t i = 0; i < AUDIT_COALESCE_SLOTS; i++) {
                if (!b->slot[i].used)
                        return &b->slot[i];
                if (b->slot[i].until_ms < old->until_ms)
                        old = &b->slot[i];
        }
        return old;
}

static enum audit_verdict refuse(struct audit_budget *b)
{
        b->refused++;
        if (!b->throttled)
                b->throttle_new = true;
        b->throttled = true;
        return AB_REFUSE;
}

enum audit_verdict audit_budget_admit(struct audit_budget *b, const char *event,
                                      const char *coalesce_key, size_t bytes, int64_t now_ms)
{
        bool coalescible = coalesce_key && strlen(event) < AUDIT_COALESCE_EVENT_MAX &&
                           strlen(coalesce_key) < AUDIT_COALESCE_KEY_MAX;

        if (coalescible) {
                struct audit_coalesced *s = slot_find(b, event, coalesce_key, now_ms);
                if (s) {
                        if (s->count == 0)
                                s->first_ms = now_ms;
                        s->count++;
                        s->last_ms = now_ms;
                        b->coalesced++;
                        return AB_COALESCE;
                }
        }
        refill(b, now_ms);
        if (b->tokens_milli < 1000 || bytes > b->cfg.bytes - b->bytes_used)
                return refuse(b);
        b->tokens_milli -= 1000;
        b->bytes_used += bytes;
        b->written++;
        b->throttled = false;
        if (coalescible) {
                /* an expired slot of the same pair with repeats pending is
                 * left for audit_budget_expired: a new slot opens the window */
                struct audit_coalesced *s = slot_take(b);
                memset(s, 0, sizeof *s);
                strcpy(s->event, event);
                strcpy(s->key, coalesce_key);
                s->until_ms = now_ms + b->cfg.coalesce_window_ms;
                s->used = true;
        }
        return AB_WRITE;
}

struct audit_coalesced *audit_budget_expired(struct audit_budget *b, int64_t now_ms)
{
        for (size_t i = 0; i < b->n_slots; i++) {
                struct audit_coalesced *s = &b->slot[i];
                if (!s->used || now_ms < s->until_ms)
                        continue;
                if (s->count > 0)
                        return s;
                s->used = false; /* a window that saw no repeats: just free it */
        }
        return NULL;
}

void audit_budget_summary_done(struct audit_budget *b, struct audit_coalesced *s, size_t bytes)
{
        b->bytes_used +=
                bytes < b->cfg.bytes - b->bytes_used ? bytes : b->cfg.bytes - b->bytes_used;
        memset(s, 0, sizeof *s);
}

int64_t audit_budget_next_ms(const struct audit_budget *b, int64_t now_ms)
{
        int64_t best = -1;
        for (size_t i = 0; i < b->n_slots; i++) {
                const struct audit_coalesced *s = &b->slot[i];
                if (!s->used || s->count == 0)
                        continue;
                int64_t d = s->until_ms > now_ms ? s->until_ms - now_ms : 0;
                if (best < 0 || d < best)
                        best = d;
        }
        return best;
}
