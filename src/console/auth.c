/*
 * auth.c — the console's login token, sessions and request checks (see
 * auth.h). Pure: randomness and time come from the caller.
 */
#include "shared/macro.h"
#include "console/auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void console_hex(const unsigned char *rnd, size_t n, char *out)
{
        static const char hx[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = hx[rnd[i] >> 4];
                out[2 * i + 1] = hx[rnd[i] & 15];
        }
        out[2 * n] = '\0';
}

/* a == b over CONSOLE_TOKEN_HEX bytes, in time independent of where they differ */
static bool same_secret(const char *want, const char *got, size_t len)
{
        if (len != CONSOLE_TOKEN_HEX || strlen(want) != CONSOLE_TOKEN_HEX)
                return false;
        unsigned char d = 0;
        for (size_t i = 0; i < CONSOLE_TOKEN_HEX; i++)
                d |= (unsigned char)(want[i] ^ got[i]);
        return d == 0;
}

void console_auth_token(struct console_auth *a, const unsigned char rnd[32], int64_t now_ms,
                        int64_t ttl_ms)
{
        console_hex(rnd, 32, a->token);
        a->token_expires_ms = now_ms + ttl_ms;
}

int console_auth_login(struct console_auth *a, const char *token, size_t len,
                       const unsigned char rnd[64], int64_t now_ms)
{
        if (!same_secret(a->token, token, len) || now_ms >= a->token_expires_ms)
                return -EACCES;
        int slot = 0;
        for (int i = 0; i < CONSOLE_SESSIONS_MAX; i++) {
                if (!a->s[i].id[0] || a->s[i].expires_ms <= now_ms) {
                        slot = i;
                        break;
                }
                if (a->s[i].created_ms < a->s[slot].created_ms)
                        slot = i; /* full: the oldest goes */
        }
        struct console_session *s = &a->s[slot];
        console_hex(rnd, 32, s->id);
        console_hex(rnd + 32, 32, s->csrf);
        s->created_ms = now_ms;
        s->expires_ms = now_ms + (int64_t)CONSOLE_SESSION_TTL_S * 1000;
        return slot;
}

int console_auth_session(const struct console_auth *a, const char *cookie, size_t len,
                         int64_t now_ms)
{
        /* every cookie of that name: another loopback port's page may set
         * one that shadows ours (cookies are not per port) */
        int found = -EACCES;
        size_t at = 0, off, vlen;
        while (cookie && at < len &&
               console_cookie(cookie + at, len - at, CONSOLE_COOKIE, &off, &vlen) == 0) {
                for (int i = 0; i < CONSOLE_SESSIONS_MAX; i++) /* every slot: no early exit */
                        if (a->s[i].id[0] && a->s[i].expires_ms > now_ms &&
                            same_secret(a->s[i].id, cookie + at + off, vlen))
                                found = i;
                at += off + vlen;
        }
        return found;
}

bool console_auth_csrf_ok(const struct console_auth *a, int slot, const char *v, size_t len)
{
        return slot >= 0 && slot < CONSOLE_SESSIONS_MAX && a->s[slot].id[0] &&
               same_secret(a->s[slot].csrf, v, len);
}

void console_auth_logout(struct console_auth *a, int slot)
{
        if (slot >= 0 && slot < CONSOLE_SESSIONS_MAX)
                memset(&a->s[slot], 0, sizeof a->s[slot]);
}

bool console_host_ok(const char *host, size_t len, uint16_t port)
{
        static const char *const names[] = {"127.0.0.1:", "localhost:", "[::1]:"};
        char want[32];
        for (size_t i = 0; host && port && i < sizeof names / sizeof names[0]; i++) {
                size_t n = (size_t)snprintf(want, sizeof want, "%s%u", names[i], (unsigned)port);
                if (n == len && !strncasecmp(host, want, len))
                        return true;
        }
        return false;
}

int console_cookie(const char *hdr, size_t len, const char *name, size_t *off, size_t *vlen)
{
        size_t nl = strlen(name), i = 0;
        while (i < len) {
                while (i < len && (hdr[i] == ' ' || hdr[i] == '\t'))
                        i++;
                size_t start = i;
                while (i < len && hdr[i] != ';')
                        i++;
                /* one pair: name=value */
                size_t end = i;
                if (end - start > nl && !memcmp(hdr + start, name, nl) && hdr[start + nl] == '=') {
                        size_t v = start + nl + 1;
                        while (end > v && (hdr[end - 1] == ' ' || hdr[end - 1] == '\t'))
                                end--;
                        *off = v;
                        *vlen = end - v;
                        return 0;
                }
                i++; /* past ';' */
        }
        return -ENOENT;
}

int console_field(const char *s, size_t len, const char *name, char *out, size_t size)
{
        size_t nl = strlen(name), i = 0;
        while (i <= len) {
                size_t start = i;
                while (i < len && s[i] != '&')
                        i++;
                size_t end = i;
                if (end - start >= nl + 1 && !memcmp(s + start, name, nl) && s[start + nl] == '=') {
                        size_t n = 0;
                        for (size_t k = start + nl + 1; k < end; k++) {
                                char c = s[k];
                                if (c == '+')
                                        c = ' ';
                                else if (c == '%') {
                                        int h, l;
                                        if (k + 2 >= end)
                                                return -EBADMSG;
                                        if ((h = hex_digit_value(s[k + 1])) < 0 ||
                                            (l = hex_digit_value(s[k + 2])) < 0)
                                                return -EBADMSG;
                                        c = (char)(h * 16 + l);
                                        k += 2;
                                }
                                if (c == '\0')
                                        return -EBADMSG;
                                if (n + 1 >= size || n >= CONSOLE_FIELD_MAX)
                                        return -E2BIG;
                                out[n++] = c;
                        }
                        out[n] = '\0';
                        return (int)n;
                }
                if (i == len)
                        break;
                i++;
        }
        return -ENOENT;
}
