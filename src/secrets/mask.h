/*
 * mask.h — keeping bound secret values out of what a run prints and out of
 * what the audit log records.
 *
 * Two uses, one matching rule (leftmost match first, then the longest
 * pattern at that position; scanning resumes after the match):
 *
 *   1. masker_feed: `--mask-output` passes a run's stdout/stderr through a
 *      masker, which replaces every occurrence of a value by "***", also
 *      when the value arrives split across reads (bytes that may begin a
 *      value are held back until the next read decides). The masker also
 *      replaces the value's common encodings (see "Patterns" below), and it
 *      matches ASCII-case-insensitively, so an upper- or lower-cased value
 *      is masked too.
 *   2. redact: a run-controlled string about to be recorded (a request
 *      path, a DNS name) has every occurrence of a value replaced by
 *      "[secret:NAME]", matched ASCII-case-insensitively since DNS names
 *      arrive lowercased.
 *
 * Values shorter than MASK_VALUE_MIN would match everywhere (and masking
 * them would reveal more than it hides); values longer than MASK_VALUE_MAX
 * are not expected in output. Both are ignored.
 *
 * Patterns (masker only). For each kept value of at most
 * MASK_ENCODE_VALUE_MAX bytes the masker also masks:
 *   - its hex form (lower or upper case: matching ignores ASCII case);
 *   - its URL percent-encoding (every byte outside A-Z a-z 0-9 - . _ ~ as
 *     %XX), when that differs from the value;
 *   - its base64 forms, standard and URL-safe alphabet, padded or not: a
 *     value inside a longer base64 string encodes differently depending on
 *     its offset modulo 3, so for each of the three offsets the masker
 *     keeps the "core" — the base64 characters that depend on the value's
 *     bits only (the one or two characters at each end that mix in
 *     neighbouring bytes stay visible: at most 10 bits of the value). A
 *     core shorter than MASK_B64_CORE_MIN characters is not kept (it would
 *     match by chance).
 * The encoded patterns live in the masker itself (MASK_ENCODED_BYTES in
 * all, for at most MASK_ENCODED_VALUES values); values whose encodings no
 * longer fit are masked as themselves only (n_plain_only counts them). Matching folds ASCII case
 * and treats '-' as
 * '+' and '_' as '/' (base64url vs base64), in values and encodings alike:
 * a string that differs from a value only that way is masked too.
 *
 * Threat notes: this is a best-effort guard against accidental disclosure,
 * not a boundary. A run that knows a value can print it in a form not
 * listed above (reversed, compressed, encrypted, split over lines or
 * across time with other output in between, base32, arithmetic on it, one
 * byte per line) and no masker will see it; see docs/SECRETS.md. The
 * values are borrowed and never copied except in held-back output and in
 * the encoded patterns; the caller keeps the masker in locked,
 * non-dumpable memory and wipes it with masker_wipe. Pure code: no
 * allocation in the masker, no I/O, no logging.
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
/* Encodings (hex, URL, base64) are masked for values up to this long
 * (tokens and passwords; a PEM key prints as itself). */
#define MASK_ENCODE_VALUE_MAX 512
/* A base64 core shorter than this is not kept: 8 characters of a base64
 * alphabet folded to 38 classes already match one stream position in 4e12. */
#define MASK_B64_CORE_MIN 8
/* Room for the encoded patterns of all values: hex 2n + URL up to 3n +
 * base64 about 4n, i.e. ~4.6 KiB for a value of MASK_ENCODE_VALUE_MAX and
 * ~0.9 KiB for a 100-byte token. Kept small: the masker lives in locked
 * memory, one per output stream, and RLIMIT_MEMLOCK can be 64 KiB. */
#define MASK_ENCODED_BYTES (8 * 1024)
/* At most this many values get their encodings masked (the first ones). */
#define MASK_ENCODED_VALUES 16
/* Forms per value: itself, hex, URL, three base64 cores. */
#define MASK_FORMS        6
#define MASK_PATTERNS_MAX (MASK_VALUES_MAX + MASK_ENCODED_VALUES * (MASK_FORMS - 1))
#define MASK_TEXT         "***"
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
 * non-dumpable memory; treat it as opaque. The patterns in v[] are the
 * values themselves (borrowed: the caller's buffers must outlive the
 * masker) and their encodings (pointing into enc[]); pending[] holds copies
 * of output bytes that may be the start of a pattern.
 */
struct masker {
        struct mask_value v[MASK_PATTERNS_MAX]; /* sorted by folded first byte, longest first */
        size_t n;                               /* patterns */
        size_t n_values;                        /* values kept */
        size_t n_plain_only;     /* values kept whose encodings are not masked (size) */
        size_t n_encoded;        /* values whose encodings were tried */
        size_t max_len;          /* longest pattern */
        unsigned char first[32]; /* bitset of the bytes that can begin a pattern */
        unsigned char enc[MASK_ENCODED_BYTES];
        size_t enc_used;
        unsigned char pending[MASK_VALUE_MAX];
        size_t n_pending; /* held back: may be the start of a pattern */
};

/*
 * masker_init — keep the values of v[0..n) whose length is within
 * [MASK_VALUE_MIN, MASK_VALUE_MAX] (borrowed: they must outlive the
 * masker); at most MASK_VALUES_MAX; and the encoded patterns of those up
 * to MASK_ENCODE_VALUE_MAX bytes, in order, while MASK_ENCODED_BYTES and
 * MASK_ENCODED_VALUES last. Returns how many values were kept. Cost: O(patterns^2) compares
 * of lengths once (at most MASK_PATTERNS_MAX patterns).
 */
size_t masker_init(struct masker *m, const struct mask_value *v, size_t n);

/*
 * masker_feed — pass n bytes of output through. Writes to `out` (capacity
 * at least n + MASK_VALUE_MAX) what can be emitted now, every complete
 * pattern (a value or an encoding of one, compared with mask_fold)
 * replaced by MASK_TEXT; bytes that might begin a pattern are held back
 * until the next call. `final` true: nothing more will come — flush
 * everything held back (a partial pattern at the very end is emitted as
 * is). Returns the number of bytes written to out. Overlapping matches:
 * leftmost first, then the longest pattern at that position; scanning
 * resumes after the match. Feeding a stream in any chunking gives the same
 * output as one final feed of the whole stream.
 */
size_t masker_feed(struct masker *m, const void *in, size_t n, void *out, bool final);

/* masker_wipe — explicit_bzero the held-back bytes and the encodings, forget the values. */
void masker_wipe(struct masker *m);

/*
 * mask_fold — the byte the masker compares in place of c: ASCII upper case
 * as lower case, '-' as '+', '_' as '/'; every other byte as itself.
 */
unsigned char mask_fold(unsigned char c);

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
