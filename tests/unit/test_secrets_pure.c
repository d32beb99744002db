/*
 * test_secrets_pure.c — the pure parts of secret handling: output masking
 * and audit redaction (secrets/mask.c), and the broker's wire protocol
 * (secrets/broker.c).
 *
 * The masker is checked on hand-made cases (splits at every position,
 * overlaps, prefixes, binary values), then by a property: random data with
 * values inserted, fed in random chunks, gives exactly the output of one
 * final feed, which in turn equals a naive leftmost-longest reference.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secrets/broker.h"
#include "secrets/mask.h"
#include "tap.h"

/* ---- helpers ---- */

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static struct mask_value mv(const char *s, const char *name)
{
        return (struct mask_value){.p = (const unsigned char *)s, .len = strlen(s), .name = name};
}

/* Feed `s` in pieces cut at cuts[0..ncuts) (increasing), the last feed final. Returns malloc'd. */
static char *feed_cuts(struct masker *m, const char *s, size_t len, const size_t *cuts,
                       size_t ncuts, size_t *out_len)
{
        char *out = malloc(len + MASK_VALUE_MAX * (ncuts + 1) + 1);
        size_t o = 0, prev = 0;

        for (size_t k = 0; k <= ncuts; k++) {
                size_t end = k < ncuts ? cuts[k] : len;
                o += masker_feed(m, s + prev, end - prev, out + o, k == ncuts);
                prev = end;
        }
        out[o] = '\0';
        if (out_len)
                *out_len = o;
        return out;
}

/* Mask `s` with the given values in one final feed; a malloc'd NUL-terminated result. */
static char *mask1(const struct mask_value *v, size_t n, const char *s)
{
        struct masker m;
        masker_init(&m, v, n);
        return feed_cuts(&m, s, strlen(s), NULL, 0, NULL);
}

/* ---- masker ---- */

static void test_mask_basic(void)
{
        struct mask_value v[] = {mv("SECRETVALUE", "tok")};
        char *o = mask1(v, 1, "token=SECRETVALUE; again SECRETVALUE");
        is_str(o, "token=***; again ***", "a value in one chunk, twice");
        free(o);
        o = mask1(v, 1, "nothing to see SECRETVALU");
        is_str(o, "nothing to see SECRETVALU", "a partial value at the end is kept");
        free(o);
        o = mask1(v, 1, "");
        is_str(o, "", "empty input");
        free(o);

        struct masker m;
        masker_init(&m, NULL, 0);
        char out[64 + MASK_VALUE_MAX];
        size_t k = masker_feed(&m, "plain", 5, out, false);
        ok(k == 5 && memcmp(out, "plain", 5) == 0, "no values: passes through unheld");
}

static void test_mask_split2(void)
{
        struct mask_value v[] = {mv("hunter2-secret", "pw")};
        const char *s = "pw=hunter2-secret!";
        size_t len = strlen(s), bad = 0;
        struct masker m;

        for (size_t c = 0; c <= len; c++) {
                masker_init(&m, v, 1);
                char *o = feed_cuts(&m, s, len, &c, 1, NULL);
                if (strcmp(o, "pw=***!") != 0) {
                        diag("cut at %zu: '%s'", c, o);
                        bad++;
                }
                free(o);
        }
        is_int(bad, 0, "a value split at every position across two feeds");

        /* the held-back part is not emitted early */
        masker_init(&m, v, 1);
        char out[64 + MASK_VALUE_MAX];
        size_t k = masker_feed(&m, "pw=hunter", 9, out, false);
        ok(k == 3 && memcmp(out, "pw=", 3) == 0 && m.n_pending == 6,
           "the start of a value is held back (%zu emitted, %zu held)", k, m.n_pending);
        k = masker_feed(&m, "2-secret", 8, out, false);
        ok(k == 3 && memcmp(out, "***", 3) == 0 && m.n_pending == 0,
           "... and masked when the rest arrives");
        k = masker_feed(&m, "hunterX", 7, out, false);
        ok(k == 7 && memcmp(out, "hunterX", 7) == 0, "a near miss is emitted as soon as it is one");
}

static void test_mask_split3(void)
{
        struct mask_value v[] = {mv("0123456789", "d")};
        const char *s = "ab0123456789cd";
        size_t len = strlen(s), bad = 0, runs = 0;
        struct masker m;

        for (size_t a = 0; a <= len; a++)
                for (size_t b = a; b <= len; b++) {
                        size_t cuts[2] = {a, b};
                        masker_init(&m, v, 1);
                        char *o = feed_cuts(&m, s, len, cuts, 2, NULL);
                        bad += strcmp(o, "ab***cd") != 0;
                        runs++;
                        free(o);
                }
        is_int(bad, 0, "a value split over three feeds, every pair of cuts (%zu)", runs);

        /* one byte per feed */
        size_t cuts[32];
        for (size_t i = 0; i < len; i++)
                cuts[i] = i + 1;
        masker_init(&m, v, 1);
        char *o = feed_cuts(&m, s, len, cuts, len, NULL);
        is_str(o, "ab***cd", "one byte per feed");
        free(o);
}

static void test_mask_overlaps(void)
{
        struct mask_value two[] = {mv("abcd", "a"), mv("WXYZ", "w")};
        char *o = mask1(two, 2, "abcdWXYZ abcdabcd");
        is_str(o, "****** ******", "two values adjacent, one value twice adjacent");
        free(o);

        struct mask_value pre[] = {mv("abcd", "short"), mv("abcdef", "long")};
        o = mask1(pre, 2, "abcdef abcdeX abcd");
        is_str(o, "*** ***eX ***", "a value that is a prefix of another: the longest wins");
        free(o);
        struct mask_value pre2[] = {mv("abcdef", "long"), mv("abcd", "short")};
        o = mask1(pre2, 2, "abcdef abcdeX abcd");
        is_str(o, "*** ***eX ***", "... whatever their order");
        free(o);
        struct masker m;
        size_t bad = 0;
        const char *s = "xabcdef abcde";
        for (size_t c = 0; c <= strlen(s); c++) {
                masker_init(&m, pre, 2);
                char *p = feed_cuts(&m, s, strlen(s), &c, 1, NULL);
                bad += strcmp(p, "x*** ***e") != 0;
                free(p);
        }
        is_int(bad, 0, "... also when split anywhere (the shorter is not taken early)");

        struct mask_value a[] = {mv("aaab", "a")};
        o = mask1(a, 1, "aaaab");
        is_str(o, "a***", "overlapping candidates: aaab in aaaab");
        free(o);
        bad = 0;
        for (size_t c = 0; c <= 5; c++) {
                masker_init(&m, a, 1);
                char *p = feed_cuts(&m, "aaaab", 5, &c, 1, NULL);
                bad += strcmp(p, "a***") != 0;
                free(p);
        }
        is_int(bad, 0, "... at every split");

        struct mask_value ov[] = {mv("abcabd", "x"), mv("cabdzz", "y")};
        o = mask1(ov, 2, "abcabdzz");
        is_str(o, "***zz", "leftmost first, scanning resumes after the match");
        free(o);
}

static void test_mask_final(void)
{
        struct mask_value v[] = {mv("abcd", "x")};
        struct masker m;
        char out[64 + MASK_VALUE_MAX];

        masker_init(&m, v, 1);
        size_t k = masker_feed(&m, "xxabc", 5, out, false);
        ok(k == 2 && m.n_pending == 3, "'abc' held back");
        k = masker_feed(&m, NULL, 0, out, true);
        ok(k == 3 && memcmp(out, "abc", 3) == 0 && m.n_pending == 0,
           "final flush emits the partial value as is");
        k = masker_feed(&m, "zzab", 4, out, true);
        ok(k == 4 && memcmp(out, "zzab", 4) == 0, "final: a partial value at the end is emitted");
}

static void test_mask_range(void)
{
        static char big[MASK_VALUE_MAX + 2];
        memset(big, 'Q', sizeof big - 1);
        static char maxv[MASK_VALUE_MAX + 1];
        memset(maxv, 'R', sizeof maxv - 1);
        struct mask_value v[] = {mv("abc", "short"), mv(big, "big"),
                                 mv("", "empty"),    {.p = NULL, .len = 5, .name = "null"},
                                 mv("abcd", "ok"),   mv(maxv, "max")};
        struct masker m;

        is_int(masker_init(&m, v, ARRAY_SIZE(v)), 2, "only values within [MIN, MAX] are kept");
        is_int(m.max_len, MASK_VALUE_MAX, "a value of exactly MASK_VALUE_MAX is kept");
        char *o = mask1(v, 3, "abc abc");
        is_str(o, "abc abc", "a 3-byte value is not masked");
        free(o);

        struct mask_value many[MASK_VALUES_MAX + 6];
        char names[MASK_VALUES_MAX + 6][8];
        for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
                snprintf(names[i], sizeof names[i], "v%03zu", i);
                many[i] = mv(names[i], names[i]);
        }
        is_int(masker_init(&m, many, ARRAY_SIZE(many)), MASK_VALUES_MAX,
               "at most MASK_VALUES_MAX values kept");
        o = mask1(many, ARRAY_SIZE(many), "v000 v063 v064");
        is_str(o, "*** *** v064", "... the first ones");
        free(o);

        /* a value of MASK_VALUE_MAX bytes, split */
        struct mask_value mx[] = {mv(maxv, "max")};
        size_t len = MASK_VALUE_MAX + 4;
        char *s = malloc(len + 1);
        s[0] = s[1] = '<';
        memcpy(s + 2, maxv, MASK_VALUE_MAX);
        s[len - 2] = s[len - 1] = '>';
        s[len] = '\0';
        size_t cuts[3] = {1, 2000, 4097};
        masker_init(&m, mx, 1);
        o = feed_cuts(&m, s, len, cuts, 3, NULL);
        is_str(o, "<<***>>", "a MASK_VALUE_MAX value split over four feeds");
        free(o);
        free(s);
}

static void test_mask_binary(void)
{
        static const unsigned char val[] = {0x00, 0x01, 0x00, 0xff, 0x80};
        static const unsigned char in[] = {'a', 0x00, 0x01, 0x00, 0xff, 0x80, 0x00, 0x01, 0x00};
        struct mask_value v[] = {{.p = val, .len = sizeof val, .name = "bin"}};
        struct masker m;
        unsigned char out[64 + MASK_VALUE_MAX];
        size_t bad = 0;

        for (size_t c = 0; c <= sizeof in; c++) {
                masker_init(&m, v, 1);
                size_t k = masker_feed(&m, in, c, out, false);
                k += masker_feed(&m, in + c, sizeof in - c, out + k, true);
                static const unsigned char want[] = {'a', '*', '*', '*', 0x00, 0x01, 0x00};
                bad += k != sizeof want || memcmp(out, want, k) != 0;
        }
        is_int(bad, 0, "a binary value with NUL bytes, split anywhere");

        masker_init(&m, v, 1);
        (void)masker_feed(&m, in, 4, out, false);
        ok(m.n_pending == 3, "... its start held back");
        masker_wipe(&m);
        size_t nz = 0;
        for (size_t i = 0; i < sizeof m.pending; i++)
                nz += m.pending[i] != 0;
        ok(m.n == 0 && m.n_pending == 0 && nz == 0 && m.v[0].p == NULL,
           "masker_wipe clears the held-back bytes and the values");
}

/* Naive reference: leftmost, then longest, over the whole input (values filtered as init). */
static size_t mask_ref(const struct mask_value *v, size_t n, const unsigned char *s, size_t len,
                       unsigned char *out)
{
        size_t o = 0, i = 0, kept = 0;
        const struct mask_value *use[MASK_VALUES_MAX];

        for (size_t k = 0; k < n && kept < MASK_VALUES_MAX; k++)
                if (v[k].p && v[k].len >= MASK_VALUE_MIN && v[k].len <= MASK_VALUE_MAX)
                        use[kept++] = &v[k];
        while (i < len) {
                size_t best = 0;
                for (size_t k = 0; k < kept; k++)
                        if (use[k]->len <= len - i && use[k]->len > best &&
                            memcmp(use[k]->p, s + i, use[k]->len) == 0)
                                best = use[k]->len;
                if (best) {
                        memcpy(out + o, "***", 3);
                        o += 3;
                        i += best;
                } else
                        out[o++] = s[i++];
        }
        return o;
}

static void test_mask_property(void)
{
        size_t bad_chunks = 0, bad_ref = 0, rounds = 400, total_masked = 0;

        srand(12345);
        for (size_t r = 0; r < rounds; r++) {
                /* a small alphabet so that values overlap, share prefixes and recur */
                unsigned char vals[6][40];
                struct mask_value v[6];
                size_t nv = 1 + (size_t)rand() % 6;
                for (size_t k = 0; k < nv; k++) {
                        size_t l = 2 + (size_t)rand() % 20;
                        for (size_t j = 0; j < l; j++)
                                vals[k][j] = (unsigned char)("aab\0"[rand() % 4]);
                        if (k > 0 && rand() % 3 == 0) /* a prefix or extension of another */
                                memcpy(vals[k], vals[k - 1], l / 2);
                        v[k] = (struct mask_value){.p = vals[k], .len = l, .name = "n"};
                }
                size_t len = (size_t)rand() % 3000;
                unsigned char *s = malloc(len + 1);
                for (size_t i = 0; i < len; i++)
                        s[i] = (unsigned char)("abc\0"[rand() % 4]);
                for (size_t ins = (size_t)rand() % 20; ins > 0 && len > 40; ins--) {
                        size_t k = (size_t)rand() % nv, at = (size_t)rand() % (len - v[k].len);
                        memcpy(s + at, v[k].p, v[k].len);
                }

                struct masker m;
                unsigned char *one = malloc(len + MASK_VALUE_MAX);
                unsigned char *many = malloc(len + MASK_VALUE_MAX * 64);
                unsigned char *ref = malloc(len + 1);
                masker_init(&m, v, nv);
                size_t n1 = masker_feed(&m, s, len, one, true);
                size_t nref = mask_ref(v, nv, s, len, ref);
                bad_ref += n1 != nref || memcmp(one, ref, n1) != 0;
                total_masked += len - n1;

                masker_init(&m, v, nv);
                size_t o = 0, i = 0;
                while (i < len) {
                        size_t c = (size_t)rand() % (rand() % 2 ? 4 : 200);
                        if (c > len - i)
                                c = len - i;
                        o += masker_feed(&m, s + i, c, many + o, false);
                        i += c;
                }
                o += masker_feed(&m, NULL, 0, many + o, true);
                bad_chunks += o != n1 || memcmp(one, many, o) != 0;
                free(s);
                free(one);
                free(many);
                free(ref);
        }
        is_int(bad_chunks, 0, "property: random chunking equals one final feed (%zu rounds)",
               rounds);
        is_int(bad_ref, 0, "property: one final feed equals the naive leftmost-longest reference");
        ok(total_masked > 0, "... and the rounds did mask something");
}

static void test_mask_large(void)
{
        /* 1 MiB in 64 KiB chunks of mostly first-bytes: bounded work, same as one feed */
        struct mask_value v[] = {mv("aaaaaaab", "x"), mv("ab12", "y")};
        size_t len = 1 << 20;
        unsigned char *s = malloc(len), *a = malloc(len + MASK_VALUE_MAX),
                      *b = malloc(len + MASK_VALUE_MAX);
        for (size_t i = 0; i < len; i++)
                s[i] = (i % 97 == 0) ? 'b' : 'a';
        struct masker m;
        masker_init(&m, v, 2);
        size_t na = masker_feed(&m, s, len, a, true), nb = 0;
        masker_init(&m, v, 2);
        for (size_t i = 0; i < len; i += 65536)
                nb += masker_feed(&m, s + i, 65536, b + nb, i + 65536 >= len);
        ok(na == nb && memcmp(a, b, na) == 0 && na < len, "1 MiB in 64 KiB chunks");
        free(s);
        free(a);
        free(b);
}

/* ---- encodings of a value (issue 13: base64, hex, URL, case) ---- */

static void test_mask_encodings(void)
{
        /* printable, with bytes that URL-encoding and base64 treat specially */
        struct mask_value v[] = {mv("Tok3n_s3cr3t/v@lue+42", "tok")};
        static const struct {
                const char *in, *want, *what;
        } c[] = {
                {"b64:VG9rM25fczNjcjN0L3ZAbHVlKzQy\n", "b64:***\n", "base64 of the value"},
                {"b64:YVRvazNuX3MzY3IzdC92QGx1ZSs0Mnp6\n", "b64:YV***np6\n",
                 "base64 with the value at offset 1 (mod 3) of a longer string"},
                {"b64:YWJUb2szbl9zM2NyM3QvdkBsdWUrNDJ6\n", "b64:YWJ***J6\n", "... at offset 2"},
                {"546f6b336e5f7333637233742f76406c75652b3432", "***", "hex"},
                {"546F6B336E5F7333637233742F76406C75652B3432", "***", "HEX"},
                {"q=Tok3n_s3cr3t%2Fv%40lue%2B42&x", "q=***&x", "URL-encoded"},
                {"q=Tok3n_s3cr3t%2fv%40lue%2b42&x", "q=***&x", "URL-encoded, lower-case escapes"},
                {"TOK3N_S3CR3T/V@LUE+42", "***", "UPPER-cased"},
                {"tok3n_s3cr3t/v@lue+42", "***", "lower-cased"},
                /* controls: near misses and unrelated encodings stay */
                {"b64:VG9rM25fczNjcjN0L3ZAbHVlKzQz\n", "b64:VG9rM25fczNjcjN0L3ZAbHVlKzQz\n",
                 "control: base64 of a value differing in its last byte is kept"},
                {"aGVsbG8gd29ybGQsIG5vdGhpbmcgc2VjcmV0IGhlcmU=",
                 "aGVsbG8gd29ybGQsIG5vdGhpbmcgc2VjcmV0IGhlcmU=",
                 "control: unrelated base64 is kept"},
                {"546f6b336e5f7333637233742f76406c75652b3433",
                 "546f6b336e5f7333637233742f76406c75652b3433",
                 "control: hex of another value is kept"},
        };
        for (size_t i = 0; i < ARRAY_LEN(c); i++) {
                char *o = mask1(v, 1, c[i].in);
                is_str(o, c[i].want, "%s", c[i].what);
                free(o);
        }

        /* binary: base64 with + and /, and its URL-safe form with - and _ */
        struct mask_value b[] = {{.p = (const unsigned char *)"\xfb\xff\xbf\xfb\xff\xbfkey\x01",
                                  .len = 10,
                                  .name = "bin"}};
        static const struct {
                const char *in, *want;
        } d[] = {
                {"+/+/+/+/a2V5ASE=", "***SE="},         {"-_-_-_-_a2V5ASE=", "***SE="},
                {"ePv/v/v/v2tleQEh", "eP***Eh"},        {"ePv_v_v_v2tleQEh", "eP***Eh"},
                {"eHn7/7/7/79rZXkBIQ==", "eHn***IQ=="}, {"eHn7_7_7_79rZXkBIQ==", "eHn***IQ=="},
                {"fbffbffbffbf6b657901", "***"},
        };
        size_t bad = 0;
        for (size_t i = 0; i < ARRAY_LEN(d); i++) {
                char *o = mask1(b, 1, d[i].in);
                if (strcmp(o, d[i].want) != 0) {
                        diag("'%s' -> '%s', want '%s'", d[i].in, o, d[i].want);
                        bad++;
                }
                free(o);
        }
        is_int(bad, 0, "a binary value: base64 and base64url at the 3 offsets, hex");

        /* an encoding split at every position across two feeds */
        const char *s = "b64:YVRvazNuX3MzY3IzdC92QGx1ZSs0Mnp6\n";
        size_t len = strlen(s);
        bad = 0;
        for (size_t k = 0; k <= len; k++) {
                struct masker m;
                masker_init(&m, v, 1);
                char *o = feed_cuts(&m, s, len, &k, 1, NULL);
                bad += strcmp(o, "b64:YV***np6\n") != 0;
                free(o);
        }
        is_int(bad, 0, "an encoded value split at every position across two feeds");
}

static void test_mask_encode_limits(void)
{
        static struct masker m;
        /* longer than MASK_ENCODE_VALUE_MAX: masked as itself only */
        static unsigned char big[MASK_ENCODE_VALUE_MAX + 1];
        for (size_t i = 0; i < sizeof big; i++)
                big[i] = (unsigned char)('a' + (i * 7 + i / 26) % 26);
        struct mask_value v = {.p = big, .len = sizeof big, .name = "big"};
        is_int(masker_init(&m, &v, 1), 1, "a value over MASK_ENCODE_VALUE_MAX is kept");
        ok(m.n == 1 && m.n_plain_only == 1, "... as itself only (%zu patterns)", m.n);

        /* a value of exactly MASK_ENCODE_VALUE_MAX bytes: all six forms */
        v.len = MASK_ENCODE_VALUE_MAX;
        masker_init(&m, &v, 1);
        ok(m.n == 5 && m.n_plain_only == 0,
           "a value of MASK_ENCODE_VALUE_MAX: itself, hex and 3 base64 cores (%zu)", m.n);

        /* more values than the encodings' room: every value is still masked */
        static unsigned char vals[MASK_VALUES_MAX][MASK_ENCODE_VALUE_MAX];
        struct mask_value vs[MASK_VALUES_MAX];
        for (size_t k = 0; k < MASK_VALUES_MAX; k++) {
                for (size_t i = 0; i < MASK_ENCODE_VALUE_MAX; i++)
                        vals[k][i] = (unsigned char)('a' + (i * 7 + k * 3 + i / 26) % 26);
                vals[k][0] = (unsigned char)('A' + k % 26);
                vals[k][1] = (unsigned char)('0' + k / 26);
                vs[k] = (struct mask_value){.p = vals[k], .len = MASK_ENCODE_VALUE_MAX};
        }
        is_int(masker_init(&m, vs, MASK_VALUES_MAX), MASK_VALUES_MAX,
               "MASK_VALUES_MAX values of MASK_ENCODE_VALUE_MAX bytes: all kept");
        ok(m.n_plain_only > 0 && m.n_plain_only < MASK_VALUES_MAX &&
                   m.enc_used <= MASK_ENCODED_BYTES,
           "... %zu of them without encodings (MASK_ENCODED_BYTES)", m.n_plain_only);
        size_t missed = 0;
        unsigned char *out = malloc(MASK_ENCODE_VALUE_MAX + MASK_VALUE_MAX);
        for (size_t k = 0; k < MASK_VALUES_MAX; k++) {
                masker_init(&m, vs, MASK_VALUES_MAX);
                size_t o = masker_feed(&m, vals[k], MASK_ENCODE_VALUE_MAX, out, true);
                missed += !(o == 3 && memcmp(out, "***", 3) == 0);
        }
        free(out);
        is_int(missed, 0, "... and every one of them is masked as itself");

        /* more values than MASK_ENCODED_VALUES: the first ones get encodings */
        static char toks[MASK_ENCODED_VALUES + 4][24];
        struct mask_value ts[MASK_ENCODED_VALUES + 4];
        for (size_t k = 0; k < ARRAY_LEN(ts); k++) {
                snprintf(toks[k], sizeof toks[k], "tok%02zu-%08zx", k, k * 2654435761u);
                ts[k] = mv(toks[k], "t");
        }
        masker_init(&m, ts, ARRAY_LEN(ts));
        is_int(m.n_plain_only, 4, "%zu values: %d of them with encodings (MASK_ENCODED_VALUES)",
               ARRAY_LEN(ts), MASK_ENCODED_VALUES);
        char hex[48], got[64 + MASK_VALUE_MAX];
        for (size_t i = 0; i < strlen(toks[0]); i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)toks[0][i]);
        size_t o = masker_feed(&m, hex, strlen(hex), got, true);
        ok(o == 3 && !memcmp(got, "***", 3), "... the first value's hex is masked");
        for (size_t i = 0; i < strlen(toks[MASK_ENCODED_VALUES]); i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)toks[MASK_ENCODED_VALUES][i]);
        masker_init(&m, ts, ARRAY_LEN(ts));
        o = masker_feed(&m, hex, strlen(hex), got, true);
        ok(o == strlen(hex), "... a value past the limit: its hex is not (a named limit)");
        masker_init(&m, ts, ARRAY_LEN(ts));
        o = masker_feed(&m, toks[MASK_ENCODED_VALUES], strlen(toks[MASK_ENCODED_VALUES]), got,
                        true);
        ok(o == 3 && !memcmp(got, "***", 3), "... but the value itself is");
        masker_wipe(&m);
}

/* ---- redact ---- */

static void test_redact(void)
{
        struct mask_value v[] = {mv("SeCrEt42", "API_TOKEN"), mv("ab", "tiny"),
                                 mv("deadbeefcafe", "db"), mv("deadbeef", "db_short")};
        char *r = NULL;
        size_t rl = 0;
        const char *s = "GET /v1/secret42/x?k=DEADBEEFCAFE&t=deadbeef";

        is_int(redact(s, strlen(s), v, ARRAY_SIZE(v), &r, &rl), 1, "redact: matched");
        is_str(r, "GET /v1/[secret:API_TOKEN]/x?k=[secret:db]&t=[secret:db_short]",
               "case-insensitive, the name marker, the longest value at a position");
        is_int(rl, r ? strlen(r) : 0, "*ret_len is its length");
        ok(rl <= strlen(s) + 3 * (9 + 9 + 1), "within the documented bound");
        free(r);

        r = (char *)1;
        is_int(redact("about abc", 9, v, ARRAY_SIZE(v), &r, &rl), 0,
               "nothing matched (a 2-byte value is ignored): 0");
        ok(r == NULL, "... and *ret = NULL");

        const char dns[] = "secret42.deadbeef.evil.example";
        is_int(redact(dns, strlen(dns), v, ARRAY_SIZE(v), &r, &rl), 1, "a DNS name");
        is_str(r, "[secret:API_TOKEN].[secret:db_short].evil.example",
               "... lowercased values still found");
        free(r);

        static const char withnul[] = "x\0SECRET42\0y";
        is_int(redact(withnul, sizeof withnul - 1, v, 1, &r, &rl), 1, "a string with NUL bytes");
        static const char want[] = "x\0[secret:API_TOKEN]\0y";
        ok(rl == sizeof want - 1 && memcmp(r, want, rl) == 0 && r[rl] == '\0',
           "... NULs copied as is, result NUL-terminated");
        free(r);

        struct mask_value bin[] = {
                {.p = (const unsigned char *)"\xc3\xa9T\x00Z", .len = 5, .name = "b"}};
        static const char bs[] = "..\xc3\xa9t\x00z..";
        is_int(redact(bs, sizeof bs - 1, bin, 1, &r, &rl), 1, "a binary value, ASCII-folded");
        is_str(r, "..[secret:b]..", "... replaced");
        free(r);
        is_int(redact("", 0, v, ARRAY_SIZE(v), &r, &rl), 0, "an empty string: 0");
        is_int(redact("secret42", 8, NULL, 0, &r, &rl), 0, "no values: 0");
}

/* A string its recorder cut ends in REDACT_CUT_MARK: what the cut left of
 * a value's start is redacted too, and nothing else is. */
static void test_redact_cut(void)
{
        struct mask_value v[] = {mv("TOKEN-0123456789", "T"), mv("abcdefgh", "A"),
                                 mv("efghXYZ1", "B")};
        char *r = NULL;
        size_t rl = 0;
        const char *s = "/api/TOKEN-01" REDACT_CUT_MARK;

        is_int(redact(s, strlen(s), v, 1, &r, &rl), 1, "cut: the start of a value before the mark");
        is_str(r, "/api/[secret:T]" REDACT_CUT_MARK, "... is redacted, the mark kept");
        is_int(rl, r ? strlen(r) : 0, "... *ret_len is its length");
        free(r);

        s = "/api/TOKEN-01";
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 0,
               "control: the same start without the mark is the run's own");

        s = "/api/toke" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 1,
               "cut: case-insensitive, MASK_VALUE_MIN bytes are enough");
        is_str(r, "/api/[secret:T]" REDACT_CUT_MARK, "... redacted");
        free(r);

        s = "/api/TOK" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s) - 1, v, 1, &r, &rl), 0,
               "a string that only nearly ends in the mark is not treated as cut");

        s = "/api/TOK"
            "x" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 0, "a tail that is no value's start: 0");

        s = "/api/TOK" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 0,
               "fewer than MASK_VALUE_MIN bytes of a value: left (they would match everywhere)");

        s = "/a/TOKEN-0123456789/TOKE" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 1, "a whole value and a cut one");
        is_str(r, "/a/[secret:T]/[secret:T]" REDACT_CUT_MARK, "... both redacted");
        free(r);

        /* "efgh" at the end starts B, but splits a whole A: A goes too */
        s = "--abcdefgh" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, ARRAY_SIZE(v), &r, &rl), 1,
               "a tail that would split a whole value");
        is_str(r, "--[secret:B]" REDACT_CUT_MARK,
               "... takes that value in (no byte of either left)");
        free(r);

        s = "TOKE" REDACT_CUT_MARK;
        is_int(redact(s, strlen(s), v, 1, &r, &rl), 1, "the whole string the start of a value");
        is_str(r, "[secret:T]" REDACT_CUT_MARK, "... redacted");
        free(r);
}

/* ---- broker protocol ---- */

static int req(const char *s, size_t len, struct broker_req *q)
{
        memset(q, 0, sizeof *q);
        return broker_req_parse(s, len, q);
}

static void test_names(void)
{
        char n64[65], n65[66];
        memset(n64, 'a', 64);
        memset(n65, 'a', 65);
        ok(secret_name_valid("a", 1) && secret_name_valid("db.pem", 6) &&
                   secret_name_valid("A_b-9.x", 7) && secret_name_valid("_x", 2),
           "valid names");
        ok(secret_name_valid(n64, 64) && !secret_name_valid(n65, 65), "64 bytes yes, 65 no");
        ok(!secret_name_valid("", 0) && !secret_name_valid(".x", 2) &&
                   !secret_name_valid("-x", 2) && !secret_name_valid("a/b", 3) &&
                   !secret_name_valid("a b", 3) && !secret_name_valid("a\0b", 3) &&
                   !secret_name_valid("\xc3\xa9", 2) && !secret_name_valid(NULL, 0),
           "invalid names: empty, leading . or -, slash, space, NUL, non-ASCII");
}

static void test_req(void)
{
        struct broker_req q;
        char line[300];

        is_int(req("GET a\n", 6, &q), 6, "GET a");
        is_str(q.name, "a", "... name a");
        is_int(req("GET db.pem\nGET", 14, &q), 11, "consumes one line only");
        is_str(q.name, "db.pem", "... db.pem");
        is_int(req("GET .x\n", 7, &q), -EBADMSG, "GET .x refused");
        is_int(req("GET a b\n", 8, &q), -EBADMSG, "GET a b refused");
        is_int(req("GET  a\n", 7, &q), -EBADMSG, "two spaces refused");
        is_int(req("GET a \n", 7, &q), -EBADMSG, "a trailing space refused");
        is_int(req("get a\n", 6, &q), -EBADMSG, "lower-case verb refused");
        is_int(req("PUT a\n", 6, &q), -EBADMSG, "another verb refused");
        is_int(req("GET a\r\n", 7, &q), -EBADMSG, "CR refused");
        is_int(req("GET \n", 5, &q), -EBADMSG, "empty name refused");
        is_int(req("GET\n", 4, &q), -EBADMSG, "no name refused");
        is_int(req("\n", 1, &q), -EBADMSG, "empty line refused");
        is_int(req("GET a\0b\n", 8, &q), -EBADMSG, "NUL inside refused");
        is_int(req("GET a", 5, &q), 0, "no newline yet: need more");
        is_int(req("", 0, &q), 0, "nothing yet: need more");

        int n = snprintf(line, sizeof line, "GET %.64s\n",
                         "0123456789012345678901234567890123456789012345678901234567890123");
        is_int(req(line, (size_t)n, &q), n, "a name of 64 bytes");
        is_int(strlen(q.name), 64, "... kept whole");
        n = snprintf(line, sizeof line, "GET %.65s\n",
                     "01234567890123456789012345678901234567890123456789012345678901234");
        is_int(req(line, (size_t)n, &q), -EBADMSG, "a name of 65 bytes refused");

        memset(line, 'x', 256);
        is_int(req(line, 255, &q), 0, "255 bytes without newline: need more");
        is_int(req(line, 256, &q), -E2BIG, "256 bytes without newline: -E2BIG");
        is_int(req(line, 300, &q), -E2BIG, "300 bytes without newline: -E2BIG");
        memcpy(line, "GET a\n", 6);
        is_int(req(line, 300, &q), 6, "a good line followed by junk: the line is consumed");
        memset(line, 'x', 255);
        line[255] = '\n';
        is_int(req(line, 256, &q), -EBADMSG,
               "a 256-byte line with its newline: malformed, not E2BIG");

        const char two[] = "GET first\nGET second.one\n";
        size_t off = 0;
        int r1 = req(two + off, sizeof two - 1 - off, &q);
        ok(r1 == 10 && !strcmp(q.name, "first"), "pipelined: the first request");
        off += (size_t)r1;
        int r2 = req(two + off, sizeof two - 1 - off, &q);
        ok(r2 == 15 && !strcmp(q.name, "second.one"), "pipelined: the second request");
        off += (size_t)r2;
        is_int(req(two + off, sizeof two - 1 - off, &q), 0, "pipelined: then need more");
}

static void test_reply(void)
{
        char buf[BROKER_REPLY_HEAD_MAX];
        bool okv;
        size_t vl;
        enum broker_err code;
        int n;
        size_t bad = 0;

        for (int c = 0; c < _BROKER_E_MAX; c++) {
                n = broker_reply_err(buf, sizeof buf, (enum broker_err)c);
                okv = true;
                code = _BROKER_E_MAX;
                int r = broker_reply_parse(buf, (size_t)n, &okv, &vl, &code);
                size_t tl = strlen(broker_err_name((enum broker_err)c));
                if (n <= 0 || r != n || okv || code != (enum broker_err)c ||
                    strncmp(buf, "ERR ", 4) != 0 || strncmp(buf + 4, broker_err_name(code), tl) ||
                    buf[4 + tl] != ' ' || buf[n - 1] != '\n') {
                        diag("code %d: '%s' -> %d", c, buf, r);
                        bad++;
                }
        }
        is_int(bad, 0, "every error code round-trips");
        n = broker_reply_err(buf, sizeof buf, BROKER_E_REVOKED);
        is_str(buf, "ERR revoked the grant was revoked\n", "the revoked line");
        is_str(broker_err_name(BROKER_E_BADREQ), "bad-request", "bad-request token");
        is_str(broker_err_name(BROKER_E_UNKNOWN), "unknown", "unknown token");
        is_str(broker_err_name(BROKER_E_EXPIRED), "expired", "expired token");
        is_str(broker_err_name(BROKER_E_REFUSED), "refused", "refused token");
        is_str(broker_err_name(BROKER_E_BUSY), "busy", "busy token");
        is_str(broker_err_name(_BROKER_E_MAX), "invalid", "out of range: invalid");
        is_int(broker_reply_err(buf, sizeof buf, _BROKER_E_MAX), -EINVAL, "no line for it");
        is_int(broker_reply_err(buf, 10, BROKER_E_REVOKED), -ENOSPC, "too small: -ENOSPC");

        size_t lens[] = {0, 1, 65536};
        bad = 0;
        for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
                n = broker_reply_ok(buf, sizeof buf, lens[i]);
                okv = false;
                vl = 99;
                int r = broker_reply_parse(buf, (size_t)n, &okv, &vl, &code);
                if (n <= 0 || r != n || !okv || vl != lens[i])
                        bad++;
        }
        is_int(bad, 0, "OK round-trips for 0, 1, 65536");
        n = broker_reply_ok(buf, sizeof buf, 12);
        is_str(buf, "OK 12\n", "the OK line");
        is_int(broker_reply_ok(buf, 4, 12), -ENOSPC, "too small: -ENOSPC");
        is_int(broker_reply_ok(buf, sizeof buf, 65537), -EINVAL, "65537 cannot be sent");

        is_int(broker_reply_parse("OK 65537\n", 9, &okv, &vl, &code), -EBADMSG,
               "65537 refused by reply_parse");
        is_int(broker_reply_parse("OK 0012\n", 8, &okv, &vl, &code), -EBADMSG,
               "leading zeros refused");
        is_int(broker_reply_parse("OK 00\n", 6, &okv, &vl, &code), -EBADMSG, "00 refused");
        is_int(broker_reply_parse("OK \n", 4, &okv, &vl, &code), -EBADMSG, "no number refused");
        is_int(broker_reply_parse("OK -1\n", 6, &okv, &vl, &code), -EBADMSG, "-1 refused");
        is_int(broker_reply_parse("OK 1 \n", 6, &okv, &vl, &code), -EBADMSG,
               "trailing space refused");
        is_int(broker_reply_parse("OK 99999999999999999999\n", 24, &okv, &vl, &code), -EBADMSG,
               "a huge number refused");
        is_int(broker_reply_parse("OK 12", 5, &okv, &vl, &code), 0, "no newline: need more");
        is_int(broker_reply_parse("ERR nope the text\n", 18, &okv, &vl, &code), -EBADMSG,
               "unknown code refused");
        is_int(broker_reply_parse("ERR busy\n", 9, &okv, &vl, &code), 9,
               "an ERR without text is accepted");
        is_int(broker_reply_parse("ERR busy \x01\n", 11, &okv, &vl, &code), -EBADMSG,
               "control bytes in the text refused");
        is_int(broker_reply_parse("HELLO\n", 6, &okv, &vl, &code), -EBADMSG, "junk refused");
        is_int(broker_reply_parse("OK 5\nhello", 10, &okv, &vl, &code), 5,
               "the header only is consumed (the value follows)");
        char longl[200];
        memset(longl, 'E', sizeof longl);
        is_int(broker_reply_parse(longl, 127, &okv, &vl, &code), 0, "127 bytes: need more");
        is_int(broker_reply_parse(longl, 128, &okv, &vl, &code), -EBADMSG,
               "128 bytes without newline: over-long");
}

int main(void)
{
        test_mask_basic();
        test_mask_split2();
        test_mask_split3();
        test_mask_overlaps();
        test_mask_final();
        test_mask_range();
        test_mask_binary();
        test_mask_property();
        test_mask_large();
        test_mask_encodings();
        test_mask_encode_limits();
        test_redact();
        test_redact_cut();
        test_names();
        test_req();
        test_reply();
        return done();
}
