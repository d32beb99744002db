/*
 * npmrc.h — the registry tokens of an .npmrc, for `--profile npm`
 * (issue 16): each `//HOST[:PORT]/PATH/:_authToken=VALUE` line becomes an
 * injected secret (the run's copy of the file reads the token from a
 * variable holding a placeholder; the egress process puts the value on
 * the wire toward HOST only), and the lines that hold a credential in any
 * other form (`_auth`, `_password`), or bound to no host name (an IP
 * literal: shared/hostname.h), are left out of the run's copy.
 *
 * Pure and bounded: at most NPMRC_TOKENS_MAX tokens, NPMRC_VALUE_MAX bytes
 * of a value, NPMRC_HOST_MAX of a host; fuzzed (tests/fuzz/fuzz_npmrc.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define NPMRC_TOKENS_MAX 16
#define NPMRC_VALUE_MAX  4096
#define NPMRC_HOST_MAX   261 /* a name of 253, ':' and a port */

struct npmrc_token {
        char host[NPMRC_HOST_MAX + 1]; /* "host" or "host:port", lower case */
        size_t value_off, value_len;   /* the literal token in the input */
};

/* What a line of the input is to the run's copy. */
enum npmrc_line {
        NPMRC_KEEP,  /* copied as it is */
        NPMRC_TOKEN, /* a token: its value becomes ${VAR} */
        NPMRC_DROP,  /* a credential in another form: left out */
};

/*
 * npmrc_scan — read `len` bytes of an .npmrc: the tokens in order into
 * out[] (*n of them). Returns 0, -E2BIG past NPMRC_TOKENS_MAX tokens or a
 * value/host past its bound, -EINVAL for a NUL byte. A token whose value
 * is a variable (`${NPM_TOKEN}`) is not one: npm expands it itself, and
 * its line is kept.
 */
int npmrc_scan(const char *buf, size_t len, struct npmrc_token *out, size_t *n);

/*
 * npmrc_line_end — where the line of buf[0, len) that starts at s ends: the
 * first LF or CR from s (npm's reader ends a line at either), or len. Pure.
 */
size_t npmrc_line_end(const char *buf, size_t len, size_t s);

/*
 * npmrc_classify — what the line buf[0..len) (no newline) is, with *value_off
 * and *value_len of a token's value (NPMRC_TOKEN) and its host in host[]
 * (NPMRC_HOST_MAX + 1 bytes). Pure.
 */
enum npmrc_line npmrc_classify(const char *line, size_t len, size_t *value_off, size_t *value_len,
                               char *host);
