/*
 * auth.h — who may use the console, and the request facts it checks
 * (pure; fuzzed by fuzz_console).
 *
 * A console starts with one login token (CONSOLE_TOKEN_HEX hex digits
 * from 32 random bytes), printed once in a URL like Jupyter's: valid for
 * several logins until it expires. Each login gets a session of its own:
 * a random id in an HttpOnly, SameSite=Strict cookie and a random CSRF
 * token that every action must carry. At most CONSOLE_SESSIONS_MAX
 * sessions live; a new login evicts the oldest. Tokens and ids are
 * compared in constant time and never logged.
 *
 * The request helpers read what a peer sent and bound every size: the
 * Host header (only the loopback name the console serves: DNS rebinding),
 * a cookie by name, a field of a query or an
 * application/x-www-form-urlencoded body (percent-decoded).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONSOLE_TOKEN_HEX     64 /* hex digits of a token, a session id, a CSRF token */
#define CONSOLE_SESSIONS_MAX  64
#define CONSOLE_COOKIE        "rf_console"
#define CONSOLE_FIELD_MAX     512 /* bytes of one decoded query or form value */
#define CONSOLE_SESSION_TTL_S (12 * 3600)

struct console_session {
        char id[CONSOLE_TOKEN_HEX + 1]; /* "" when the slot is free */
        char csrf[CONSOLE_TOKEN_HEX + 1];
        int64_t created_ms, expires_ms;
};

struct console_auth {
        char token[CONSOLE_TOKEN_HEX + 1];
        int64_t token_expires_ms;
        struct console_session s[CONSOLE_SESSIONS_MAX];
};

/* hex of n random bytes into out[2n + 1] */
void console_hex(const unsigned char *rnd, size_t n, char *out);

/*
 * console_auth_token — a new login token from 32 random bytes, valid until
 * now_ms + ttl_ms; the old one is void (its sessions stay).
 */
void console_auth_token(struct console_auth *a, const unsigned char rnd[32], int64_t now_ms,
                        int64_t ttl_ms);

/*
 * console_auth_login — `token` (len bytes, as the URL gave it) logs in: a
 * session from 64 random bytes (its id, its CSRF token), valid for
 * CONSOLE_SESSION_TTL_S. Its slot, or -EACCES (wrong or expired token).
 */
int console_auth_login(struct console_auth *a, const char *token, size_t len,
                       const unsigned char rnd[64], int64_t now_ms);

/*
 * console_auth_session — the live session a cookie of ours in the Cookie
 * header (len bytes) names, every cookie of that name tried (another
 * loopback port's page may set one to shadow ours): its slot, or -EACCES
 * (none, unknown, expired).
 */
int console_auth_session(const struct console_auth *a, const char *cookie, size_t len,
                         int64_t now_ms);

/* console_auth_csrf_ok — `v` is session `slot`'s CSRF token (constant time). */
bool console_auth_csrf_ok(const struct console_auth *a, int slot, const char *v, size_t len);

/* console_auth_logout — end session `slot`. */
void console_auth_logout(struct console_auth *a, int slot);

/*
 * console_host_ok — the Host header (len bytes) names the console as it
 * listens: "127.0.0.1:PORT", "localhost:PORT" or "[::1]:PORT", the port
 * exactly. Anything else (another name, no port, a default port) is a
 * rebinding attempt or a mistake: false.
 */
bool console_host_ok(const char *host, size_t len, uint16_t port);

/*
 * console_cookie — the value of cookie `name` in a Cookie header (len
 * bytes): its offset and length into *off, *vlen. 0, or -ENOENT. The first
 * of equal names wins.
 */
int console_cookie(const char *hdr, size_t len, const char *name, size_t *off, size_t *vlen);

/*
 * console_field — field `name` of "a=b&c=d" (a query without its '?', or a
 * form body; len bytes), percent- and '+'-decoded into out[size]
 * (NUL-terminated; at most CONSOLE_FIELD_MAX bytes). Its length, or
 * -ENOENT, -EBADMSG (bad escape, a NUL), -E2BIG.
 */
int console_field(const char *s, size_t len, const char *name, char *out, size_t size);
