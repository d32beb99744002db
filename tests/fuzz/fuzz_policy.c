/*
 * fuzz_policy.c — libFuzzer target for policy_parse() (src/policy).
 *
 * Invariants checked on every input:
 *   - a rejected policy yields a single printable error line with a known
 *     code, and leaves *ret alone;
 *   - an accepted policy serialises with policy_to_json(), the output parses
 *     again and serialises to the same bytes (canonical fixed point);
 *   - policy_dup() copies it exactly, and merging a policy with its own copy
 *     succeeds and changes nothing;
 *   - policy_apply_defaults() keeps it serialisable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static void check_line(const char *s)
{
        for (; *s; s++)
                CHECK((unsigned char)*s >= 0x20 && (unsigned char)*s != 0x7f);
}

static char *canonical(const struct rf_policy *p)
{
        char *s = NULL;
        CHECK(policy_to_json(p, &s) == 0);
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct rf_policy *p = (struct rf_policy *)0x1, *q = NULL, *c = NULL;
        struct rf_error err = {0};
        char line[2048];
        int r;

        r = policy_parse((const char *)data, size, "fuzz.json", &p, &err);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -E2BIG || r == -ENOMEM);
                CHECK(p == (struct rf_policy *)0x1);
                rf_error_format(&err, line, sizeof line);
                check_line(line);
                return 0;
        }

        char *s1 = canonical(p);
        CHECK(policy_parse(s1, strlen(s1), "canonical", &q, NULL) == 0);
        char *s2 = canonical(q);
        CHECK(strcmp(s1, s2) == 0);

        CHECK(policy_dup(p, &c) == 0);
        char *s3 = canonical(c);
        CHECK(strcmp(s1, s3) == 0);
        CHECK(policy_merge(p, c, NULL) == 0);
        char *s4 = canonical(p);
        CHECK(strcmp(s1, s4) == 0);

        CHECK(policy_apply_defaults(p) == 0);
        free(canonical(p));

        free(s1);
        free(s2);
        free(s3);
        free(s4);
        policy_free(p);
        policy_free(q);
        policy_free(c);
        return 0;
}
