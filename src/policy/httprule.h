/*
 * httprule.h — HTTP rules on terminated hosts (pure; unit-tested, fuzzed).
 *
 * An HTTP rule limits what a run may do on one host and port. Examples
 * (a star written "\*" here only because C comments cannot hold "/" "*"):
 *
 *   api.github.com GET,POST /repos/acme/\*\*
 *   api.internal:8080 * /v1/jobs/\*
 *
 * "HOST[:PORT] METHOD[,METHOD...] PATH-GLOB" (`--allow-http`, or a string
 * of the policy's `network.http`). HOST is one name (canonicalised like a
 * network rule's: rules.h; no wildcard, no address); a bare HOST means
 * port 443, HOST:PORT that port. METHOD is `*` (any method) or a list of
 * GET HEAD POST PUT PATCH DELETE OPTIONS (any case as written; compared
 * in upper case, as HTTP methods are case-sensitive). PATH-GLOB starts
 * with '/': `*` matches within one segment (never '/'), `**` as a whole
 * segment matches zero or more segments, every other byte is literal (no
 * query part: the glob is matched against the request's path before '?').
 *
 * A host and port with at least one rule is "ruled": every HTTP request
 * to it (terminated TLS, or plaintext proxied or captured) must match
 * one of its rules, else the egress process answers 403 naming the
 * method, the path and the host's rules. A rule does not allow the host:
 * an allow rule must still reach it.
 *
 * Threat notes: the path comes from the run, the glob from the operator.
 * The path is compared as sent (no decoding, no normalisation), so
 * whatever a server could read differently from its bytes is refused
 * before any matching (httprule_path_problem): a dot-segment ("." or
 * "..", also before a ';' parameter: "..;x", which Java servers take as
 * ".."), an encoded '/', '.' or '\' (%2F %2E %5C in any case), a raw
 * backslash, an empty segment ("//"). Anything else percent-encoded is
 * compared literally: a glob never matches it by accident of decoding.
 * Matching is greedy with one backtrack point per level (segments, then
 * bytes within a segment): O(glob × path) at worst, never exponential.
 * Every size is bounded (HTTPRULE_GLOB_MAX, HTTPRULE_SEGS_MAX,
 * HTTPRULE_MAX). Nothing here allocates.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/rules.h"

#define HTTPRULE_MAX      64   /* rules in one run */
#define HTTPRULE_GLOB_MAX 1024 /* bytes of a path glob */
#define HTTPRULE_SEGS_MAX 64   /* segments of a path glob */
#define HTTPRULE_INPUT_MAX                                                                         \
        (NET_HOST_MAX + 8 + 64 + HTTPRULE_GLOB_MAX + 16) /* bytes of a rule as written */
/* canonical text: "host[:port] METHODS glob", NUL included */
#define HTTPRULE_TEXT_MAX (NET_HOST_MAX + 7 + 40 + HTTPRULE_GLOB_MAX + 3)

/* The methods a rule names; HTTPRULE_M_ANY is `*` (any method token). */
enum {
        HTTPRULE_M_DELETE = 1u << 0,
        HTTPRULE_M_GET = 1u << 1,
        HTTPRULE_M_HEAD = 1u << 2,
        HTTPRULE_M_OPTIONS = 1u << 3,
        HTTPRULE_M_PATCH = 1u << 4,
        HTTPRULE_M_POST = 1u << 5,
        HTTPRULE_M_PUT = 1u << 6,
        HTTPRULE_M_ANY = 1u << 7,
};

struct http_rule {
        char host[NET_HOST_MAX + 1]; /* canonical name */
        uint16_t port;               /* 443 for a bare host */
        unsigned methods;            /* HTTPRULE_M_* bits */
        char glob[HTTPRULE_GLOB_MAX + 1];
        size_t glob_len;
        char text[HTTPRULE_TEXT_MAX]; /* canonical: re-parses to the same rule */
};

/*
 * httprule_parse — one rule from `len` bytes of s (need not be
 * NUL-terminated; fields separated by spaces). Returns 0 with *out filled
 * (out->text canonical: host lower case, ":443" dropped, methods upper
 * case in alphabetical order, the glob as given), or -EINVAL with *why a
 * static phrase. Pure.
 */
int httprule_parse(const char *s, size_t len, struct http_rule *out, const char **why);

/*
 * httprule_path_problem — NULL when path[0..len) (the request's path,
 * before any '?': callers cut the query off) may be matched, else a static
 * phrase saying what it holds: not a path (no leading '/'), a dot-segment,
 * an encoded '/', '.' or '\', a backslash, an empty segment (a trailing
 * '/' is not one). The same checks apply to a rule's glob. Pure.
 */
const char *httprule_path_problem(const char *path, size_t len);

/*
 * httprule_glob_match — whether glob[0..glen) (a valid rule's) matches
 * path[0..plen) (one httprule_path_problem accepts). Pure.
 */
bool httprule_glob_match(const char *glob, size_t glen, const char *path, size_t plen);

/* httprule_method_match — whether the method token (case-sensitive)
 * is one of `methods`. Pure. */
bool httprule_method_match(unsigned methods, const char *method, size_t len);

/* httprule_ruled — whether any rule of v[n] names canonical host and port. Pure. */
bool httprule_ruled(const struct http_rule *v, size_t n, const char *host, uint16_t port);

enum httprule_verdict {
        HTTPRULE_UNRULED,  /* no rule names the host and port: not ours to judge */
        HTTPRULE_ALLOWED,  /* a rule of the host allows the method and path */
        HTTPRULE_BAD_PATH, /* the path holds what httprule_path_problem refuses */
        HTTPRULE_NO_RULE,  /* ruled, and no rule allows the method and path */
        _HTTPRULE_VERDICT_MAX,
        _HTTPRULE_VERDICT_INVALID = -22,
};

/*
 * httprule_check — the decision for one request: method[0..mlen) to
 * canonical host and port, target[0..tlen) its request target in origin
 * form (the path and any query; tlen 0 reads as "/"). *why is set for
 * HTTPRULE_BAD_PATH (the problem). Pure.
 */
enum httprule_verdict httprule_check(const struct http_rule *v, size_t n, const char *host,
                                     uint16_t port, const char *method, size_t mlen,
                                     const char *target, size_t tlen, const char **why);

/*
 * httprule_host_text — the canonical texts of the rules of v[n] naming
 * host and port, joined by "; ", into out[size] (NUL-terminated; cut with
 * "..." when it does not fit). Returns the length written. Pure.
 */
size_t httprule_host_text(const struct http_rule *v, size_t n, const char *host, uint16_t port,
                          char *out, size_t size);

/*
 * httprule_names — the distinct host names of v[n] (for the run CA),
 * appended to names[*k..max) where not already among names[0..*k).
 * Returns 0, or -E2BIG when more than max names would be needed (*k is
 * then max). Pure.
 */
int httprule_names(const struct http_rule *v, size_t n, char names[][NET_HOST_MAX + 1], size_t *k,
                   size_t max);
