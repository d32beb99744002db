/*
 * broker.c — the secret broker's wire protocol: the name rule, the request
 * parser (server side, facing the run), the reply formatters, and the
 * reply parser (client side, ringfence-secret).
 *
 * Pure code: no I/O, no allocation, no logging; see broker.h for the
 * protocol. Both parsers look at no more than their line limit, accept
 * exactly one spelling of each line, and refuse the rest with -EBADMSG, so
 * a run cannot smuggle a second meaning past the server (no CR, no NUL, no
 * extra spaces, no leading zeros, no trailing bytes on a line).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "secrets/broker.h"

/* The code tokens and human texts, indexed by enum broker_err. */
static const struct {
        const char *token;
        const char *text;
} broker_errs[_BROKER_E_MAX] = {
        [BROKER_E_BADREQ] = {"bad-request", "the request line is malformed"},
        [BROKER_E_UNKNOWN] = {"unknown", "no secret of that name is granted to this run"},
        [BROKER_E_REVOKED] = {"revoked", "the grant was revoked"},
        [BROKER_E_EXPIRED] = {"expired", "the grant has expired"},
        [BROKER_E_REFUSED] = {"refused", "the access could not be recorded in the audit log"},
        [BROKER_E_BUSY] = {"busy", "the broker is busy, try again later"},
};

static bool name_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '-';
}

bool secret_name_valid(const char *s, size_t len)
{
        if (!s || len == 0 || len > BROKER_NAME_MAX)
                return false;
        if (s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < len; i++)
                if (!name_char(s[i]))
                        return false;
        return true;
}

int broker_req_parse(const char *buf, size_t len, struct broker_req *req)
{
        size_t scan = len < BROKER_REQ_MAX ? len : BROKER_REQ_MAX;
        const char *nl = scan > 0 ? memchr(buf, '\n', scan) : NULL;

        if (!nl)
                return len < BROKER_REQ_MAX ? 0 : -E2BIG;
        size_t line = (size_t)(nl - buf); /* without the '\n' */
        if (line < 4 || memcmp(buf, "GET ", 4) != 0)
                return -EBADMSG;
        /* the name rule excludes spaces, CR and NUL: anything else on the line is refused */
        if (!secret_name_valid(buf + 4, line - 4))
                return -EBADMSG;
        memcpy(req->name, buf + 4, line - 4);
        req->name[line - 4] = '\0';
        return (int)(line + 1);
}

/* snprintf into buf[0..size): its length, or -ENOSPC if it does not fit. */
static int format_fit(int r, size_t size)
{
        if (r < 0)
                return -EINVAL;
        if ((size_t)r >= size)
                return -ENOSPC;
        return r;
}

int broker_reply_ok(char *buf, size_t size, size_t value_len)
{
        if (value_len > BROKER_VALUE_MAX)
                return -EINVAL;
        return format_fit(snprintf(buf, size, "OK %zu\n", value_len), size);
}

int broker_reply_err(char *buf, size_t size, enum broker_err code)
{
        if ((int)code < 0 || code >= _BROKER_E_MAX)
                return -EINVAL;
        return format_fit(
                snprintf(buf, size, "ERR %s %s\n", broker_errs[code].token, broker_errs[code].text),
                size);
}

const char *broker_err_name(enum broker_err code)
{
        if ((int)code < 0 || code >= _BROKER_E_MAX)
                return "invalid";
        return broker_errs[code].token;
}

/* "0" or [1-9][0-9]* of at most BROKER_VALUE_MAX, over all of p[0..n). */
static int parse_len(const char *p, size_t n, size_t *ret)
{
        size_t v = 0;

        if (n == 0 || n > 6 || (p[0] == '0' && n > 1))
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return -EBADMSG;
                v = v * 10 + (size_t)(p[i] - '0');
        }
        if (v > BROKER_VALUE_MAX)
                return -EBADMSG;
        *ret = v;
        return 0;
}

int broker_reply_parse(const char *buf, size_t len, bool *ok, size_t *value_len,
                       enum broker_err *code)
{
        size_t scan = len < BROKER_REPLY_HEAD_MAX ? len : BROKER_REPLY_HEAD_MAX;
        const char *nl = scan > 0 ? memchr(buf, '\n', scan) : NULL;

        if (!nl)
                return len < BROKER_REPLY_HEAD_MAX ? 0 : -EBADMSG;
        size_t line = (size_t)(nl - buf);

        if (line >= 3 && memcmp(buf, "OK ", 3) == 0) {
                size_t v;
                if (parse_len(buf + 3, line - 3, &v) < 0)
                        return -EBADMSG;
                *ok = true;
                *value_len = v;
                return (int)(line + 1);
        }
        if (line < 4 || memcmp(buf, "ERR ", 4) != 0)
                return -EBADMSG;
        /* the code token ends at a space (then the text) or at the end of the line */
        const char *tok = buf + 4, *end = buf + line;
        const char *sp = memchr(tok, ' ', (size_t)(end - tok));
        size_t tl = (size_t)((sp ? sp : end) - tok);
        for (const char *t = sp ? sp + 1 : end; t < end; t++)
                if (*t < 0x20 || *t > 0x7e)
                        return -EBADMSG;
        for (int c = 0; c < _BROKER_E_MAX; c++)
                if (strlen(broker_errs[c].token) == tl &&
                    memcmp(broker_errs[c].token, tok, tl) == 0) {
                        *ok = false;
                        *code = (enum broker_err)c;
                        return (int)(line + 1);
                }
        return -EBADMSG;
}
