/*
 * tls.c — the server name (SNI) of a TLS ClientHello, read from the first
 * bytes a client sends through a CONNECT tunnel. See tls.h.
 *
 * Design: two passes over the buffer, both pure and without copying.
 *
 *   1. Record walk. Records are read from the start: each must be a
 *      handshake record (type 22, version 3.x) of 1..2^14 bytes. The first
 *      four handshake bytes (possibly spread over records) give the
 *      message type, which must be ClientHello, and its length, bounded by
 *      TLS_HELLO_MAX. The walk stops when the records hold the whole
 *      message; a record that would carry bytes past its end is refused.
 *      Until then the answer is TLS_NEED_MORE. The walk reads only record
 *      headers, so a client feeding one byte at a time costs O(records)
 *      per call, and the records are bounded by TLS_RECORDS_MAX.
 *   2. Message parse. A cursor reads the handshake message across the
 *      record boundaries found in pass 1; every length field is checked
 *      against the structure that contains it, down to the last byte:
 *      extensions must fill the message exactly.
 *
 * Every verdict other than TLS_NEED_MORE depends only on bytes already
 * present, and pass 1 checks fields in wire order, so a prefix that gets a
 * final verdict gets the same verdict (and name) once more bytes arrive;
 * fuzz_tls checks this.
 *
 * Threat notes (domain fronting, SECURITY-CASES.md "Egress"): the proxy
 * compares the name found here with the CONNECT host, so anything a TLS
 * server might read differently from us is refused as TLS_MALFORMED: a
 * second server_name extension, a server_name list with more than one
 * entry or an entry that is not a host_name, an empty name, a byte
 * outside printable ASCII (NUL, controls, space, non-ASCII), an empty
 * label, lengths that disagree, trailing bytes. The name is returned
 * lower-cased, one trailing dot dropped; the caller still canonicalises
 * it (net_host_canonical) before comparing. A record type other than
 * handshake, or a record version not 3.x, before the ClientHello is
 * complete means the stream is not TLS at all (TLS_NOT_TLS); what the
 * proxy does with such a tunnel is its decision.
 *
 * Not visible here: Encrypted Client Hello. With ECH the server_name
 * read here is the outer, public name; the name the client really asks
 * for is encrypted to the provider behind it. Clients send a GREASE ECH
 * extension that cannot be told from a real one, so it is not refused;
 * an allowed host shared with other tenants on one front is a residual
 * risk of name-based egress rules, ECH or not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "egress/tls.h"

#define TLS_CT_HANDSHAKE   22
#define TLS_HT_CLIENTHELLO 1
#define TLS_RECORD_HDR     5
#define TLS_RECORD_MAX     16384 /* 2^14 bytes of plaintext per record */
#define TLS_RECORDS_MAX    64    /* records one ClientHello may span (>= 5 for TLS_HELLO_MAX) */
#define TLS_HS_HDR         4
#define TLS_RANDOM_LEN     32
#define TLS_SESSION_ID_MAX 32
#define TLS_EXT_SNI        0
#define TLS_SNI_HOST_NAME  0

/*
 * A reader of the handshake message, across records. `pos` is the next
 * byte in buf, `rec_left` the bytes left in the record holding it. Pass 1
 * has checked that the records covering the message are all present and
 * non-empty, and the parser never reads past the message (`off` < `end`),
 * so the cursor always finds the next record header where it expects it.
 */
struct hs_cursor {
        const unsigned char *buf;
        size_t pos;
        size_t rec_left;
        size_t off; /* offset in the handshake message */
        size_t end; /* its length, header included */
};

static bool cur_has(const struct hs_cursor *c, size_t n)
{
        return c->end - c->off >= n;
}

static void cur_next_record(struct hs_cursor *c)
{
        if (c->rec_left == 0) {
                c->rec_left = (size_t)(c->buf[c->pos + 3] << 8 | c->buf[c->pos + 4]);
                c->pos += TLS_RECORD_HDR;
        }
}

/* Only after cur_has(c, 1). */
static unsigned cur_u8(struct hs_cursor *c)
{
        cur_next_record(c);
        c->rec_left--;
        c->off++;
        return c->buf[c->pos++];
}

/* Only after cur_has(c, 2). */
static unsigned cur_u16(struct hs_cursor *c)
{
        unsigned hi = cur_u8(c);
        return hi << 8 | cur_u8(c);
}

/* Only after cur_has(c, n). */
static void cur_skip(struct hs_cursor *c, size_t n)
{
        while (n > 0) {
                cur_next_record(c);
                size_t k = n < c->rec_left ? n : c->rec_left;
                c->pos += k;
                c->rec_left -= k;
                c->off += k;
                n -= k;
        }
}

static enum tls_sni_result verdict(enum tls_sni_result v, const char **why, const char *text)
{
        if (why)
                *why = text;
        return v;
}

/*
 * Pass 1. Returns TLS_SNI_FOUND to mean "the message is complete" (with
 * *hs_len set to its length, header included), or the final verdict.
 */
static enum tls_sni_result walk_records(const unsigned char *buf, size_t len, size_t *hs_len,
                                        const char **why)
{
        unsigned char hdr[TLS_HS_HDR];
        size_t got = 0;   /* handshake header bytes seen */
        size_t need = 0;  /* message length, once the header is known */
        size_t total = 0; /* handshake bytes in the complete records so far */
        size_t pos = 0;

        for (unsigned nrec = 1;; nrec++) {
                if (len - pos < 1)
                        return TLS_NEED_MORE;
                if (buf[pos] != TLS_CT_HANDSHAKE)
                        return verdict(TLS_NOT_TLS, why,
                                       nrec == 1 ? "first record is not a handshake record"
                                                 : "non-handshake record inside the ClientHello");
                if (len - pos < 2)
                        return TLS_NEED_MORE;
                if (buf[pos + 1] != 3)
                        return verdict(TLS_NOT_TLS, why, "record version is not TLS");
                if (len - pos < TLS_RECORD_HDR)
                        return TLS_NEED_MORE;
                size_t rlen = (size_t)(buf[pos + 3] << 8 | buf[pos + 4]);
                if (rlen == 0)
                        return verdict(TLS_MALFORMED, why, "empty handshake record");
                if (rlen > TLS_RECORD_MAX)
                        return verdict(TLS_MALFORMED, why, "record longer than 2^14 bytes");
                if (nrec > TLS_RECORDS_MAX)
                        return verdict(TLS_MALFORMED, why,
                                       "ClientHello split over too many records");

                size_t body = pos + TLS_RECORD_HDR;
                size_t avail = len - body < rlen ? len - body : rlen;
                for (size_t i = 0; got < TLS_HS_HDR && i < avail; i++) {
                        hdr[got++] = buf[body + i];
                        if (got == 1 && hdr[0] != TLS_HT_CLIENTHELLO)
                                return verdict(TLS_MALFORMED, why,
                                               "first handshake message is not a ClientHello");
                        if (got == TLS_HS_HDR) {
                                need = TLS_HS_HDR +
                                       ((size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3]);
                                if (need - TLS_HS_HDR > TLS_HELLO_MAX)
                                        return verdict(TLS_MALFORMED, why,
                                                       "ClientHello longer than TLS_HELLO_MAX");
                        }
                }
                if (got == TLS_HS_HDR && total + rlen > need)
                        return verdict(TLS_MALFORMED, why,
                                       "handshake data after the ClientHello in its last record");
                if (avail < rlen)
                        return TLS_NEED_MORE;
                total += rlen;
                if (got == TLS_HS_HDR && total == need) {
                        *hs_len = need;
                        return TLS_SNI_FOUND;
                }
                pos = body + rlen;
        }
}

/*
 * The server_name extension's body (RFC 6066 3): a list that must hold
 * exactly one entry, a host_name of 1..TLS_SNI_MAX printable bytes.
 */
static enum tls_sni_result read_sni(struct hs_cursor *c, size_t ext_len, char *sni,
                                    const char **why)
{
        if (ext_len < 2)
                return verdict(TLS_MALFORMED, why, "server_name extension too short");
        size_t list = cur_u16(c);
        if (list != ext_len - 2)
                return verdict(TLS_MALFORMED, why, "server_name list length disagrees");
        if (list < 3)
                return verdict(TLS_MALFORMED, why, "server_name list empty or too short");
        if (cur_u8(c) != TLS_SNI_HOST_NAME)
                return verdict(TLS_MALFORMED, why, "server_name entry is not a host_name");
        size_t n = cur_u16(c);
        if (n > list - 3)
                return verdict(TLS_MALFORMED, why, "host_name runs past its list");
        if (n != list - 3)
                return verdict(TLS_MALFORMED, why, "more than one server_name entry");
        if (n == 0)
                return verdict(TLS_MALFORMED, why, "empty host_name");
        if (n > TLS_SNI_MAX)
                return verdict(TLS_MALFORMED, why, "host_name longer than 255 bytes");

        for (size_t i = 0; i < n; i++) {
                unsigned ch = cur_u8(c);
                if (ch <= 0x20 || ch >= 0x7f)
                        return verdict(TLS_MALFORMED, why,
                                       "host_name holds a NUL, control, space or non-ASCII byte");
                if (ch >= 'A' && ch <= 'Z')
                        ch = ch - 'A' + 'a';
                sni[i] = (char)ch;
        }
        if (sni[n - 1] == '.')
                n--; /* one trailing dot: the same name */
        sni[n] = '\0';
        if (n == 0 || sni[0] == '.' || sni[n - 1] == '.' || strstr(sni, ".."))
                return verdict(TLS_MALFORMED, why, "host_name has an empty label");
        return TLS_SNI_FOUND;
}

/* Pass 2: the ClientHello body (RFC 8446 4.1.2; RFC 5246 7.4.1.2). */
static enum tls_sni_result parse_hello(struct hs_cursor *c, char *sni, const char **why)
{
        cur_skip(c, TLS_HS_HDR);
        if (!cur_has(c, 2 + TLS_RANDOM_LEN + 1))
                return verdict(TLS_MALFORMED, why, "ClientHello too short");
        if (cur_u8(c) != 3)
                return verdict(TLS_MALFORMED, why, "ClientHello version is not 3.x");
        cur_skip(c, 1 + TLS_RANDOM_LEN);

        size_t n = cur_u8(c);
        if (n > TLS_SESSION_ID_MAX)
                return verdict(TLS_MALFORMED, why, "session id longer than 32 bytes");
        if (!cur_has(c, n + 2))
                return verdict(TLS_MALFORMED, why, "session id runs past the ClientHello");
        cur_skip(c, n);

        n = cur_u16(c);
        if (n < 2 || n % 2 != 0)
                return verdict(TLS_MALFORMED, why, "cipher suite list empty or odd");
        if (!cur_has(c, n + 1))
                return verdict(TLS_MALFORMED, why, "cipher suites run past the ClientHello");
        cur_skip(c, n);

        n = cur_u8(c);
        if (n < 1)
                return verdict(TLS_MALFORMED, why, "no compression method");
        if (!cur_has(c, n))
                return verdict(TLS_MALFORMED, why, "compression methods run past the ClientHello");
        cur_skip(c, n);

        if (!cur_has(c, 1))
                return TLS_SNI_ABSENT; /* a ClientHello without extensions (pre-TLS 1.2 form) */
        if (!cur_has(c, 2))
                return verdict(TLS_MALFORMED, why, "truncated extensions length");
        n = cur_u16(c);
        if (!cur_has(c, n))
                return verdict(TLS_MALFORMED, why, "extensions run past the ClientHello");
        if (cur_has(c, n + 1))
                return verdict(TLS_MALFORMED, why, "bytes after the extensions");

        bool found = false;
        while (cur_has(c, 1)) {
                if (!cur_has(c, 4))
                        return verdict(TLS_MALFORMED, why, "truncated extension header");
                unsigned type = cur_u16(c);
                size_t elen = cur_u16(c);
                if (!cur_has(c, elen))
                        return verdict(TLS_MALFORMED, why, "extension runs past the extensions");
                if (type != TLS_EXT_SNI) {
                        cur_skip(c, elen);
                        continue;
                }
                if (found)
                        return verdict(TLS_MALFORMED, why, "two server_name extensions");
                enum tls_sni_result v = read_sni(c, elen, sni, why);
                if (v != TLS_SNI_FOUND)
                        return v;
                found = true;
        }
        return found ? TLS_SNI_FOUND : TLS_SNI_ABSENT;
}

enum tls_sni_result tls_client_hello_sni(const unsigned char *buf, size_t len,
                                         char sni[TLS_SNI_MAX + 1], const char **why)
{
        size_t hs_len = 0;

        sni[0] = '\0';
        if (why)
                *why = NULL;
        enum tls_sni_result v = walk_records(buf, len, &hs_len, why);
        if (v != TLS_SNI_FOUND)
                return v;

        struct hs_cursor c = {.buf = buf, .end = hs_len};
        v = parse_hello(&c, sni, why);
        if (v != TLS_SNI_FOUND)
                sni[0] = '\0';
        return v;
}
