/*
 * fuzz_trustfmt.c — libFuzzer target for the trust files' PEM reader and
 * writers (src/tls/trustfmt.c): the host's CA bundle and an --upstream-ca
 * file are read by trust_certs_load in the supervisor (tls/trustmake.c)
 * and the egress process.
 *
 * The input is a PEM text, copied into a buffer of exactly its length. Beyond
 * "no crash, no UB", what trustfmt.h promises is checked:
 *   - a result > 0 is the number of blocks; every block lies inside the
 *     decoded bytes, blocks back to back in order, its certificate a DER
 *     SEQUENCE (0x30) of cert_len <= len bytes; a result < 0 is -EBADMSG
 *     (or -ENOMEM) and leaves the list empty;
 *   - every certificate written back as PEM (trust_pem_cert) reads back as
 *     exactly one block with the same bytes;
 *   - the PKCS#12 layout of the certificates (trust_p12, a MAC of zeros)
 *     is made, and is one DER SEQUENCE of the length returned, byte for
 *     byte trust_p12_head || trust_p12_bags || trust_p12_tail, the tail's
 *     MAC at trust_p12_tail_mac_at;
 *   - the bundle join keeps the text as its prefix.
 * A disagreement aborts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tls/trustfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                   \
        do {                                                                                       \
                if (!(x))                                                                          \
                        abort();                                                                   \
        } while (0)

static int zero_mac(const char *password, const unsigned char *salt, size_t salt_len, unsigned iter,
                    const unsigned char *d, size_t len, unsigned char mac[TRUST_P12_MAC_LEN],
                    void *ctx)
{
        memset(mac, 0, TRUST_P12_MAC_LEN);
        return 0;
}

/* The length of the DER element at p[0, n), or 0 if it does not fit. */
static size_t der_len(const unsigned char *p, size_t n)
{
        if (n < 2)
                return 0;
        size_t len = p[1], hdr = 2;
        if (len & 0x80) {
                size_t k = len & 0x7f;
                if (k == 0 || k > 4 || n < 2 + k)
                        return 0;
                len = 0;
                for (size_t i = 0; i < k; i++)
                        len = len << 8 | p[2 + i];
                hdr += k;
        }
        return len <= n - hdr ? hdr + len : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size ? size : 1);
        if (!text)
                return 0;
        memcpy(text, data, size);

        struct trust_certs l;
        int r = trust_certs_load(text, size, &l);
        if (r < 0) {
                CHECK(r == -EBADMSG || r == -ENOMEM);
                CHECK(l.n == 0 && l.der == NULL && l.refs == NULL);
                free(text);
                return 0;
        }
        CHECK(r > 0 && (size_t)r == l.n);
        size_t end = 0;
        for (size_t i = 0; i < l.n; i++) {
                const struct trust_cert *c = &l.refs[i];
                CHECK(c->off == end && c->cert_len > 0 && c->cert_len <= c->len);
                CHECK(l.der[c->off] == 0x30);
                CHECK(der_len(l.der + c->off, c->len) == c->cert_len);
                end = c->off + c->len;

                /* written back and read again: the same bytes, one block */
                char *pem = NULL;
                size_t pl = 0;
                if (trust_pem_cert(l.der + c->off, c->cert_len, &pem, &pl) < 0)
                        continue; /* out of memory */
                struct trust_certs again;
                CHECK(trust_certs_load(pem, pl, &again) == 1);
                CHECK(again.refs[0].cert_len == c->cert_len && again.refs[0].len == c->cert_len);
                CHECK(memcmp(again.der, l.der + c->off, c->cert_len) == 0);
                trust_certs_free(&again);
                free(pem);
        }

        /* the store's layout around the first certificate and all of them */
        static const unsigned char salt[TRUST_P12_SALT_LEN];
        unsigned char *p12 = NULL;
        size_t n12 = 0;
        r = trust_p12(l.der + l.refs[0].off, l.refs[0].cert_len, &l, "changeit", salt, zero_mac,
                      NULL, &p12, &n12);
        CHECK(r == 0 || r == -ENOMEM || r == -EFBIG);
        if (r == 0) {
                CHECK(p12[0] == 0x30 && der_len(p12, n12) == n12);
                /* the same store in its three parts (what the supervisor
                 * assembles from the trust cache): head || bags || tail */
                unsigned char *head = NULL, *bags = NULL, tail[TRUST_P12_TAIL_MAX],
                              mac[TRUST_P12_MAC_LEN] = {0};
                size_t hl = 0, bl2 = 0, at = 0, tl = 0;
                if (trust_p12_bags(&l, &bags, &bl2) == 0 &&
                    trust_p12_head(l.der + l.refs[0].off, l.refs[0].cert_len, bl2, &head, &hl,
                                   &at) == 0) {
                        CHECK(trust_p12_tail(salt, mac, tail, &tl) == 0);
                        CHECK(at < hl && hl + bl2 + tl == n12);
                        CHECK(memcmp(p12, head, hl) == 0 && memcmp(p12 + hl, bags, bl2) == 0 &&
                              memcmp(p12 + hl + bl2, tail, tl) == 0);
                        /* where a late writer puts the MAC (init) */
                        memset(mac, 0xab, sizeof mac);
                        size_t ma = trust_p12_tail_mac_at();
                        CHECK(trust_p12_tail(salt, mac, tail, &tl) == 0 &&
                              ma + TRUST_P12_MAC_LEN <= tl && !memcmp(tail + ma, mac, sizeof mac));
                }
                free(head);
                free(bags);
                free(p12);
        }

        char *b = NULL;
        size_t bl = 0;
        if (trust_bundle_join(text, size, "x", 1, &b, &bl) == 0) {
                CHECK(bl > size && memcmp(b, text, size) == 0 && b[bl - 1] == 'x' && b[bl] == '\0');
                free(b);
        }
        trust_certs_free(&l);
        free(text);
        return 0;
}
