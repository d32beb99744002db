/*
 * budget.h — per-run audit budgets and coalescing (pure; no I/O).
 *
 * Every run owns one struct audit_budget, kept by the process that
 * supervises it, so what one run spends can never be charged to another.
 * It decides, for each event the run causes, one of:
 *
 *   AB_WRITE     write the record;
 *   AB_COALESCE  a repeat of a recent (event, key) — count it, write nothing
 *                now; the count is written later as one summary record
 *                ("37 refused queries for evil.example");
 *   AB_REFUSE    the run is over its event rate or byte budget: write
 *                nothing; an action that needs a record is refused.
 *
 * Rate: a token bucket (burst events, refilled at rate per second). Bytes:
 * a total per run; once spent, the run's remaining events are refused
 * until it ends. Only events the caller marks coalescible (refusals, whose
 * action does not proceed anyway) are ever coalesced; an event that lets
 * an action proceed is always written or, over budget, refused.
 *
 * Time is passed in (monotonic ms), so the rules are unit-testable.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_BUDGET_RATE        500           /* events per second, sustained */
#define AUDIT_BUDGET_BURST       2000          /* events at once */
#define AUDIT_BUDGET_BYTES       (64ULL << 20) /* record bytes per run */
#define AUDIT_COALESCE_WINDOW_MS 10000         /* repeats within this are counted */
#define AUDIT_COALESCE_SLOTS     256           /* distinct (event, key) pairs tracked */
#define AUDIT_COALESCE_KEY_MAX   256           /* bytes of a coalescing key */
#define AUDIT_COALESCE_EVENT_MAX 64            /* bytes of a coalescible event name */

enum audit_verdict {
        AB_WRITE,
        AB_COALESCE,
        AB_REFUSE,
        _AB_MAX,
        _AB_INVALID = -22,
};

struct audit_budget_cfg {
        uint32_t rate;               /* events/s; 0 = AUDIT_BUDGET_RATE */
        uint32_t burst;              /* 0 = AUDIT_BUDGET_BURST */
        uint64_t bytes;              /* 0 = AUDIT_BUDGET_BYTES */
        uint32_t coalesce_window_ms; /* 0 = AUDIT_COALESCE_WINDOW_MS */
};

struct audit_coalesced {
        char event[AUDIT_COALESCE_EVENT_MAX];
        char key[AUDIT_COALESCE_KEY_MAX];
        int64_t first_ms, last_ms; /* monotonic, of the counted repeats */
        int64_t until_ms;          /* window end (monotonic) */
        uint64_t count;            /* repeats not yet written */
        bool used;
};

struct audit_budget {
        struct audit_budget_cfg cfg;
        int64_t tokens_milli; /* tokens × 1000 */
        int64_t refill_ms;    /* last refill (monotonic ms) */
        uint64_t bytes_used;
        uint64_t written, coalesced, refused; /* totals for the run's summary */
        bool throttled;                       /* refusing since the last written record */
        bool throttle_new;                    /* throttled just began: the caller records it */
        size_t n_slots; /* slot[0, n_slots) have been taken at least once; the rest are
                         * never read (not even zeroed: a run that records nothing
                         * coalescible touches none of their pages) */
        struct audit_coalesced slot[AUDIT_COALESCE_SLOTS];
};

/* audit_budget_init — a full bucket at `now_ms`; zero fields of cfg take the defaults. */
void audit_budget_init(struct audit_budget *b, const struct audit_budget_cfg *cfg, int64_t now_ms);

/*
 * audit_budget_admit — decide about one event of `bytes` record bytes.
 * With `coalesce_key` (non-NULL: the event may be coalesced) a repeat of a
 * (event, key) written less than the window ago is AB_COALESCE. AB_WRITE
 * spends one token and the bytes and, when coalescible, opens a window for
 * (event, key) (the oldest slot is reused when all are taken; its pending
 * count is then lost to the summary but still counted in `coalesced`).
 * AB_REFUSE sets `throttled`; when it turns true `throttle_new` is set too,
 * and the caller writes one `audit.throttled` record (charged bytes only)
 * and clears it. `throttled` ends with the next AB_WRITE. Pure.
 */
enum audit_verdict audit_budget_admit(struct audit_budget *b, const char *event,
                                      const char *coalesce_key, size_t bytes, int64_t now_ms);

/*
 * audit_budget_expired — the next slot whose window has ended with repeats
 * still uncounted, or NULL. The caller writes the summary (it is charged
 * only bytes, not a token: summaries are bounded by the slots) and calls
 * audit_budget_summary_done. Pure.
 */
struct audit_coalesced *audit_budget_expired(struct audit_budget *b, int64_t now_ms);

/* audit_budget_summary_done — the summary of `s` was written (`bytes` long): forget it. */
void audit_budget_summary_done(struct audit_budget *b, struct audit_coalesced *s, size_t bytes);

/*
 * audit_budget_next_ms — ms from `now_ms` until the earliest window with
 * pending repeats ends (0 if one already has), or -1 if none. Pure.
 */
int64_t audit_budget_next_ms(const struct audit_budget *b, int64_t now_ms);
