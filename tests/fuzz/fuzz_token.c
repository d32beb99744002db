/*
 * fuzz_token.c — libFuzzer target for run identity token parsing
 * (src/audit/token.c): token_verify with a fixed key.
 *
 * The first input byte picks the mode:
 *   even — the rest is a token string, verified as is (header, base64url,
 *          footer, lengths, signature: the path an attacker reaches);
 *   odd  — the rest is a claims message, signed here with the fixed key
 *          and wrapped as a v4.public token, so the fuzzer also reaches the
 *          claims parser behind the signature check.
 * The token is copied into a heap buffer of exactly its length plus NUL, so
 * a read past it is an ASan report. Beyond "no crash, no leak, no UB", a
 * violated property aborts:
 *   - every refusal is -EBADMSG, -EKEYREJECTED, -ETIME or -ENOMEM;
 *   - accepted claims are NUL-terminated, run and sub non-empty, iat < exp,
 *     exp > now and iat <= now + TOKEN_CLOCK_SKEW.
 */
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1796036826LL /* 2026-11-30T11:07:06Z, as in the seed corpus */

static unsigned char pk[32], sk[64];

static void keys(void)
{
        static int done;
        if (done)
                return;
        unsigned char seed[32];
        memset(seed, 0x5a, sizeof seed); /* fixed: the seed corpus is signed with it */
        if (sodium_init() < 0)
                abort();
        crypto_sign_seed_keypair(pk, sk, seed);
        done = 1;
}

static char *sign_message(const uint8_t *m, size_t n)
{
        if (n > TOKEN_MAX)
                return NULL;
        unsigned char *body = malloc(n + 64);
        unsigned char *pae = malloc(n + 64 + 64);
        char *tok =
                malloc(sizeof TOKEN_HEADER +
                       sodium_base64_ENCODED_LEN(n + 64, sodium_base64_VARIANT_URLSAFE_NO_PADDING));
        if (!body || !pae || !tok)
                abort();
        const void *p[] = {TOKEN_HEADER, m, "", ""};
        const size_t l[] = {sizeof TOKEN_HEADER - 1, n, 0, 0};
        ssize_t k = token_pae(4, p, l, pae, n + 128);
        if (k < 0)
                abort();
        if (n)
                memcpy(body, m, n);
        crypto_sign_detached(body + n, NULL, pae, (size_t)k, sk);
        strcpy(tok, TOKEN_HEADER);
        sodium_bin2base64(
                tok + sizeof TOKEN_HEADER - 1,
                sodium_base64_ENCODED_LEN(n + 64, sodium_base64_VARIANT_URLSAFE_NO_PADDING), body,
                n + 64, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        free(body);
        free(pae);
        return tok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        keys();
        if (size == 0)
                return 0;
        char *tok;
        if (data[0] & 1) {
                tok = sign_message(data + 1, size - 1);
                if (!tok)
                        return 0;
        } else {
                tok = malloc(size);
                if (!tok)
                        return 0;
                memcpy(tok, data + 1, size - 1);
                tok[size - 1] = '\0';
        }

        struct token_claims c;
        struct rf_error err = {0};
        int r = token_verify(tok, pk, NOW, &c, &err);
        if (r < 0) {
                if (r != -EBADMSG && r != -EKEYREJECTED && r != -ETIME && r != -ENOMEM)
                        abort();
        } else {
                if (r != 0 || !memchr(c.run, '\0', sizeof c.run) ||
                    !memchr(c.sub, '\0', sizeof c.sub) || !memchr(c.aud, '\0', sizeof c.aud) ||
                    !memchr(c.task, '\0', sizeof c.task) ||
                    !memchr(c.project, '\0', sizeof c.project) ||
                    !memchr(c.on_behalf_of, '\0', sizeof c.on_behalf_of))
                        abort();
                if (!c.run[0] || !c.sub[0] || c.exp <= c.iat || c.exp <= NOW ||
                    c.iat > NOW + TOKEN_CLOCK_SKEW)
                        abort();
        }
        free(tok);
        return 0;
}
