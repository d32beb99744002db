/*
 * pipconf.h — the index credentials of a pip.conf, for `--profile pip`
 * (issue 16): each `http(s)://USER:PASSWORD@HOST[:PORT]/...` (or
 * `https://TOKEN@HOST/...`, a token as the user name) in the file becomes
 * an injected secret. The run's copy of the file holds the placeholder
 * where the password (or token) was; pip sends it in `Authorization:
 * Basic base64(USER:PLACEHOLDER)`, and the egress process puts the real
 * value there, toward HOST only. A line that holds a credential this
 * reader cannot bind to a host (a comment, an IP literal) or cannot read
 * (an '@' further in a URL: a password with an unencoded '/', '?', '#' or
 * tab) is left out of the run's copy.
 *
 * Pure and bounded: at most PIPCONF_CREDS_MAX credentials,
 * PIPCONF_VALUE_MAX bytes of one, PIPCONF_HOST_MAX of a host; fuzzed
 * (tests/fuzz/fuzz_pipconf.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PIPCONF_CREDS_MAX 16
#define PIPCONF_VALUE_MAX 4096
#define PIPCONF_HOST_MAX  261 /* a name of 253, ':' and a port */

struct pipconf_cred {
        char host[PIPCONF_HOST_MAX + 1]; /* "host" or "host:port", lower case; "" drop */
        size_t off, len;                 /* the credential as written (percent-encoded) */
        size_t line_off, line_len;       /* its line, without the newline */
};

/*
 * pipconf_scan — read `len` bytes of a pip.conf: every credential of a URL
 * in it, in order, into out[] (*n of them; one with host "" stands for a
 * line to leave out). 0, -E2BIG past PIPCONF_CREDS_MAX or a credential past
 * PIPCONF_VALUE_MAX, -EINVAL for a NUL byte.
 */
int pipconf_scan(const char *buf, size_t len, struct pipconf_cred *out, size_t *n);

/*
 * pipconf_decode — a URL's percent-encoding undone (what pip sends): `s`
 * of `len` bytes into out (at least len + 1 bytes, NUL-terminated), its
 * length in *out_len. 0, or -EINVAL for a malformed escape or a %00.
 */
int pipconf_decode(const char *s, size_t len, char *out, size_t *out_len);
