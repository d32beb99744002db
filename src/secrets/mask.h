/*
 * mask.h — keeping bound secret values out of what a run prints and out of
 * what the audit log records.
 *
 * Two uses, one matching rule (leftmost match first, then the longest value
 * at that position; scanning resumes after the match):
 *
 *   1. masker_feed: `--mask-output` passes a run's stdout/stderr through a
 *      masker, which replaces every occurrence of a value by "***", also
 *      when the value arrives split across reads (bytes that may begin a
 *      value are held back until the next read decides).
 *   2. redact: a run-controlled string about to be recorded (a request
 *      path, a DNS name) has every occurrence of a value replaced by
 *      "[secret:NAME]", matched ASCII-case-insensitively since DNS names
 *      arrive lowercased.
 *
 * Values shorter than MASK_VALUE_MIN would match everywhere (and masking
 * them would reveal more than it hides); values longer than MASK_VALUE_MAX
 * are not expected in output. Both are ignored.
 *
 * Threat notes: this is a best-effort guard against accidental disclosure,
 * not a boundary. A run that knows a value can print it transformed
 * (base64, reversed, one byte per line) and no masker will see it. The
 * values are borrowed and never copied except in held-back output; the
 * caller keeps the masker in locked, non-dumpable memory and wipes it with
 * masker_wipe. Pure code: no allocation in the masker, no I/O, no logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define MASK_VALUES_MAX 64
#define MASK_VALUE_MIN                                                                             \
        4 /* shorter values are neither masked nor redacted (they would match everywhere) */
#define MASK_VALUE_MAX                                                                             \
        16384 /* longer values are neither masked nor redacted (a PEM key of RSA-8192 is ~6.4 KiB) \
               */
#define MASK_TEXT "***"
/* A recorder that cuts a long string ends it with this; redact() then also
 * hides what the cut left of a value's start there. */
#define REDACT_CUT_MARK "...(cut)"

/* One secret value. Everything is borrowed; `name` is used by redact only. */
struct mask_value {
        const unsigned char *p;
        size_t len;
        const char *name;
};

/*
 * The streaming masker. Public so the caller can place it in locked,
 * non-dumpable memory; treat it as opaque. The values in v[] are borrowed
 * (the caller's buffers must outlive the masker); pending[] holds copies of
 * output bytes that may be the start of a value.
 */
struct masker {
        struct mask_value v[MASK_VALUES_MAX];
        size_t n;
        size_t max_len;          /* longest value kept */
        unsigned char first[32]; /* bitset of the values' first bytes */
        unsigned char pending[MASK_VALUE_MAX];
        size_t n_pending; /* held back: may be the start of a value */
};

/*
 * masker_init — keep the values of v[0..n) whose length is within
 * [MASK_VALUE_MIN, MASK_VALUE_MAX] (borrowed: they must outlive the
 * masker); at most MASK_VALUES_MAX. Returns how many were kept.
 */
size_t masker_init(struct masker *m, const struct mask_value *v, size_t n);

/*
 * masker_feed — pass n bytes of output through. Writes to `out` (capacity
 * at least n + MASK_VALUE_MAX) what can be emitted now, every complete
 * value replaced by MASK_TEXT; bytes that might begin a value are held back
 * until the next call. `final` true: nothing more will come — flush
 * everything held back (a partial value at the very end is emitted as is).
 * Returns the number of bytes written to out. Overlapping matches: leftmost
 * first, then the longest value at that position; scanning resumes after
 * the match. Feeding a stream in any chunking gives the same output as one
 * final feed of the whole stream.
 */
size_t masker_feed(struct masker *m, const void *in, size_t n, void *out, bool final);

/* masker_wipe — explicit_bzero the held-back bytes and forget the values. */
void masker_wipe(struct masker *m);

/*
 * redact — copy s[0..len) replacing every ASCII-case-insensitive occurrence
 * of any value of v[0..n) (lengths within [MIN,MAX] only) by
 * "[secret:NAME]" (NAME = that value's name, a NULL name counts as "";
 * leftmost-longest, non-overlapping). Returns 0 and *ret = NULL if nothing
 * matched; 1 and *ret = a malloc'd NUL-terminated copy with *ret_len its
 * length (the caller frees it); -ENOMEM. A NUL byte inside s is copied as
 * is (the caller decides). Output length is bounded:
 * len + (number of matches) * (9 + strlen(name) + 1). A string ending in
 * REDACT_CUT_MARK was cut by its recorder: a tail before the mark that
 * begins a value (at least MASK_VALUE_MIN bytes of it) is replaced by
 * "[secret:NAME]" too, together with any whole value it overlaps. Pure.
 */
int redact(const char *s, size_t len, const struct mask_value *v, size_t n, char **ret,
           size_t *ret_len);
