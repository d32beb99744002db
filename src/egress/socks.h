/*
 * socks.h — SOCKS5 (RFC 1928) for the egress proxy (pure; fuzzed).
 *
 * Only "no authentication" (method 0x00) and CONNECT (0x01) are served.
 * Address types: domain name (0x03; 1..255 bytes) preferred — clients
 * configured with socks5h:// send names — and IPv4/IPv6 literals (0x01,
 * 0x04), which the proxy then treats like IP literals (refused unless an
 * IP/CIDR rule allows them).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum socks_reply {
        SOCKS_OK = 0x00,
        SOCKS_GENERAL_FAILURE = 0x01,
        SOCKS_NOT_ALLOWED = 0x02, /* "connection not allowed by ruleset": every policy refusal */
        SOCKS_NET_UNREACHABLE = 0x03,
        SOCKS_HOST_UNREACHABLE = 0x04,
        SOCKS_CONN_REFUSED = 0x05,
        SOCKS_TTL_EXPIRED = 0x06,
        SOCKS_CMD_UNSUPPORTED = 0x07,
        SOCKS_ATYP_UNSUPPORTED = 0x08,
};

/*
 * socks_greeting_parse — VER=5, NMETHODS, METHODS. Returns 0 if incomplete,
 * the greeting's length (> 0) when complete (*no_auth set if method 0x00
 * is offered), -EBADMSG (wrong version, NMETHODS 0).
 */
int socks_greeting_parse(const uint8_t *buf, size_t len, bool *no_auth);

struct socks_request {
        uint8_t cmd;    /* 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE */
        uint8_t atyp;   /* 1 IPv4, 3 domain, 4 IPv6 */
        char host[256]; /* domain as sent (NUL-terminated; a NUL inside is refused) */
        uint8_t addr[16];
        uint16_t port;
};

/*
 * socks_request_parse — VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT. Returns 0
 * if incomplete, its length when complete, -EBADMSG (bad version or RSV,
 * unknown ATYP — *reply says which reply to send: SOCKS_ATYP_UNSUPPORTED /
 * SOCKS_GENERAL_FAILURE —, empty domain or one containing NUL, port 0).
 * A command other than CONNECT parses (the caller replies
 * SOCKS_CMD_UNSUPPORTED).
 */
int socks_request_parse(const uint8_t *buf, size_t len, struct socks_request *r,
                        enum socks_reply *reply);

/* socks_reply_build — a reply with BND.ADDR 0.0.0.0:0 into out (10 bytes). Returns 10. */
int socks_reply_build(enum socks_reply code, uint8_t out[10]);
