/*
 * token.c — run identity tokens (PASETO v4.public) and the JWKS of their key.
 *
 * Why PASETO v4.public and not a JWT signed with EdDSA: a JWT names its own
 * algorithm in a header the attacker writes, and verifiers have been fooled
 * by that field again and again ("alg":"none", an HMAC keyed with the public
 * key, a confused curve). A PASETO token has no algorithm field: the fixed,
 * versioned header "v4.public." *is* the algorithm (Ed25519, public-key
 * signature), there is no "none", and anything else — "v3.public.",
 * "v4.local.", a case variant — is simply not a token we read.
 *
 * Wire format (PASETO v4 spec, "Sign" / "Verify"):
 *
 *     token = "v4.public." b64url(m || sig) [ "." b64url(f) ]
 *     sig   = Ed25519(sk, PAE("v4.public.", m, f, i))
 *
 * with b64url the URL-safe base64 alphabet without padding, m the message
 * (here: the claims as compact JSON, keys sorted), f the optional footer
 * (we never write one; a token that has one is verified with it), i the
 * implicit assertion (always "" here) and PAE the pre-authentication
 * encoding of token_pae(). The signature therefore binds the header, so a
 * token cannot be re-labelled as another version or purpose.
 *
 * Claims: {"aud","exp","iat","jti","on_behalf_of","project","run","sub",
 * "task"}, all strings, exp/iat in RFC 3339 UTC with seconds and "Z", jti ==
 * run. The issuer is the only writer, so verification is strict: exactly
 * these members, no others.
 *
 * Threat notes: the token is attacker-supplied input (a run shows it to an
 * API; anyone may replay or mangle it). token_verify bounds the input
 * (TOKEN_MAX) before decoding, decodes into stack buffers of fixed size,
 * checks the signature before it parses a byte of the message, and only
 * then hands the message to the strict JSON parser. Error messages never
 * quote the token. The secret key is read only by token_issue and
 * token_public_key and wiped (sodium_memzero) before they return. The key
 * is shared with the audit log; the two signed formats cannot be confused:
 * a PASETO signature covers PAE(...), which starts with the bytes
 * 04 00 00 00 00 00 00 00, a checkpoint signature covers text starting
 * "ringfence-audit-v1".
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit-internal.h"
#include "audit/token.h"
#include "shared/json.h"
#include "shared/macro.h"

#define TOKEN_HEADER_LEN (sizeof TOKEN_HEADER - 1)
#define TOKEN_SIG_LEN    64
#define TOKEN_TIME_LEN   20 /* "YYYY-MM-DDTHH:MM:SSZ" */
/* Decoded body (message || signature) of a token no longer than TOKEN_MAX. */
#define TOKEN_BODY_MAX ((TOKEN_MAX - TOKEN_HEADER_LEN) / 4 * 3 + 2)
/* PAE of header, message, footer and "": 5 LE64 words and the pieces. */
#define TOKEN_PAE_MAX (5 * 8 + TOKEN_HEADER_LEN + TOKEN_BODY_MAX + TOKEN_FOOTER_MAX)

/*
 * The longest claims message the limits allow: every string escaped at most
 * twofold (json_text_is_safe leaves only '"' and '\\' to escape), the run id
 * twice. token_issue still checks the real length; this only proves that
 * every valid set of claims fits in a token.
 */
#define TOKEN_MESSAGE_MAX                                                                          \
        (sizeof "{\"aud\":\"\",\"exp\":\"\",\"iat\":\"\",\"jti\":\"\",\"on_behalf_of\":\"\","      \
                "\"project\":\"\",\"run\":\"\",\"sub\":\"\",\"task\":\"\"}" -                      \
         1 + 2 * TOKEN_TIME_LEN + 2 * 2 * (TOKEN_RUN_MAX - 1) + 5 * 2 * (TOKEN_NAME_MAX - 1))
_Static_assert(TOKEN_HEADER_LEN + (TOKEN_MESSAGE_MAX + TOKEN_SIG_LEN + 2) / 3 * 4 <= TOKEN_MAX,
               "the claim limits must fit in TOKEN_MAX");
_Static_assert(crypto_sign_BYTES == TOKEN_SIG_LEN, "Ed25519 signature size");
_Static_assert(crypto_sign_PUBLICKEYBYTES == 32, "Ed25519 public key size");

static void le64(unsigned char *p, uint64_t v)
{
        v &= UINT64_MAX >> 1; /* the spec clears the top bit */
        for (int i = 0; i < 8; i++, v >>= 8)
                p[i] = (unsigned char)(v & 0xff);
}

ssize_t token_pae(size_t n, const void *const pieces[], const size_t lens[], unsigned char *out,
                  size_t cap)
{
        size_t k = 0;
        if (cap < 8)
                return -ENOBUFS;
        le64(out, n);
        k = 8;
        for (size_t i = 0; i < n; i++) {
                if (cap - k < 8 || cap - k - 8 < lens[i])
                        return -ENOBUFS;
                le64(out + k, lens[i]);
                k += 8;
                if (lens[i])
                        memcpy(out + k, pieces[i], lens[i]);
                k += lens[i];
        }
        return (ssize_t)k;
}

/* --- time: RFC 3339 UTC, exactly "YYYY-MM-DDTHH:MM:SSZ" --- */

static bool is_leap(int64_t y)
{
        return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int64_t *v)
{
        *v = 0;
        for (int i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EBADMSG;
                *v = *v * 10 + (s[i] - '0');
        }
        return 0;
}

static int time_parse(const char *s, size_t len, int64_t *ret)
{
        static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int64_t y, mo, d, h, mi, se;
        if (len != TOKEN_TIME_LEN || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
            s[16] != ':' || s[19] != 'Z')
                return -EBADMSG;
        if (digits(s, 4, &y) < 0 || digits(s + 5, 2, &mo) < 0 || digits(s + 8, 2, &d) < 0 ||
            digits(s + 11, 2, &h) < 0 || digits(s + 14, 2, &mi) < 0 || digits(s + 17, 2, &se) < 0)
                return -EBADMSG;
        if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y)) ||
            h > 23 || mi > 59 || se > 59)
                return -EBADMSG;
        *ret = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
        return 0;
}

static int time_format(int64_t t, char buf[TOKEN_TIME_LEN + 1])
{
        struct tm tm;
        time_t tt = (time_t)t;
        if (t < TOKEN_TIME_MIN || t > TOKEN_TIME_MAX || !gmtime_r(&tt, &tm))
                return -EINVAL;
        if (strftime(buf, TOKEN_TIME_LEN + 1, "%Y-%m-%dT%H:%M:%SZ", &tm) != TOKEN_TIME_LEN)
                return -EINVAL;
        return 0;
}

/* --- claims --- */

/* A claim string: fits in `size` with its NUL, safe text, non-empty if `required`. */
static bool claim_ok(const char *s, size_t size, bool required)
{
        size_t n = strnlen(s, size);
        return n < size && (n > 0 || !required) && json_text_is_safe(s, n);
}

static int claims_check(const struct token_claims *c, struct rf_error *err)
{
        static const struct {
                const char *name;
                size_t off, size;
                bool required;
        } f[] = {
                {"run", offsetof(struct token_claims, run), TOKEN_RUN_MAX, true},
                {"sub", offsetof(struct token_claims, sub), TOKEN_NAME_MAX, true},
                {"on_behalf_of", offsetof(struct token_claims, on_behalf_of), TOKEN_NAME_MAX,
                 false},
                {"task", offsetof(struct token_claims, task), TOKEN_NAME_MAX, false},
                {"project", offsetof(struct token_claims, project), TOKEN_NAME_MAX, false},
                {"aud", offsetof(struct token_claims, aud), TOKEN_NAME_MAX, false},
        };
        for (size_t i = 0; i < ARRAY_SIZE(f); i++)
                if (!claim_ok((const char *)c + f[i].off, f[i].size, f[i].required))
                        return rf_error_set(err, -EINVAL,
                                            "token claim `%s`: %s, too long, or not safe text",
                                            f[i].name, f[i].required ? "empty" : "unterminated");
        if (c->iat < TOKEN_TIME_MIN || c->exp > TOKEN_TIME_MAX || c->exp <= c->iat)
                return rf_error_set(err, -EINVAL, "token times: need 1970 <= iat < exp <= 9999");
        return 0;
}

static void put_member(struct json_buf *b, const char *key, const char *val, bool first)
{
        if (!first)
                json_buf_append(b, ",", 1);
        json_buf_append_string(b, key, strlen(key));
        json_buf_append(b, ":", 1);
        json_buf_append_string(b, val, strlen(val));
}

/* Serialise checked claims as compact JSON, keys sorted. 0 or -ENOMEM/-E2BIG/-EINVAL. */
static int claims_to_json(const struct token_claims *c, struct json_buf *b)
{
        char iat[TOKEN_TIME_LEN + 1], exp[TOKEN_TIME_LEN + 1];
        if (time_format(c->iat, iat) < 0 || time_format(c->exp, exp) < 0)
                return -EINVAL;
        json_buf_append(b, "{", 1);
        put_member(b, "aud", c->aud, true);
        put_member(b, "exp", exp, false);
        put_member(b, "iat", iat, false);
        put_member(b, "jti", c->run, false);
        put_member(b, "on_behalf_of", c->on_behalf_of, false);
        put_member(b, "project", c->project, false);
        put_member(b, "run", c->run, false);
        put_member(b, "sub", c->sub, false);
        put_member(b, "task", c->task, false);
        return json_buf_append(b, "}", 1);
}

/* Copy string member `key` of `obj` into dst[size]. */
static int claim_get(const struct json_node *obj, const char *key, char *dst, size_t size,
                     bool required, struct rf_error *err)
{
        const struct json_node *n = json_object_get(obj, key);
        if (!n || n->type != JSON_STRING)
                return rf_error_set(err, -EBADMSG, "token claim `%s` missing or not a string", key);
        if (n->len >= size || (required && n->len == 0) || !json_text_is_safe(n->str, n->len))
                return rf_error_set(err, -EBADMSG, "token claim `%s` empty, too long or unsafe",
                                    key);
        memcpy(dst, n->str, n->len + 1);
        return 0;
}

static int claims_parse(const unsigned char *m, size_t len, struct token_claims *c,
                        struct rf_error *err)
{
        _cleanup_json_ struct json_node *root = NULL;
        /* exactly what token_issue writes: an object, no surrounding whitespace */
        if (len < 2 || m[0] != '{' || m[len - 1] != '}')
                return rf_error_set(err, -EBADMSG, "token claims are not a bare JSON object");
        int r = json_parse((const char *)m, len, &root, NULL);
        if (r == -ENOMEM)
                return rf_error_set(err, -ENOMEM, "out of memory parsing token claims");
        if (r < 0 || root->type != JSON_OBJECT)
                return rf_error_set(err, -EBADMSG, "token claims are not a JSON object");
        if (root->n_items != 9)
                return rf_error_set(err, -EBADMSG, "token claims: expected 9 members, got %zu",
                                    root->n_items);

        char jti[TOKEN_RUN_MAX], iat[TOKEN_TIME_LEN + 1], exp[TOKEN_TIME_LEN + 1];
        if ((r = claim_get(root, "aud", c->aud, sizeof c->aud, false, err)) < 0 ||
            (r = claim_get(root, "exp", exp, sizeof exp, true, err)) < 0 ||
            (r = claim_get(root, "iat", iat, sizeof iat, true, err)) < 0 ||
            (r = claim_get(root, "jti", jti, sizeof jti, true, err)) < 0 ||
            (r = claim_get(root, "on_behalf_of", c->on_behalf_of, sizeof c->on_behalf_of, false,
                           err)) < 0 ||
            (r = claim_get(root, "project", c->project, sizeof c->project, false, err)) < 0 ||
            (r = claim_get(root, "run", c->run, sizeof c->run, true, err)) < 0 ||
            (r = claim_get(root, "sub", c->sub, sizeof c->sub, true, err)) < 0 ||
            (r = claim_get(root, "task", c->task, sizeof c->task, false, err)) < 0)
                return r;
        if (strcmp(jti, c->run) != 0)
                return rf_error_set(err, -EBADMSG, "token claims: jti differs from run");
        if (time_parse(iat, strlen(iat), &c->iat) < 0 || time_parse(exp, strlen(exp), &c->exp) < 0)
                return rf_error_set(err, -EBADMSG, "token claims: iat/exp not RFC 3339 UTC");
        if (c->exp <= c->iat)
                return rf_error_set(err, -EBADMSG, "token claims: exp not after iat");
        return 0;
}

/* --- encoding --- */

static bool b64url_char(char ch)
{
        return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_';
}

/*
 * Decode `len` characters of unpadded base64url into out[cap]. The alphabet
 * is checked here; libsodium rejects a length of 4k+1 and non-zero unused
 * trailing bits, so every byte string has exactly one accepted encoding.
 */
static int b64url_decode(const char *s, size_t len, unsigned char *out, size_t cap, size_t *n)
{
        const char *end = NULL;
        for (size_t i = 0; i < len; i++)
                if (!b64url_char(s[i]))
                        return -EBADMSG;
        if (sodium_base642bin(out, cap, s, len, NULL, n, &end,
                              sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
            end != s + len)
                return -EBADMSG;
        return 0;
}

/* --- the key --- */

/* STATE_DIR/audit/key through the one reader (audit-key.c). */
static int key_read(const char *state_dir, unsigned char sk[crypto_sign_SECRETKEYBYTES],
                    struct rf_error *err)
{
        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "libsodium initialisation failed");
        _cleanup_close_ int sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0)
                return rf_error_set(err, negative_errno(), "open state dir %s: %m", state_dir);
        _cleanup_close_ int dfd =
                openat(sfd, "audit", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return rf_error_set(err, negative_errno(), "open %s/audit: %m", state_dir);
        int r = audit_key_read(dfd, sk, err);
        return r == -ENOENT ? rf_error_set(err, r, "no audit key in %s/audit", state_dir) : r;
}

int token_public_key(const char *state_dir, unsigned char pk[32], struct rf_error *err)
{
        unsigned char sk[crypto_sign_SECRETKEYBYTES];
        int r = key_read(state_dir, sk, err);
        if (r < 0)
                return r;
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        sodium_memzero(sk, sizeof sk);
        return 0;
}

/* --- the three operations --- */

int token_issue(const char *state_dir, const struct token_claims *c, char *out, size_t len,
                struct rf_error *err)
{
        int r = claims_check(c, err);
        if (r < 0)
                return r;
        struct json_buf m = {0};
        r = claims_to_json(c, &m);
        if (r < 0) {
                json_buf_done(&m);
                return rf_error_set(err, r, "serialise token claims: %s", strerror(-r));
        }

        unsigned char pae[TOKEN_PAE_MAX], sk[crypto_sign_SECRETKEYBYTES], body[TOKEN_BODY_MAX];
        size_t need = TOKEN_HEADER_LEN +
                      sodium_base64_ENCODED_LEN(m.len + TOKEN_SIG_LEN,
                                                sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        /* ENCODED_LEN counts the NUL */
        if (m.len + TOKEN_SIG_LEN > TOKEN_BODY_MAX || need - 1 > TOKEN_MAX) {
                json_buf_done(&m);
                return rf_error_set(err, -EINVAL, "token claims too long");
        }
        if (len < need) {
                json_buf_done(&m);
                return rf_error_set(err, -ENOBUFS, "token buffer too small (%zu < %zu)", len, need);
        }
        const void *pieces[] = {TOKEN_HEADER, m.data, "", ""};
        const size_t lens[] = {TOKEN_HEADER_LEN, m.len, 0, 0};
        ssize_t k = token_pae(4, pieces, lens, pae, sizeof pae);
        if (k < 0) { /* cannot happen: bounded above */
                json_buf_done(&m);
                return rf_error_set(err, -EINVAL, "token claims too long");
        }
        r = key_read(state_dir, sk, err);
        if (r < 0) {
                json_buf_done(&m);
                return r;
        }
        memcpy(body, m.data, m.len);
        crypto_sign_detached(body + m.len, NULL, pae, (size_t)k, sk);
        sodium_memzero(sk, sizeof sk);

        memcpy(out, TOKEN_HEADER, TOKEN_HEADER_LEN);
        sodium_bin2base64(out + TOKEN_HEADER_LEN, len - TOKEN_HEADER_LEN, body,
                          m.len + TOKEN_SIG_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        json_buf_done(&m);
        return (int)strlen(out);
}

int token_verify(const char *token, const unsigned char pk[32], int64_t now_s,
                 struct token_claims *out, struct rf_error *err)
{
        size_t len = strnlen(token, TOKEN_MAX + 1);
        if (len > TOKEN_MAX)
                return rf_error_set(err, -EBADMSG, "token longer than %d bytes", TOKEN_MAX);
        if (len < TOKEN_HEADER_LEN || memcmp(token, TOKEN_HEADER, TOKEN_HEADER_LEN) != 0)
                return rf_error_set(err, -EBADMSG,
                                    "not a PASETO v4.public token (header must be \"%s\")",
                                    TOKEN_HEADER);

        const char *body_s = token + TOKEN_HEADER_LEN;
        const char *dot = memchr(body_s, '.', len - TOKEN_HEADER_LEN);
        size_t body_len = dot ? (size_t)(dot - body_s) : len - TOKEN_HEADER_LEN;
        unsigned char body[TOKEN_BODY_MAX], footer[TOKEN_FOOTER_MAX];
        size_t n_body = 0, n_footer = 0;
        if (b64url_decode(body_s, body_len, body, sizeof body, &n_body) < 0)
                return rf_error_set(err, -EBADMSG, "token body is not unpadded base64url");
        if (dot) {
                const char *f = dot + 1;
                size_t f_len = len - (size_t)(f - token);
                /* an empty footer is written without the dot; more dots are junk */
                if (f_len == 0 || b64url_decode(f, f_len, footer, sizeof footer, &n_footer) < 0 ||
                    n_footer == 0)
                        return rf_error_set(err, -EBADMSG,
                                            "token footer is empty, too long or not base64url");
        }
        if (n_body <= TOKEN_SIG_LEN)
                return rf_error_set(err, -EBADMSG, "token has no message or no signature");

        size_t n_msg = n_body - TOKEN_SIG_LEN;
        unsigned char pae[TOKEN_PAE_MAX];
        const void *pieces[] = {TOKEN_HEADER, body, footer, ""};
        const size_t lens[] = {TOKEN_HEADER_LEN, n_msg, n_footer, 0};
        ssize_t k = token_pae(4, pieces, lens, pae, sizeof pae);
        if (k < 0)
                return rf_error_set(err, -EBADMSG, "token too long");
        if (sodium_init() < 0)
                return rf_error_set(err, -EIO, "libsodium initialisation failed");
        if (crypto_sign_verify_detached(body + n_msg, pae, (size_t)k, pk) != 0)
                return rf_error_set(err, -EKEYREJECTED,
                                    "token signature does not verify with this key");

        struct token_claims c = {0};
        int r = claims_parse(body, n_msg, &c, err);
        if (r < 0)
                return r;
        if (c.exp <= now_s)
                return rf_error_set(err, -ETIME, "token expired %" PRId64 " s ago", now_s - c.exp);
        if (c.iat > now_s + TOKEN_CLOCK_SKEW)
                return rf_error_set(err, -ETIME, "token issued %" PRId64 " s in the future",
                                    c.iat - now_s);
        if (out)
                *out = c;
        return 0;
}

int token_jwks(const char *state_dir, char *out, size_t len, struct rf_error *err)
{
        unsigned char pk[crypto_sign_PUBLICKEYBYTES], h[crypto_hash_sha256_BYTES];
        char x[sodium_base64_ENCODED_LEN(crypto_sign_PUBLICKEYBYTES,
                                         sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
        char kid[2 * 8 + 1];
        int r = token_public_key(state_dir, pk, err);
        if (r < 0)
                return r;
        crypto_hash_sha256(h, pk, sizeof pk);
        sodium_bin2hex(kid, sizeof kid, h, 8);
        sodium_bin2base64(x, sizeof x, pk, sizeof pk, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        int k = snprintf(out, len,
                         "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\","
                         "\"kid\":\"%s\",\"use\":\"sig\",\"alg\":\"EdDSA\"}]}",
                         x, kid);
        if (k < 0 || (size_t)k >= len)
                return rf_error_set(err, -ENOBUFS, "JWKS buffer too small");
        return k;
}
