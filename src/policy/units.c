/*
 * units.c — the small value grammars shared by policy files and CLI flags:
 * sizes "N[K|M|G]", durations "N(ms|s|m|h)", CPU counts "N[.DDD]", and
 * environment variable names (see policy.h).
 *
 * All are strict (no signs, spaces, or other suffixes) and exact: overflow
 * is an error (-ERANGE), never a wrap or a clamp, because a wrapped limit
 * is a weaker limit than the one asked for.
 */
#include <string.h>

#include "policy/policy.h"

/* Read a run of decimal digits into *ret; returns the number of digits, or -ERANGE. */
static int read_digits(const char **s, uint64_t *ret)
{
        uint64_t v = 0;
        int n = 0;

        while (**s >= '0' && **s <= '9') {
                unsigned d = (unsigned)(**s - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
                (*s)++;
                n++;
        }
        *ret = v;
        return n;
}

static int mul_checked(uint64_t a, uint64_t b, uint64_t *ret)
{
        if (__builtin_mul_overflow(a, b, ret))
                return -ERANGE;
        return 0;
}

int parse_size(const char *s, uint64_t *ret)
{
        uint64_t v, mult = 1;
        int n;

        if (!s)
                return -EINVAL;
        n = read_digits(&s, &v);
        if (n < 0)
                return n;
        if (n == 0)
                return -EINVAL;
        switch (*s) {
        case '\0':
                break;
        case 'k':
        case 'K':
                mult = 1ULL << 10;
                s++;
                break;
        case 'm':
        case 'M':
                mult = 1ULL << 20;
                s++;
                break;
        case 'g':
        case 'G':
                mult = 1ULL << 30;
                s++;
                break;
        default:
                return -EINVAL;
        }
        if (*s != '\0')
                return -EINVAL;
        return mul_checked(v, mult, ret);
}

int parse_duration(const char *s, uint64_t *ret_ms)
{
        uint64_t v, mult;
        int n;

        if (!s)
                return -EINVAL;
        n = read_digits(&s, &v);
        if (n < 0)
                return n;
        if (n == 0)
                return -EINVAL;
        if (strcmp(s, "ms") == 0)
                mult = 1;
        else if (strcmp(s, "s") == 0)
                mult = 1000;
        else if (strcmp(s, "m") == 0)
                mult = 60 * 1000;
        else if (strcmp(s, "h") == 0)
                mult = 60 * 60 * 1000;
        else
                return -EINVAL;
        return mul_checked(v, mult, ret_ms);
}

int parse_cpus(const char *s, uint64_t *ret_milli)
{
        uint64_t whole, frac = 0, v;
        int n;

        if (!s)
                return -EINVAL;
        n = read_digits(&s, &whole);
        if (n < 0)
                return n;
        if (n == 0)
                return -EINVAL;
        if (*s == '.') {
                s++;
                n = 0;
                while (*s >= '0' && *s <= '9') {
                        if (n == 3)
                                return -EINVAL; /* more than three decimals */
                        frac = frac * 10 + (uint64_t)(*s - '0');
                        s++;
                        n++;
                }
                if (n == 0)
                        return -EINVAL;
                for (; n < 3; n++)
                        frac *= 10;
        }
        if (*s != '\0')
                return -EINVAL;
        if (mul_checked(whole, 1000, &v) < 0 || __builtin_add_overflow(v, frac, &v))
                return -ERANGE;
        *ret_milli = v;
        return 0;
}

bool env_name_valid(const char *name)
{
        size_t i;

        if (!name || !name[0])
                return false;
        for (i = 0; name[i]; i++) {
                char c = name[i];
                bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
                if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
                        return false;
                if (i >= POLICY_ENV_NAME_MAX)
                        return false;
        }
        return true;
}

bool env_name_reserved(const char *name)
{
        return name &&
               strncmp(name, POLICY_ENV_RESERVED_PREFIX, strlen(POLICY_ENV_RESERVED_PREFIX)) == 0;
}
