/*
 * token.h — run identity tokens: a signed statement "this is run R of agent
 * A, acting on behalf of P for task T in project J, valid until E", handed
 * to the run at /run/ringfence/identity so a platform API can refuse a
 * write that carries no valid run token instead of defaulting to a person.
 *
 * Format: PASETO v4.public (Ed25519), see token.c for why and for the exact
 * byte layout. The signing key is the audit log's (STATE_DIR/audit/key), so
 * one pinned public key vouches for both the log and the tokens.
 *
 * token_verify() is pure given the public key: it is unit-tested and fuzzed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/error.h"

#define TOKEN_MAX        4096 /* bytes of a token, without a NUL */
#define TOKEN_FOOTER_MAX 512  /* bytes of a decoded footer a token may carry */
#define TOKEN_RUN_MAX    128  /* size of the run id field, NUL included */
#define TOKEN_NAME_MAX   200  /* size of sub/on_behalf_of/task/project/aud, NUL included */
#define TOKEN_CLOCK_SKEW 60   /* seconds an `iat` may lie in the verifier's future */
#define TOKEN_JWKS_MAX   256  /* bytes token_jwks() writes, NUL included */
#define TOKEN_HEADER     "v4.public."
#define TOKEN_TIME_MIN   0LL            /* 1970-01-01T00:00:00Z */
#define TOKEN_TIME_MAX   253402300799LL /* 9999-12-31T23:59:59Z */

/*
 * The claims of one token. Every string is a NUL-terminated, valid UTF-8
 * string without control, bidi or zero-width characters (json_text_is_safe);
 * `run` and `sub` are non-empty, the others may be "". On the wire `run` is
 * written twice, as "run" and as "jti" (PASETO's token id); a token where
 * they differ is refused. Times are Unix seconds, written as RFC 3339 UTC
 * ("2026-11-30T11:07:06Z").
 */
struct token_claims {
        char run[TOKEN_RUN_MAX];           /* "run" and "jti": the run id */
        char sub[TOKEN_NAME_MAX];          /* "sub": the agent */
        char on_behalf_of[TOKEN_NAME_MAX]; /* "on_behalf_of": the person */
        char task[TOKEN_NAME_MAX];         /* "task" */
        char project[TOKEN_NAME_MAX];      /* "project" */
        char aud[TOKEN_NAME_MAX];          /* "aud": the intended audience */
        int64_t iat;                       /* "iat": issued at */
        int64_t exp;                       /* "exp": expires at (exclusive) */
};

/*
 * token_issue — sign `c` with STATE_DIR/audit/key (64-byte libsodium
 * Ed25519 secret key, mode 0600, created by audit_open) and write the token,
 * NUL-terminated, into `out` (`len` bytes; TOKEN_MAX + 1 always suffices).
 * Claims are checked first: strings as described above, TOKEN_TIME_MIN <=
 * iat < exp <= TOKEN_TIME_MAX. The secret key is wiped before returning.
 * Called by the supervisor (`ringfence run`) before the run starts.
 * Returns the token's length, or -EINVAL (bad claims), -ENOENT (no key
 * yet), -EPERM (key readable by others), -EBADMSG (malformed key file),
 * -ENOBUFS (`out` too small), -errno (I/O); err->msg says which.
 */
int token_issue(const char *state_dir, const struct token_claims *c, char *out, size_t len,
                struct rf_error *err);

/*
 * token_verify — check `token` (a C string) against public key `pk` at time
 * `now_s` (Unix seconds). In this order: length <= TOKEN_MAX, header exactly
 * "v4.public.", strict unpadded base64url body (and optional footer), the
 * Ed25519 signature over PAE("v4.public.", message, footer, ""), then the
 * claims (exactly the nine members, all strings, limits as above, jti ==
 * run), then time: exp > now_s and iat <= now_s + TOKEN_CLOCK_SKEW. Nothing
 * of an unsigned message is parsed. Pure, no allocation beyond json_parse's;
 * fuzzed. `out` (may be NULL) is written only on success. Returns 0, or
 * -EBADMSG (malformed: wrong header, version or purpose, bad encoding,
 * oversize, trailing junk, bad claims), -EKEYREJECTED (signature does not
 * verify with `pk`), -ETIME (expired or not yet valid), -ENOMEM; err->msg
 * says why.
 */
int token_verify(const char *token, const unsigned char pk[32], int64_t now_s,
                 struct token_claims *out, struct rf_error *err);

/*
 * token_public_key — the public half of STATE_DIR/audit/key into `pk`.
 * Returns 0, or the errors of token_issue's key loading. For `ringfence
 * identity verify` on the host that issued the token.
 */
int token_public_key(const char *state_dir, unsigned char pk[32], struct rf_error *err);

/*
 * token_jwks — the public key as a JWK Set (RFC 7517, OKP/Ed25519 per
 * RFC 8037), one line, NUL-terminated, into `out`:
 *   {"keys":[{"kty":"OKP","crv":"Ed25519","x":"<base64url pk>",
 *             "kid":"<first 16 hex of sha256(pk)>","use":"sig","alg":"EdDSA"}]}
 * The kid is the same fingerprint `ringfence audit head` prints. Returns the
 * length written (< TOKEN_JWKS_MAX), -ENOBUFS if it does not fit in `len`
 * bytes, or the errors of token_public_key.
 */
int token_jwks(const char *state_dir, char *out, size_t len, struct rf_error *err);

/*
 * token_pae — PASETO Pre-Authentication Encoding of `n` pieces: LE64(n),
 * then for each piece LE64(length) and its bytes (the top bit of every
 * LE64 cleared, as the spec says). Writes into `out` (`cap` bytes).
 * Returns the encoded length, or -ENOBUFS. Pure; exported for the tests.
 */
ssize_t token_pae(size_t n, const void *const pieces[], const size_t lens[], unsigned char *out,
                  size_t cap);
