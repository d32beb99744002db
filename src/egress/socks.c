/*
 * socks.c — the SOCKS5 greeting and request readers, and the reply
 * builder, for the egress proxy. See socks.h.
 *
 * Design: both readers are pure functions of the bytes received so far,
 * from the start of the message. They check each field as soon as it has
 * arrived, in wire order, and answer 0 ("incomplete") only when every
 * byte present is still acceptable; so a verdict on a prefix is the
 * verdict on any longer input, and a peer cannot make the proxy wait for
 * bytes after it has already sent something invalid.
 *
 * Threat notes: the destination is peer-controlled. A domain is bounded
 * by its one-byte length (1..255; sizeof host leaves room for the NUL)
 * and one holding a NUL is refused, so the C string the policy matcher
 * sees is exactly the name the client sent — no "allowed.com\0.evil.com"
 * differential. IP literals are returned as bytes and left to the
 * caller's IP rules. Nothing else (other bytes in a domain, its case, a
 * trailing dot, an IP spelled as a name) is judged here: the caller
 * canonicalises the name (net_host_canonical, rules.h) as it does for
 * CONNECT and SNI, so one function decides what a host name is.
 */
#include <errno.h>
#include <string.h>

#include "egress/socks.h"

#define SOCKS_VERSION     5
#define SOCKS_ATYP_IPV4   1
#define SOCKS_ATYP_DOMAIN 3
#define SOCKS_ATYP_IPV6   4
#define SOCKS_METHOD_NONE 0x00
#define SOCKS_REQ_HDR     4 /* VER CMD RSV ATYP */
#define SOCKS_REPLY_LEN   10

int socks_greeting_parse(const uint8_t *buf, size_t len, bool *no_auth)
{
        *no_auth = false;
        if (len < 1)
                return 0;
        if (buf[0] != SOCKS_VERSION)
                return -EBADMSG;
        if (len < 2)
                return 0;
        size_t n = buf[1];
        if (n == 0)
                return -EBADMSG;
        if (len < 2 + n)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (buf[2 + i] == SOCKS_METHOD_NONE)
                        *no_auth = true;
        return (int)(2 + n);
}

/* Fail with the reply the caller sends before closing. */
static int refuse(enum socks_reply *reply, enum socks_reply code)
{
        *reply = code;
        return -EBADMSG;
}

int socks_request_parse(const uint8_t *buf, size_t len, struct socks_request *r,
                        enum socks_reply *reply)
{
        memset(r, 0, sizeof *r);
        *reply = SOCKS_OK;

        if (len >= 1 && buf[0] != SOCKS_VERSION)
                return refuse(reply, SOCKS_GENERAL_FAILURE);
        if (len >= 3 && buf[2] != 0)
                return refuse(reply, SOCKS_GENERAL_FAILURE);
        if (len < SOCKS_REQ_HDR)
                return 0;

        size_t alen, p = SOCKS_REQ_HDR;
        switch (buf[3]) {
        case SOCKS_ATYP_IPV4:
                alen = 4;
                break;
        case SOCKS_ATYP_IPV6:
                alen = 16;
                break;
        case SOCKS_ATYP_DOMAIN:
                if (len < p + 1)
                        return 0;
                alen = buf[p++];
                if (alen == 0)
                        return refuse(reply, SOCKS_GENERAL_FAILURE);
                /* a NUL is refused as soon as it arrives */
                if (memchr(buf + p, '\0', len - p < alen ? len - p : alen))
                        return refuse(reply, SOCKS_GENERAL_FAILURE);
                break;
        default:
                return refuse(reply, SOCKS_ATYP_UNSUPPORTED);
        }
        if (len < p + alen + 2)
                return 0;

        uint16_t port = (uint16_t)(buf[p + alen] << 8 | buf[p + alen + 1]);
        if (port == 0)
                return refuse(reply, SOCKS_GENERAL_FAILURE);

        r->cmd = buf[1];
        r->atyp = buf[3];
        if (r->atyp == SOCKS_ATYP_DOMAIN) {
                memcpy(r->host, buf + p, alen);
                r->host[alen] = '\0';
        } else {
                memcpy(r->addr, buf + p, alen);
        }
        r->port = port;
        return (int)(p + alen + 2);
}

int socks_reply_build(enum socks_reply code, uint8_t out[10])
{
        memset(out, 0, SOCKS_REPLY_LEN);
        out[0] = SOCKS_VERSION;
        out[1] = (uint8_t)code;
        out[3] = SOCKS_ATYP_IPV4; /* BND.ADDR 0.0.0.0, BND.PORT 0 (out[4..9]) */
        return SOCKS_REPLY_LEN;
}
