/*
 * test_token.c — run identity tokens (src/audit/token.c): the PAE vectors
 * of the PASETO spec, issue → verify, and each way a token must be refused
 * (tampered claim, wrong key, expired, future iat, bad base64, wrong header,
 * wrong version or purpose, missing signature, oversize, trailing junk),
 * each for the right reason. Plus the JWKS shape.
 *
 * Keys live in a state dir under /tmp (mkdtemp), created by audit_open as
 * `ringfence run` does, removed at the end.
 */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/token.h"
#include "shared/json.h"
#include "tap.h"

#define NOW 1796036826LL /* 2026-11-30T11:07:06Z */

static char *mk_state(void)
{
        char *p = strdup("/tmp/rf-test-token.XXXXXX");
        if (!p || !mkdtemp(p)) {
                perror("mkdtemp");
                exit(1);
        }
        struct audit_log *log = NULL;
        struct rf_error err = {0};
        if (audit_open(p, &log, &err) < 0) {
                diag("audit_open: %s", err.msg);
                exit(1);
        }
        audit_close(log);
        return p;
}

static void rm_state(char *p)
{
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
        if (system(cmd) != 0)
                diag("could not remove %s", p);
        free(p);
}

static struct token_claims claims(void)
{
        struct token_claims c = {.iat = NOW, .exp = NOW + 3600};
        strcpy(c.run, "01JDX7Q5R8M9T0V1W2X3Y4Z5A6");
        strcpy(c.sub, "review-bot");
        strcpy(c.on_behalf_of, "alice@example.com");
        strcpy(c.task, "PR #42: \"fix\" the \\ build");
        strcpy(c.project, "acme/web");
        strcpy(c.aud, "https://api.example.com");
        return c;
}

static void test_pae(void)
{
        unsigned char out[64];
        const void *p[1];
        size_t l[1];
        ok(token_pae(0, p, l, out, sizeof out) == 8 && memcmp(out, "\0\0\0\0\0\0\0\0", 8) == 0,
           "PAE([]) is 8 zero bytes");
        p[0] = "";
        l[0] = 0;
        ok(token_pae(1, p, l, out, sizeof out) == 16 &&
                   memcmp(out, "\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0,
           "PAE([\"\"])");
        p[0] = "test";
        l[0] = 4;
        ok(token_pae(1, p, l, out, sizeof out) == 20 &&
                   memcmp(out, "\x01\0\0\0\0\0\0\0\x04\0\0\0\0\0\0\0test", 20) == 0,
           "PAE([\"test\"])");
        is_int(token_pae(1, p, l, out, 19), -ENOBUFS, "PAE refuses a short buffer");
}

/* Re-encode a token's body after `edit` changed its decoded bytes. */
static void flip_payload_byte(const char *tok, char *out, size_t len, size_t at)
{
        unsigned char body[TOKEN_MAX];
        size_t n = 0;
        const char *b = tok + strlen(TOKEN_HEADER);
        if (sodium_base642bin(body, sizeof body, b, strlen(b), NULL, &n, NULL,
                              sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
                abort();
        body[at] ^= 0x01;
        strcpy(out, TOKEN_HEADER);
        sodium_bin2base64(out + strlen(TOKEN_HEADER), len - strlen(TOKEN_HEADER), body, n,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

/* Sign an arbitrary message with `sk` as a v4.public token (for claim-parser cases). */
static void sign_raw(const unsigned char *sk, const char *msg, char *out, size_t len)
{
        unsigned char body[TOKEN_MAX], pae[TOKEN_MAX + 64];
        size_t m = strlen(msg);
        const void *p[] = {TOKEN_HEADER, msg, "", ""};
        const size_t l[] = {strlen(TOKEN_HEADER), m, 0, 0};
        ssize_t k = token_pae(4, p, l, pae, sizeof pae);
        memcpy(body, msg, m);
        crypto_sign_detached(body + m, NULL, pae, (size_t)k, sk);
        strcpy(out, TOKEN_HEADER);
        sodium_bin2base64(out + strlen(TOKEN_HEADER), len - strlen(TOKEN_HEADER), body, m + 64,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static void test_tokens(void)
{
        char *state = mk_state();
        struct rf_error err = {0};
        unsigned char pk[32];
        char tok[TOKEN_MAX + 1], bad[TOKEN_MAX + 64];
        struct token_claims c = claims(), got;

        is_int(token_public_key(state, pk, &err), 0, "public key from the audit key");
        int n = token_issue(state, &c, tok, sizeof tok, &err);
        ok(n > 0 && (size_t)n == strlen(tok), "issue: %s", n < 0 ? err.msg : "ok");
        ok(strncmp(tok, "v4.public.", 10) == 0 && !strchr(tok + 10, '.'), "v4.public, no footer");

        memset(&got, 0, sizeof got);
        is_int(token_verify(tok, pk, NOW + 10, &got, &err), 0, "round trip verifies");
        ok(memcmp(&got, &c, sizeof c) == 0, "round trip keeps every claim");
        is_str(got.task, "PR #42: \"fix\" the \\ build", "escaped claim survives");

        /* the message is compact sorted JSON with RFC 3339 times */
        unsigned char body[TOKEN_MAX];
        size_t bn = 0;
        sodium_base642bin(body, sizeof body, tok + 10, strlen(tok + 10), NULL, &bn, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        const char *want_prefix = "{\"aud\":\"https://api.example.com\",\"exp\":\"2026-11-30T12:"
                                  "07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\",\"jti\":\"01JDX";
        ok(bn > 64 && memcmp(body, want_prefix, strlen(want_prefix)) == 0,
           "claims are sorted compact JSON with RFC 3339 times");

        /* tampered claim: flip a byte in the message */
        flip_payload_byte(tok, bad, sizeof bad, 10);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EKEYREJECTED, "tampered claim: %s",
               err.msg);
        flip_payload_byte(tok, bad, sizeof bad, bn - 1);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EKEYREJECTED, "tampered signature");

        /* wrong key */
        unsigned char pk2[32], sk2[64];
        crypto_sign_keypair(pk2, sk2);
        is_int(token_verify(tok, pk2, NOW, NULL, &err), -EKEYREJECTED, "wrong key: %s", err.msg);

        /* time */
        is_int(token_verify(tok, pk, NOW + 3600, NULL, &err), -ETIME, "expired at exp: %s",
               err.msg);
        is_int(token_verify(tok, pk, NOW + 3599, NULL, &err), 0, "valid one second before exp");
        is_int(token_verify(tok, pk, NOW - 60, NULL, &err), 0, "iat within the clock skew");
        is_int(token_verify(tok, pk, NOW - 61, NULL, &err), -ETIME, "iat in the future: %s",
               err.msg);

        /* header, version, purpose */
        snprintf(bad, sizeof bad, "v3.public.%s", tok + 10);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "v3.public refused: %s", err.msg);
        snprintf(bad, sizeof bad, "v4.local.%s", tok + 10);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "v4.local refused");
        snprintf(bad, sizeof bad, "V4.public.%s", tok + 10);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "header is case-sensitive");
        is_int(token_verify("", pk, NOW, NULL, &err), -EBADMSG, "empty token");
        is_int(token_verify("v4.public.", pk, NOW, NULL, &err), -EBADMSG, "no body: %s", err.msg);

        /* encoding */
        snprintf(bad, sizeof bad, "%s=", tok);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "padding refused: %s", err.msg);
        snprintf(bad, sizeof bad, "%s", tok);
        bad[20] = '+';
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "standard-alphabet '+' refused");
        bad[20] = ' ';
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "whitespace refused");
        snprintf(bad, sizeof bad, "%s", tok);
        while ((strlen(bad) - 10) % 4 != 1)
                strcat(bad, "A");
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG,
               "a body of 4k+1 characters refused");
        snprintf(bad, sizeof bad, "%s.", tok);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "trailing dot refused");
        snprintf(bad, sizeof bad, "%s.Zm9v.Zm9v", tok);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "second footer refused");
        snprintf(bad, sizeof bad, "%s.Zm9v", tok);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EKEYREJECTED,
               "an added footer breaks the signature");
        snprintf(bad, sizeof bad, "%s\n", tok);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "trailing newline refused");

        /* non-canonical last character: an unused low bit set */
        static const char alphabet[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        snprintf(bad, sizeof bad, "%s", tok);
        size_t bl = strlen(bad);
        if ((bl - 10) % 4 != 0) {
                size_t v = (size_t)(strchr(alphabet, bad[bl - 1]) - alphabet);
                bad[bl - 1] = alphabet[v ^ 1];
                is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG,
                       "non-canonical tail refused");
        } else {
                ok(true, "non-canonical tail: body is a multiple of 3 bytes (skip)");
        }

        /* missing signature: a body of 64 bytes or fewer */
        unsigned char z[64] = {0};
        strcpy(bad, TOKEN_HEADER);
        sodium_bin2base64(bad + 10, sizeof bad - 10, z, 64,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "signature only: %s", err.msg);
        sodium_bin2base64(bad + 10, sizeof bad - 10, (const unsigned char *)"{}", 2,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        is_int(token_verify(bad, pk, NOW, NULL, &err), -EBADMSG, "message without signature");

        /* oversize */
        char *big = malloc(TOKEN_MAX + 2);
        memcpy(big, TOKEN_HEADER, 10);
        memset(big + 10, 'A', TOKEN_MAX - 8);
        big[TOKEN_MAX + 1] = '\0';
        is_int(token_verify(big, pk, NOW, NULL, &err), -EBADMSG, "oversize: %s", err.msg);
        free(big);

        /* issue refuses bad claims and small buffers */
        struct token_claims b = claims();
        b.sub[0] = '\0';
        is_int(token_issue(state, &b, tok, sizeof tok, &err), -EINVAL, "empty sub refused");
        b = claims();
        strcpy(b.task, "a\x1b[2Jb");
        is_int(token_issue(state, &b, tok, sizeof tok, &err), -EINVAL, "control char refused");
        b = claims();
        memset(b.project, 'p', sizeof b.project); /* unterminated */
        is_int(token_issue(state, &b, tok, sizeof tok, &err), -EINVAL, "unterminated refused");
        b = claims();
        b.exp = b.iat;
        is_int(token_issue(state, &b, tok, sizeof tok, &err), -EINVAL, "exp == iat refused");
        b = claims();
        is_int(token_issue(state, &b, tok, 40, &err), -ENOBUFS, "small buffer refused");

        /* the largest claims fit in TOKEN_MAX */
        b = claims();
        memset(b.run, '"', sizeof b.run - 1);
        b.run[sizeof b.run - 1] = '\0';
        char *fields[] = {b.sub, b.on_behalf_of, b.task, b.project, b.aud};
        for (size_t i = 0; i < 5; i++) {
                memset(fields[i], '\\', TOKEN_NAME_MAX - 1);
                fields[i][TOKEN_NAME_MAX - 1] = '\0';
        }
        b.exp = TOKEN_TIME_MAX;
        n = token_issue(state, &b, tok, sizeof tok, &err);
        ok(n > 0 && n <= TOKEN_MAX, "largest claims fit (%d bytes)", n);
        is_int(token_verify(tok, pk, NOW, &got, &err), 0, "largest claims verify");
        ok(memcmp(&got, &b, sizeof b) == 0, "largest claims round trip");

        /* claims the signer never writes are still refused when signed */
        unsigned char sk3[64], pk3[32];
        crypto_sign_keypair(pk3, sk3);
        static const struct {
                const char *msg, *why;
        } cases[] = {
                {"[]", "not an object"},
                {"{\"aud\":\"\",\"exp\":\"2026-11-30T12:07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r1\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r2\","
                 "\"sub\":\"a\",\"task\":\"\"}",
                 "jti differs from run"},
                {"{\"aud\":\"\",\"exp\":\"2026-11-30T12:07:06+00:00\",\"iat\":\"2026-11-30T11:07:"
                 "06Z\",\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\"}",
                 "non-Z time"},
                {"{\"aud\":\"\",\"exp\":\"2026-02-29T12:07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\"}",
                 "Feb 29 in a common year"},
                {"{\"aud\":\"\",\"exp\":1796040426,\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\"}",
                 "numeric exp"},
                {"{\"aud\":\"\",\"exp\":\"2026-11-30T12:07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\",\"admin\":\"1\"}",
                 "unknown member"},
                {"{\"aud\":\"\",\"exp\":\"2026-11-30T12:07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\"} ",
                 "trailing bytes"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                sign_raw(sk3, cases[i].msg, bad, sizeof bad);
                is_int(token_verify(bad, pk3, NOW, NULL, &err), -EBADMSG, "signed but %s: %s",
                       cases[i].why, err.msg);
        }
        sign_raw(sk3,
                 "{\"aud\":\"\",\"exp\":\"2026-11-30T12:07:06Z\",\"iat\":\"2026-11-30T11:07:06Z\","
                 "\"jti\":\"r\",\"on_behalf_of\":\"\",\"project\":\"\",\"run\":\"r\","
                 "\"sub\":\"a\",\"task\":\"\"}",
                 bad, sizeof bad);
        is_int(token_verify(bad, pk3, NOW, &got, &err), 0, "hand-signed minimal claims verify");
        ok(got.exp == NOW + 3600 && got.iat == NOW, "RFC 3339 parse matches");

        /* JWKS */
        char jwks[TOKEN_JWKS_MAX];
        n = token_jwks(state, jwks, sizeof jwks, &err);
        ok(n > 0, "jwks: %s", n < 0 ? err.msg : jwks);
        _cleanup_json_ struct json_node *root = NULL;
        ok(n > 0 && json_parse(jwks, (size_t)n, &root, NULL) == 0, "jwks is JSON");
        const struct json_node *k0 = root ? json_array_get(json_object_get(root, "keys"), 0) : NULL;
        const struct json_node *x = k0 ? json_object_get(k0, "x") : NULL;
        unsigned char xpk[32];
        size_t xn = 0;
        ok(x && x->type == JSON_STRING &&
                   sodium_base642bin(xpk, sizeof xpk, x->str, x->len, NULL, &xn, NULL,
                                     sodium_base64_VARIANT_URLSAFE_NO_PADDING) == 0 &&
                   xn == 32 && memcmp(xpk, pk, 32) == 0,
           "jwks x is the public key");
        const struct json_node *kid = k0 ? json_object_get(k0, "kid") : NULL;
        unsigned char h[32];
        char hex[17];
        crypto_hash_sha256(h, pk, 32);
        sodium_bin2hex(hex, sizeof hex, h, 8);
        ok(kid && kid->type == JSON_STRING && strcmp(kid->str, hex) == 0,
           "kid is the sha256 fingerprint");
        is_int(token_jwks(state, jwks, 20, &err), -ENOBUFS, "jwks: small buffer refused");

        rm_state(state);
        struct rf_error e2 = {0};
        is_int(token_issue("/nonexistent-rf-state", &c, tok, sizeof tok, &e2), -ENOENT,
               "no state dir: %s", e2.msg);
}

/*
 * One reader of the signing key (audit-key.c): the token's reader and the
 * audit log's (audit_head signs with the key) refuse each bad key alike.
 */
static void test_one_key_reader(void)
{
        char *state = mk_state();
        char key[600], saved[600], pub[600];
        unsigned char pk[32];
        char head[2048];
        snprintf(key, sizeof key, "%s/audit/key", state);
        snprintf(saved, sizeof saved, "%s/audit/key.saved", state);
        snprintf(pub, sizeof pub, "%s/audit/key.pub", state);

        struct rf_error e1 = {0}, e2 = {0};
        is_int(token_public_key(state, pk, &e1), 0, "control: the token's reader reads the key");
        is_int(audit_head(state, head, sizeof head, &e2), 0, "control: the log's reader too");

        static const struct {
                const char *what;
                int want;
        } cases[] = {
                {"mode 0640", -EPERM},
                {"63 bytes", -EBADMSG},
                {"a symlink", -ELOOP},
                {"absent", -ENOENT},
        };
        if (rename(key, saved) < 0) {
                diag("rename: %m");
                return;
        }
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                char cmd[2048];
                unlink(key);
                if (i == 0)
                        snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0640 '%s'", saved, key,
                                 key);
                else if (i == 1)
                        snprintf(cmd, sizeof cmd, "head -c 63 '%s' >'%s' && chmod 0600 '%s'", saved,
                                 key, key);
                else if (i == 2)
                        snprintf(cmd, sizeof cmd, "ln -s '%s' '%s'", saved, key);
                else
                        snprintf(cmd, sizeof cmd, "true");
                if (system(cmd) != 0)
                        diag("setup of %s failed", cases[i].what);
                struct rf_error a = {0}, b = {0};
                int ra = token_public_key(state, pk, &a),
                    rb = audit_head(state, head, sizeof head, &b);
                is_int(ra, cases[i].want, "a key that is %s: the token's reader refuses (%s)",
                       cases[i].what, a.msg);
                is_int(rb, cases[i].want, "... and the log's reader alike (%s)", b.msg);
        }
        unlink(key);
        if (rename(saved, key) < 0)
                diag("rename back: %m");
        rm_state(state);
}

int main(void)
{
        if (sodium_init() < 0)
                return 1;
        test_pae();
        test_tokens();
        test_one_key_reader();
        return done();
}
