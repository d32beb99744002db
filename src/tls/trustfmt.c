/*
 * trustfmt.c — the run's trust files written and the host's PEM bundle read,
 * without a crypto library (see trustfmt.h).
 *
 * Design: the PEM reader is a line scanner with a base64 table and one
 * check of the decoded bytes' outer shape (a DER SEQUENCE that fits): it
 * never parses X.509, so a host bundle costs a pass over its text. The
 * DER writer computes every length before it writes a byte (sums saturate
 * above TRUST_P12_DER_MAX, which refuses the store), allocates once and
 * never passes the end of that buffer; the written length must equal the
 * computed one.
 *
 * Threats: the bundle and an --upstream-ca file are the host's (or the
 * caller's) files, read with a bound (RF_TLS_BUNDLE_MAX, the caller's); a
 * malformed block refuses the file. Host names come from policy and the
 * command line: trust_host_valid is the one check every CA applies.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "tls/tlsterm.h"
#include "tls/trustfmt.h"

bool trust_host_valid(const char *h)
{
        size_t n = strlen(h), label = 0;
        bool alpha = false;

        if (n == 0 || n > RF_TLS_HOST_MAX || h[0] == '.' || h[n - 1] == '.' || h[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = h[i];
                if (c == '.') {
                        if (label == 0 || h[i - 1] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                        return false;
                if (label == 0 && c == '-')
                        return false;
                if (c >= 'a' && c <= 'z')
                        alpha = true;
                if (++label > 63)
                        return false;
        }
        /* all-numeric names are IPv4 literals in disguise */
        return alpha;
}

/* -- PEM certificate blocks, checked without X.509 decoding -- */

/* The labels of the blocks OpenSSL's PEM_X509_INFO_read_bio takes as
 * certificates (the last one with OpenSSL's trust settings appended). */
static const struct {
        const char *label;
        bool aux;
} pem_certs[] = {
        {"CERTIFICATE", false},
        {"X509 CERTIFICATE", false},
        {"TRUSTED CERTIFICATE", true},
};

/* The next line of s[*pos, n): its start and length without the line end
 * and trailing blanks (as OpenSSL's PEM reader strips them); false at the
 * end of the text. */
static bool next_line(const char *s, size_t n, size_t *pos, const char **line, size_t *len)
{
        if (*pos >= n)
                return false;
        const char *l = s + *pos;
        const char *nl = memchr(l, '\n', n - *pos);
        size_t k = nl ? (size_t)(nl - l) : n - *pos;
        *pos += k + (nl != NULL);
        while (k > 0 && (l[k - 1] == '\r' || l[k - 1] == ' ' || l[k - 1] == '\t'))
                k--;
        *line = l;
        *len = k;
        return true;
}

/* Is line "-----<word> <label>-----"? */
static bool pem_marker(const char *line, size_t len, const char *word, const char *label)
{
        size_t w = strlen(word), l = strlen(label);
        return len == 5 + w + 1 + l + 5 && memcmp(line, "-----", 5) == 0 &&
               memcmp(line + 5, word, w) == 0 && line[5 + w] == ' ' &&
               memcmp(line + 6 + w, label, l) == 0 && memcmp(line + 6 + w + l, "-----", 5) == 0;
}

/* Base64 digits: 1 + their value, 0 for any other byte (a table: the
 * class of each character of random base64 is unpredictable for a branch). */
static const unsigned char b64_digit[256] = {
        ['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,
        ['H'] = 8,  ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14,
        ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21,
        ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,
        ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35,
        ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
        ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
        ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
        ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63,
        ['/'] = 64,
};

/* Decode the base64 of one line onto out + *at (the caller's buffer holds
 * 3/4 of the whole text: never more is written). *quad and *acc carry a
 * partial group between lines; *pad counts '=' seen (nothing may follow
 * them). -EBADMSG for any other character. */
static int b64_line(const char *l, size_t len, unsigned char *out, size_t *at, unsigned *quad,
                    uint32_t *acc, unsigned *pad)
{
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)l[i];
                unsigned v = b64_digit[c];
                if (v != 0 && *pad == 0) {
                        *acc = *acc << 6 | (v - 1);
                        if (++*quad == 4) {
                                out[(*at)++] = (unsigned char)(*acc >> 16);
                                out[(*at)++] = (unsigned char)(*acc >> 8);
                                out[(*at)++] = (unsigned char)*acc;
                                *quad = 0;
                                *acc = 0;
                        }
                } else if (c == ' ' || c == '\t') {
                        continue;
                } else if (c == '=' && *quad >= 2 && *pad < 2) {
                        /* padding completes a group of 2 or 3 digits; no
                         * digit may follow */
                        ++*pad;
                        *acc <<= 6;
                        if (++*quad == 4) {
                                out[(*at)++] = (unsigned char)(*acc >> 16);
                                if (*pad == 1)
                                        out[(*at)++] = (unsigned char)(*acc >> 8);
                                *quad = 0;
                                *acc = 0;
                        }
                } else {
                        return -EBADMSG;
                }
        }
        return 0;
}

/* The length of the DER element at p[0, n) when it is a SEQUENCE that fits
 * (a certificate's outer shape; definite length, at most 4 length bytes);
 * 0 otherwise. */
static size_t der_seq_len(const unsigned char *p, size_t n)
{
        if (n < 2 || p[0] != 0x30)
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

void trust_certs_free(struct trust_certs *l)
{
        free(l->der);
        free(l->refs);
        *l = (struct trust_certs){0};
}

int trust_certs_load(const char *text, size_t n, struct trust_certs *l)
{
        const char *line;
        size_t pos = 0, len, cap = 0, at = 0;
        int r = -EBADMSG;

        *l = (struct trust_certs){0};
        /* every decoded byte comes from 4/3 as many characters of text */
        l->der = malloc(n / 4 * 3 + 3);
        if (!l->der)
                return -ENOMEM;
        while (next_line(text, n, &pos, &line, &len)) {
                if (len == 0 || line[0] != '-')
                        continue; /* not a marker line */
                size_t which = ARRAY_SIZE(pem_certs);
                for (size_t i = 0; i < ARRAY_SIZE(pem_certs); i++)
                        if (pem_marker(line, len, "BEGIN", pem_certs[i].label))
                                which = i;
                if (which == ARRAY_SIZE(pem_certs))
                        continue;
                size_t start = at;
                unsigned quad = 0, pad = 0;
                uint32_t acc = 0;
                bool end = false;
                while (!end && next_line(text, n, &pos, &line, &len)) {
                        if (pem_marker(line, len, "END", pem_certs[which].label))
                                end = true;
                        else if (b64_line(line, len, l->der, &at, &quad, &acc, &pad) < 0)
                                goto fail;
                }
                size_t cert_len = der_seq_len(l->der + start, at - start);
                if (!end || quad != 0 || cert_len == 0)
                        goto fail;
                if (l->n == cap) {
                        size_t ncap = cap ? 2 * cap : 64;
                        struct trust_cert *nr = reallocarray(l->refs, ncap, sizeof *nr);
                        if (!nr) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        l->refs = nr;
                        cap = ncap;
                }
                l->refs[l->n++] =
                        (struct trust_cert){start, at - start, cert_len, pem_certs[which].aux};
        }
        if (l->n == 0)
                goto fail;
        if (l->n > INT_MAX) { /* cannot happen below RF_TLS_BUNDLE_MAX */
                r = -EFBIG;
                goto fail;
        }
        return (int)l->n;
fail:
        trust_certs_free(l);
        return r;
}

/* ---- PEM and the run's bundle ---------------------------------------------- */

int trust_pem_cert(const unsigned char *der, size_t len, char **ret, size_t *retlen)
{
        static const char digits[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        static const char begin[] = "-----BEGIN CERTIFICATE-----\n";
        static const char end[] = "-----END CERTIFICATE-----\n";
        if (!der || len == 0 || len > TRUST_P12_DER_MAX)
                return -EINVAL;
        size_t chars = (len + 2) / 3 * 4, lines = (chars + 63) / 64;
        size_t n = sizeof begin - 1 + chars + lines + sizeof end - 1;
        char *s = malloc(n + 1), *p = s;
        if (!s)
                return -ENOMEM;
        p = mempcpy(p, begin, sizeof begin - 1);
        size_t col = 0;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)der[i] << 16;
                size_t k = len - i < 3 ? len - i : 3;
                if (k > 1)
                        v |= (uint32_t)der[i + 1] << 8;
                if (k > 2)
                        v |= der[i + 2];
                char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63],
                             k > 1 ? digits[v >> 6 & 63] : '=', k > 2 ? digits[v & 63] : '='};
                for (size_t j = 0; j < 4; j++) {
                        *p++ = q[j];
                        if (++col == 64) {
                                *p++ = '\n';
                                col = 0;
                        }
                }
        }
        if (col)
                *p++ = '\n';
        p = mempcpy(p, end, sizeof end - 1);
        *p = '\0';
        *ret = s;
        *retlen = (size_t)(p - s);
        return 0;
}

int trust_bundle_tail(bool nl, const char *ca_pem, size_t ca_len, char **ret, size_t *len)
{
        static const char sep[] = "# ringfence: this run's CA (valid for this run only)\n";
        if (ca_len > SIZE_MAX / 2)
                return -EFBIG;
        size_t n = nl + sizeof sep - 1 + ca_len;
        char *s = malloc(n + 1), *p = s;
        if (!s)
                return -ENOMEM;
        if (nl)
                *p++ = '\n';
        p = mempcpy(p, sep, sizeof sep - 1);
        if (ca_len)
                p = mempcpy(p, ca_pem, ca_len);
        *p = '\0';
        *ret = s;
        *len = n;
        return 0;
}

int trust_bundle_join(const char *host, size_t host_len, const char *ca_pem, size_t ca_len,
                      char **ret, size_t *len)
{
        char *tail = NULL;
        size_t tl = 0;
        if (host_len > SIZE_MAX / 4)
                return -EFBIG;
        int r = trust_bundle_tail(host_len > 0 && host[host_len - 1] != '\n', ca_pem, ca_len, &tail,
                                  &tl);
        if (r < 0)
                return r;
        char *s = malloc(host_len + tl + 1);
        if (!s) {
                free(tail);
                return -ENOMEM;
        }
        if (host_len)
                memcpy(s, host, host_len);
        memcpy(s + host_len, tail, tl + 1);
        free(tail);
        *ret = s;
        *len = host_len + tl;
        return 0;
}

/* ---- the JVM's PKCS#12 trust store, written as DER ---------------------- */

/*
 * The store (RFC 7292), as OpenSSL's PKCS12 API wrote it before and as
 * keytool and KeyStore read a trust store:
 *
 *   PFX ::= SEQUENCE { version INTEGER 3,
 *                      authSafe ContentInfo { id-data, [0] OCTET STRING {
 *                                               AuthenticatedSafe } },
 *                      macData MacData }
 *   AuthenticatedSafe ::= SEQUENCE { ContentInfo { id-data,
 *                                      [0] OCTET STRING { SafeContents } } }
 *   SafeContents ::= SEQUENCE OF SafeBag (one per certificate)
 *   SafeBag ::= SEQUENCE { id-certBag, [0] CertBag, SET OF Attribute }
 *   CertBag ::= SEQUENCE { id-x509Certificate, [0] OCTET STRING { DER } }
 *   Attributes: Java's trusted key usage { anyExtendedKeyUsage } (what makes
 *               a bag a trustedCertEntry) and friendlyName { BMPString alias }
 *   MacData ::= SEQUENCE { DigestInfo { { sha256, NULL }, OCTET STRING },
 *                          macSalt OCTET STRING, iterations INTEGER }
 *
 * The certificates are public: one unencrypted safe, as keytool writes
 * trusted entries. The MAC is HMAC-SHA256 over AuthenticatedSafe's DER, keyed
 * by the PKCS#12 KDF (ID 3) from the password, a random salt and OpenSSL's
 * default iteration count: the caller's function (trust_mac_fn). Every length is computed before
 * anything is written (bag_lens and trust_p12: sums saturate above TRUST_P12_DER_MAX, which refuses
 * the store); the buffer is allocated once at that size and the writer (der_put) never passes its
 * end; the written length must equal the computed one.
 */

/* Encoded OBJECT IDENTIFIERs (tag and length included). */
static const unsigned char OID_DATA[] = {/* 1.2.840.113549.1.7.1 */
                                         0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
                                         0xf7, 0x0d, 0x01, 0x07, 0x01};
static const unsigned char OID_CERT_BAG[] = {/* 1.2.840.113549.1.12.10.1.3 */
                                             0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7,
                                             0x0d, 0x01, 0x0c, 0x0a, 0x01, 0x03};
static const unsigned char OID_X509_CERT[] = {/* 1.2.840.113549.1.9.22.1 */
                                              0x06, 0x0a, 0x2a, 0x86, 0x48, 0x86,
                                              0xf7, 0x0d, 0x01, 0x09, 0x16, 0x01};
static const unsigned char OID_FRIENDLY_NAME[] = {/* 1.2.840.113549.1.9.20 */
                                                  0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
                                                  0xf7, 0x0d, 0x01, 0x09, 0x14};
/* Java's trusted-key-usage attribute (Oracle arc 2.16.840.1.113894.746875.1.1)
 * with one value, anyExtendedKeyUsage (2.5.29.37.0): the whole Attribute. */
static const unsigned char JAVA_TRUSTED_ATTR[] = {0x30, 0x16, 0x06, 0x0c, 0x60, 0x86, 0x48, 0x01,
                                                  0x86, 0xf9, 0x66, 0xad, 0xca, 0x7b, 0x01, 0x01,
                                                  0x31, 0x06, 0x06, 0x04, 0x55, 0x1d, 0x25, 0x00};
/* AlgorithmIdentifier { sha256 (2.16.840.1.101.3.4.2.1), NULL } */
static const unsigned char ALG_SHA256[] = {0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                           0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00};

/* The sum of two lengths, SIZE_MAX once it passes TRUST_P12_DER_MAX. */
static size_t len_add(size_t a, size_t b)
{
        return a > TRUST_P12_DER_MAX || b > TRUST_P12_DER_MAX - a ? SIZE_MAX : a + b;
}

/* An element's size (tag, length, contents) for n bytes of contents;
 * SIZE_MAX above TRUST_P12_DER_MAX. */
static size_t der_tlv_len(size_t n)
{
        if (n > TRUST_P12_DER_MAX)
                return SIZE_MAX;
        size_t hdr = n < 0x80 ? 2 : n <= 0xff ? 3 : n <= 0xffff ? 4 : n <= 0xffffff ? 5 : 6;
        return len_add(hdr, n);
}

/* A writer into a buffer of exactly the computed size. */
struct der {
        unsigned char *p; /* borrowed */
        size_t len, cap;
        bool overflow; /* a write would have passed cap: nothing more is written */
};

static void der_put(struct der *d, const void *b, size_t n)
{
        if (d->overflow || n > d->cap - d->len) {
                d->overflow = true;
                return;
        }
        memcpy(d->p + d->len, b, n);
        d->len += n;
}

/* Tag and definite length (short form below 128, else 1..4 length bytes). */
static void der_hdr(struct der *d, unsigned char tag, size_t n)
{
        unsigned char h[6];
        size_t k = 0;
        if (n > TRUST_P12_DER_MAX) {
                d->overflow = true;
                return;
        }
        size_t bytes = der_tlv_len(n) - n - 2; /* 0: the short form */
        h[k++] = tag;
        if (bytes == 0) {
                h[k++] = (unsigned char)n;
        } else {
                h[k++] = (unsigned char)(0x80 | bytes);
                for (size_t i = bytes; i > 0; i--)
                        h[k++] = (unsigned char)(n >> (8 * (i - 1)));
        }
        der_put(d, h, k);
}

/* An INTEGER v (non-negative) into out: big-endian, minimal, a leading 0
 * when the top bit is set. Returns its size. */
static size_t der_uint(uint32_t v, unsigned char out[7])
{
        size_t n = 1;
        while (n < 4 && v >> (8 * n))
                n++;
        bool lead = v >> (8 * n - 1) & 1;
        out[0] = 0x02;
        out[1] = (unsigned char)(n + lead);
        out[2] = 0;
        for (size_t i = 0; i < n; i++)
                out[2 + lead + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
        return 2 + lead + n;
}

/* The contents lengths of one certificate bag's nested elements. */
struct bag_len {
        size_t cert_val; /* [0] { OCTET STRING { cert } } */
        size_t cert_bag; /* CertBag */
        size_t bag_val;  /* [0] { CertBag } */
        size_t fn_set;   /* SET { BMPString } */
        size_t fn_attr;  /* friendlyName Attribute */
        size_t attrs;    /* SET OF Attribute */
        size_t bag;      /* SafeBag */
};

/* The SafeBag's whole size for a certificate of cert_len bytes and an
 * ASCII alias of alias_len characters (SIZE_MAX: too large). */
static size_t bag_lens(size_t cert_len, size_t alias_len, struct bag_len *L)
{
        L->cert_val = der_tlv_len(cert_len);
        L->cert_bag = len_add(sizeof OID_X509_CERT, der_tlv_len(L->cert_val));
        L->bag_val = der_tlv_len(L->cert_bag);
        L->fn_set = der_tlv_len(alias_len > TRUST_P12_DER_MAX / 2 ? SIZE_MAX : 2 * alias_len);
        L->fn_attr = len_add(sizeof OID_FRIENDLY_NAME, der_tlv_len(L->fn_set));
        L->attrs = len_add(sizeof JAVA_TRUSTED_ATTR, der_tlv_len(L->fn_attr));
        L->bag = len_add(len_add(sizeof OID_CERT_BAG, der_tlv_len(L->bag_val)),
                         der_tlv_len(L->attrs));
        return der_tlv_len(L->bag);
}

static void bag_write(struct der *d, const unsigned char *cert, size_t cert_len, const char *alias)
{
        struct bag_len L;
        size_t m = strlen(alias);
        bag_lens(cert_len, m, &L);
        der_hdr(d, 0x30, L.bag);
        der_put(d, OID_CERT_BAG, sizeof OID_CERT_BAG);
        der_hdr(d, 0xa0, L.bag_val);
        der_hdr(d, 0x30, L.cert_bag);
        der_put(d, OID_X509_CERT, sizeof OID_X509_CERT);
        der_hdr(d, 0xa0, L.cert_val);
        der_hdr(d, 0x04, cert_len);
        der_put(d, cert, cert_len);
        /* SET OF in DER order: the Java attribute (30 16 ...) sorts before
         * friendlyName (30 xx with xx = 15 + 2m >= 0x17: every alias here
         * has at least 4 characters) */
        der_hdr(d, 0x31, L.attrs);
        der_put(d, JAVA_TRUSTED_ATTR, sizeof JAVA_TRUSTED_ATTR);
        der_hdr(d, 0x30, L.fn_attr);
        der_put(d, OID_FRIENDLY_NAME, sizeof OID_FRIENDLY_NAME);
        der_hdr(d, 0x31, L.fn_set);
        der_hdr(d, 0x1e, 2 * m); /* BMPString: UTF-16BE, no terminator */
        for (size_t i = 0; i < m; i++) {
                unsigned char u[2] = {0, (unsigned char)alias[i]};
                der_put(d, u, 2);
        }
}

/* The host's certificates as bags (aliases TRUST_P12_HOST_ALIAS from 1),
 * back to back: their total size (SIZE_MAX: too large), written to d when
 * d is not NULL. */
static size_t host_bags(const struct trust_certs *host, struct der *d)
{
        struct bag_len L;
        char alias[32];
        size_t total = 0;
        for (size_t i = 0; host && i < host->n; i++) {
                const struct trust_cert *c = &host->refs[i];
                int k = snprintf(alias, sizeof alias, TRUST_P12_HOST_ALIAS, i + 1);
                total = len_add(total, bag_lens(c->cert_len, (size_t)k, &L));
                if (d)
                        bag_write(d, host->der + c->off, c->cert_len, alias);
        }
        return total;
}

int trust_p12_bags(const struct trust_certs *host, unsigned char **ret, size_t *len)
{
        if (!host || host->n == 0 || !ret || !len)
                return -EINVAL;
        size_t total = host_bags(host, NULL);
        if (total > TRUST_P12_DER_MAX)
                return -EFBIG;
        struct der d = {.p = malloc(total), .cap = total};
        if (!d.p)
                return -ENOMEM;
        host_bags(host, &d);
        if (d.overflow || d.len != total) {
                free(d.p);
                return -EIO;
        }
        *ret = d.p;
        *len = total;
        return 0;
}

/* The sizes of a store's elements around its bags (trust_p12_head). */
struct p12_len {
        size_t bags, safe_oct, inner_ci, auth_safe, outer_ci, n_iter, digest_info, mac_data, pfx,
                total;
        unsigned char iter[7];
};

static int p12_lens(size_t ca_len, size_t host_len, struct p12_len *P)
{
        struct bag_len L;
        P->bags = len_add(bag_lens(ca_len, strlen(TRUST_P12_ALIAS), &L), host_len);
        P->safe_oct = der_tlv_len(P->bags); /* SafeContents */
        P->inner_ci = len_add(sizeof OID_DATA, der_tlv_len(der_tlv_len(P->safe_oct)));
        P->auth_safe = der_tlv_len(der_tlv_len(P->inner_ci)); /* what the MAC covers */
        P->outer_ci = len_add(sizeof OID_DATA, der_tlv_len(der_tlv_len(P->auth_safe)));
        P->n_iter = der_uint(TRUST_P12_ITER, P->iter);
        P->digest_info = sizeof ALG_SHA256 + der_tlv_len(TRUST_P12_MAC_LEN);
        P->mac_data = der_tlv_len(P->digest_info) + der_tlv_len(TRUST_P12_SALT_LEN) + P->n_iter;
        P->pfx = len_add(len_add(3, der_tlv_len(P->outer_ci)), der_tlv_len(P->mac_data));
        P->total = der_tlv_len(P->pfx);
        return P->total > TRUST_P12_DER_MAX ? -EFBIG : 0;
}

int trust_p12_head(const unsigned char *ca, size_t ca_len, size_t host_len, unsigned char **ret,
                   size_t *len, size_t *auth_at)
{
        struct p12_len P;
        if (!ca || ca_len == 0 || !ret || !len || !auth_at)
                return -EINVAL;
        int r = p12_lens(ca_len, host_len, &P);
        if (r < 0)
                return r;
        /* everything up to the host's bags: total - their size - MacData */
        size_t head = P.total - host_len - der_tlv_len(P.mac_data);
        struct der d = {.p = malloc(head), .cap = head};
        if (!d.p)
                return -ENOMEM;
        der_hdr(&d, 0x30, P.pfx);
        der_put(&d, "\x02\x01\x03", 3); /* version 3 */
        der_hdr(&d, 0x30, P.outer_ci);
        der_put(&d, OID_DATA, sizeof OID_DATA);
        der_hdr(&d, 0xa0, der_tlv_len(P.auth_safe));
        der_hdr(&d, 0x04, P.auth_safe);
        size_t at = d.len;
        der_hdr(&d, 0x30, der_tlv_len(P.inner_ci)); /* AuthenticatedSafe */
        der_hdr(&d, 0x30, P.inner_ci);
        der_put(&d, OID_DATA, sizeof OID_DATA);
        der_hdr(&d, 0xa0, der_tlv_len(P.safe_oct));
        der_hdr(&d, 0x04, P.safe_oct);
        der_hdr(&d, 0x30, P.bags); /* SafeContents: the run CA first */
        bag_write(&d, ca, ca_len, TRUST_P12_ALIAS);
        if (d.overflow || d.len != head || head - at + host_len != P.auth_safe) {
                free(d.p);
                return -EIO; /* a length computed wrong: never write a broken store */
        }
        *ret = d.p;
        *len = head;
        *auth_at = at;
        return 0;
}

int trust_p12_tail(const unsigned char salt[TRUST_P12_SALT_LEN],
                   const unsigned char mac[TRUST_P12_MAC_LEN], unsigned char *out, size_t *len)
{
        struct p12_len P;
        if (!salt || !mac || !out || !len)
                return -EINVAL;
        (void)p12_lens(1, 0, &P); /* MacData's size depends on neither */
        size_t n = der_tlv_len(P.mac_data);
        struct der d = {.p = out, .cap = TRUST_P12_TAIL_MAX};
        der_hdr(&d, 0x30, P.mac_data);
        der_hdr(&d, 0x30, P.digest_info);
        der_put(&d, ALG_SHA256, sizeof ALG_SHA256);
        der_hdr(&d, 0x04, TRUST_P12_MAC_LEN);
        der_put(&d, mac, TRUST_P12_MAC_LEN);
        der_hdr(&d, 0x04, TRUST_P12_SALT_LEN);
        der_put(&d, salt, TRUST_P12_SALT_LEN);
        der_put(&d, P.iter, P.n_iter);
        if (d.overflow || d.len != n)
                return -EIO;
        *len = n;
        return 0;
}

size_t trust_p12_tail_mac_at(void)
{
        struct p12_len P;
        (void)p12_lens(1, 0, &P);
        /* MacData's and DigestInfo's headers, the algorithm, the OCTET
         * STRING's header (trust_p12_tail's order) */
        return der_tlv_len(P.mac_data) - P.mac_data + der_tlv_len(P.digest_info) - P.digest_info +
               sizeof ALG_SHA256 + der_tlv_len(TRUST_P12_MAC_LEN) - TRUST_P12_MAC_LEN;
}

int trust_p12(const unsigned char *ca, size_t ca_len, const struct trust_certs *host,
              const char *password, const unsigned char salt[TRUST_P12_SALT_LEN],
              trust_mac_fn mac_fn, void *mac_ctx, unsigned char **ret, size_t *len)
{
        unsigned char mac[TRUST_P12_MAC_LEN], tail[TRUST_P12_TAIL_MAX], *head = NULL;
        size_t head_len = 0, auth_at = 0, tail_len = 0;
        int r;

        if (!ca || ca_len == 0 || !password || !salt || !mac_fn || !ret || !len ||
            strlen(password) > TRUST_P12_PASSWORD_MAX)
                return -EINVAL;
        for (const char *c = password; *c; c++)
                if ((unsigned char)*c >= 0x80)
                        return -EINVAL; /* the KDF's BMPString: ASCII only here */
        /* The host's roots, so the store can replace the JVM's cacerts; the
         * --upstream-ca file is for the egress process's own upstream
         * connections and is not handed to the run. */
        size_t host_len = host_bags(host, NULL);
        if (host_len > TRUST_P12_DER_MAX)
                return -EFBIG;
        if ((r = trust_p12_head(ca, ca_len, host_len, &head, &head_len, &auth_at)) < 0)
                return r;
        size_t total = len_add(len_add(head_len, host_len), TRUST_P12_TAIL_MAX);
        struct der d = {.p = total <= TRUST_P12_DER_MAX ? malloc(total) : NULL, .cap = total};
        if (!d.p) {
                free(head);
                return total > TRUST_P12_DER_MAX ? -EFBIG : -ENOMEM;
        }
        der_put(&d, head, head_len);
        free(head);
        host_bags(host, &d);
        if (d.overflow || d.len != head_len + host_len) {
                r = -EIO;
                goto fail;
        }
        if ((r = mac_fn(password, salt, TRUST_P12_SALT_LEN, TRUST_P12_ITER, d.p + auth_at,
                        d.len - auth_at, mac, mac_ctx)) < 0 ||
            (r = trust_p12_tail(salt, mac, tail, &tail_len)) < 0)
                goto fail;
        der_put(&d, tail, tail_len);
        if (d.overflow) {
                r = -EIO;
                goto fail;
        }
        *ret = d.p;
        *len = d.len;
        return 0;
fail:
        free(d.p);
        return r;
}
