/*
 * trustfmt.h — the formats of a run's trust files, without a crypto library.
 *
 * What a run with TLS termination trusts (docs/TLS.md, "What a run must
 * trust") is made from the host's PEM bundle and the run CA's certificate:
 * the bundle with the CA appended, the CA alone as PEM, and a PKCS#12 trust
 * store for the JVM. This file finds and decodes the certificate blocks of a
 * PEM text (a parser of files the host provides: fuzzed by fuzz_trustfmt),
 * writes a certificate as PEM, joins the bundle and lays the PKCS#12 store
 * out as DER. The one piece of cryptography the store needs, its integrity
 * MAC, is the caller's function: the TLS module (tlsterm.c) computes it with
 * OpenSSL, the supervisor (runca.c) with nettle. Nothing here parses X.509:
 * a certificate is a DER SEQUENCE that fits, passed on as bytes.
 *
 * Used by the TLS module (ringfence-tls.so) and by the supervisor
 * (tls/trustmake.c); pure: memory in, memory out.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The PKCS#12 store's size bound (the DER writer refuses more): a host
 * bundle is at most RF_TLS_BUNDLE_MAX of text, whose DER is smaller, plus
 * ~150 bytes of bag per certificate of >= 60 bytes of text. */
#define TRUST_P12_DER_MAX ((size_t)64 << 20)
/* A store password's bound (ASCII bytes). */
#define TRUST_P12_PASSWORD_MAX 1024
/* The MAC's salt and iteration count: OpenSSL's defaults (PKCS12_SALT_LEN,
 * PKCS12_DEFAULT_ITER), which keytool and KeyStore read. */
#define TRUST_P12_SALT_LEN 8
#define TRUST_P12_ITER     2048
#define TRUST_P12_MAC_LEN  32 /* HMAC-SHA256 */
/* The run CA's alias in the store, and the host roots' (N from 1). */
#define TRUST_P12_ALIAS      "ringfence-run-ca"
#define TRUST_P12_HOST_ALIAS "host-ca-%zu"

/* One certificate block of a trust file, decoded: der[off, off + len) is
 * the block's base64 decoded, whose first cert_len bytes are the
 * certificate (a TRUSTED CERTIFICATE block appends OpenSSL's trust
 * settings: aux). */
struct trust_cert {
        size_t off, len, cert_len;
        bool aux;
};

/* A trust file's certificate blocks, decoded (trust_certs_load). */
struct trust_certs {
        unsigned char *der;      /* owned: every block's bytes, back to back */
        struct trust_cert *refs; /* owned: n of them, in file order */
        size_t n;
};

/*
 * A host name as a run CA accepts it: 1..253 bytes of LDH labels (1..63
 * lowercase letters, digits and '-', not starting or ending with '-'),
 * separated by single dots, not starting or ending with one, with at least
 * one letter (an all-numeric name is an IPv4 literal in disguise).
 */
bool trust_host_valid(const char *h);

/*
 * Find the certificate blocks of the PEM text text[0, n) (labels
 * CERTIFICATE, X509 CERTIFICATE and TRUSTED CERTIFICATE, as OpenSSL's reader
 * takes them; anything else in the text is skipped, as it skips text between
 * blocks) and decode them into *l. A block must end with its END line, its
 * base64 must decode (blanks aside, '=' only at the end) and start with one
 * DER SEQUENCE that fits in the decoded bytes: the certificate, not parsed
 * further. Returns the number of blocks (> 0); -EBADMSG when a block is
 * malformed or there is none (*l is then empty); -EFBIG above INT_MAX
 * blocks; -ENOMEM. Release with trust_certs_free.
 */
int trust_certs_load(const char *text, size_t n, struct trust_certs *l);
void trust_certs_free(struct trust_certs *l);

/*
 * A certificate's DER as PEM ("-----BEGIN CERTIFICATE-----", base64 in
 * lines of 64, the END line, each line ending in '\n': what OpenSSL's
 * PEM_write_X509 writes). *ret is malloc'ed and NUL-terminated, *len without
 * the NUL. 0, -EINVAL (no bytes, or more than TRUST_P12_DER_MAX), -ENOMEM.
 */
int trust_pem_cert(const unsigned char *der, size_t len, char **ret, size_t *retlen);

/*
 * The run's bundle: the host bundle's text host[0, host_len) byte for byte
 * (a '\n' added if it does not end in one), a comment line naming the run
 * CA, then ca_pem[0, ca_len). *ret malloc'ed and NUL-terminated, *len
 * without the NUL. 0 or -ENOMEM (-EFBIG if the sizes overflow).
 */
int trust_bundle_join(const char *host, size_t host_len, const char *ca_pem, size_t ca_len,
                      char **ret, size_t *len);

/*
 * What follows the host bundle's text in the run's bundle (trust_bundle_join
 * is host + this): a '\n' when nl (the text is not empty and does not end
 * in one), the comment line, ca_pem[0, ca_len).
 * For a writer that copies the host's text by other means (trustmake.c:
 * the kernel's copy). *ret malloc'ed, NUL-terminated. 0, -ENOMEM, -EFBIG.
 */
int trust_bundle_tail(bool nl, const char *ca_pem, size_t ca_len, char **ret, size_t *len);

/*
 * The integrity MAC of a PKCS#12 store: HMAC-SHA256 over data[0, len) keyed
 * by the PKCS#12 KDF (RFC 7292 B.2, ID 3, SHA-256) of the ASCII password,
 * the salt and `iter` iterations, into mac[TRUST_P12_MAC_LEN]. 0 or < 0
 * (-errno); ctx is the caller's.
 */
typedef int (*trust_mac_fn)(const char *password, const unsigned char *salt, size_t salt_len,
                            unsigned iter, const unsigned char *data, size_t len,
                            unsigned char mac[TRUST_P12_MAC_LEN], void *ctx);

/*
 * A PKCS#12 trust store (DER) for the JVM: the certificate ca[0, ca_len)
 * as a trusted certificate entry (alias TRUST_P12_ALIAS) and, when host is
 * not NULL, every certificate of host as one too (aliases
 * TRUST_P12_HOST_ALIAS, in order), so the store can stand in for the JVM's
 * cacerts; each with Java's trusted-key-usage attribute
 * 2.16.840.1.113894.746875.1.1 = anyExtendedKeyUsage, no key, certificates
 * unencrypted; integrity MAC from `mac` (HMAC-SHA256 with `password`,
 * `salt`, TRUST_P12_ITER iterations). The certificates go in as bytes,
 * unparsed. *ret is malloc'ed. -EINVAL without a password, with a
 * non-ASCII one or one over TRUST_P12_PASSWORD_MAX bytes, or without a
 * certificate; -EFBIG for a store over TRUST_P12_DER_MAX; -ENOMEM; what
 * `mac` returns; -EIO if a computed length was wrong (a store is never
 * written broken).
 */
int trust_p12(const unsigned char *ca, size_t ca_len, const struct trust_certs *host,
              const char *password, const unsigned char salt[TRUST_P12_SALT_LEN], trust_mac_fn mac,
              void *mac_ctx, unsigned char **ret, size_t *len);

/*
 * The same store in three parts, for a writer that keeps the host's part
 * between runs (tls/trustmake.c: it depends only on the host's bundle) and
 * computes the MAC itself over bytes it streams:
 *
 *   store = head || bags || tail, the MAC over head[auth_at..] || bags.
 *
 * trust_p12_bags: every certificate of host as a bag (aliases
 * TRUST_P12_HOST_ALIAS), back to back; *ret malloc'ed. -EINVAL without a
 * certificate, -EFBIG, -ENOMEM, -EIO.
 * trust_p12_head: everything before them for the run CA ca[0, ca_len) and
 * host bags of host_len bytes, the CA's own bag last; *ret malloc'ed,
 * *auth_at where the MAC's input starts. -EINVAL, -EFBIG, -ENOMEM, -EIO.
 * trust_p12_tail: the MacData for that MAC and salt (TRUST_P12_ITER
 * iterations) into out[TRUST_P12_TAIL_MAX], its size in *len. 0, -EINVAL,
 * -EIO.
 * trust_p12_tail_mac_at: where the MAC stands in every tail (its bytes
 * [at, at + TRUST_P12_MAC_LEN)), for a writer that puts it in later.
 * trust_p12 is exactly trust_p12_head || trust_p12_bags || trust_p12_tail.
 */
#define TRUST_P12_TAIL_MAX 96
int trust_p12_bags(const struct trust_certs *host, unsigned char **ret, size_t *len);
int trust_p12_head(const unsigned char *ca, size_t ca_len, size_t host_len, unsigned char **ret,
                   size_t *len, size_t *auth_at);
int trust_p12_tail(const unsigned char salt[TRUST_P12_SALT_LEN],
                   const unsigned char mac[TRUST_P12_MAC_LEN], unsigned char *out, size_t *len);
size_t trust_p12_tail_mac_at(void);
