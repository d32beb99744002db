/*
 * runca.c — the run CA and its trust store's MAC with nettle (see runca.h).
 *
 * Design: the certificate is a fixed shape with four variable parts (serial,
 * validity, public key, hosts), so it is written with a small DER builder:
 * each element's contents are built first, then wrapped in its tag and
 * length (struct out: a growable buffer that remembers a failure instead of
 * checking every call). The signature is nettle's ECDSA over the
 * TBSCertificate's SHA-256, as X509_sign writes it (ecdsa-with-SHA256, the
 * Ecdsa-Sig-Value SEQUENCE of r and s in a BIT STRING).
 *
 * Where the keys live: nettle's ecc_scalar (limbs nettle allocates; wiped
 * here before ecc_scalar_clear frees them), one mpz per scalar while it is
 * exported (allocated big enough up front so GMP never moves it, wiped
 * before mpz_clear), and the caller's export buffer. The caller is the
 * supervisor (tls/trustmake.c), a long-lived process, so nettle's own
 * scratch does not outlive a call either: GMP's memory functions, through
 * which nettle allocates it, wipe what they free (gmp_wiping: GMP passes
 * the size), and the stack below runca_new is wiped before it returns
 * (wipe_stack). The signature's nonce is the one value nettle keeps in a
 * stack scratch only.
 *
 * Threats: the host names are the only input from policy and the command
 * line: trust_host_valid refuses anything but LDH names, so nothing can
 * smuggle a second name into the constraint; every length is bounded by
 * RF_TLS_MAX_HOSTS names of RF_TLS_HOST_MAX bytes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <gmp.h>
#include <nettle/version.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/hmac.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

#include "shared/macro.h"
#include "tls/runca.h"
#include "tls/tlsterm.h"

/* GMP's memory functions (gmp_wiping) reach nettle's scratch only when
 * nettle uses GMP itself, not its bundled mini-gmp */
#if defined(NETTLE_USE_MINI_GMP) && NETTLE_USE_MINI_GMP
#error "runca.c needs a nettle built with GMP (its scratch is wiped through GMP's functions)"
#endif

#define CA_LIFETIME_MAX ((uint64_t)10 * 366 * 24 * 3600)
#define CA_BACKDATE_S   60
#define KEY_LEN         RF_TLS_CA_KEY_LEN /* a P-256 scalar or coordinate */
#define POINT_LEN       (1 + 2 * KEY_LEN) /* uncompressed: 04 X Y */
#define SERIAL_LEN      16

/* ---- randomness ---------------------------------------------------------- */

/* nettle's random function cannot fail: a failed getrandom marks the
 * context and the caller throws the result away. The bytes are then 0x01,
 * not zeros: nettle draws a scalar until it lies in (0, q), and zeros
 * never do (it would spin for ever); 0x01… does, at once. */
struct rnd {
        bool failed;
};

static void rnd_fill(void *ctx, size_t len, uint8_t *dst)
{
        struct rnd *r = ctx;
        size_t got = 0;
        while (got < len) {
                ssize_t n = getrandom(dst + got, len - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        memset(dst, 1, len);
                        r->failed = true;
                        return;
                }
                got += (size_t)n;
        }
}

/* ---- a DER builder ------------------------------------------------------- */

struct out {
        unsigned char *p;
        size_t n, cap;
        bool failed; /* out of memory: nothing more is written */
};

static void put(struct out *o, const void *b, size_t n)
{
        if (o->failed || n == 0)
                return;
        if (n > o->cap - o->n) {
                size_t cap = o->cap ? o->cap : 256;
                while (cap - o->n < n && cap < ((size_t)1 << 24))
                        cap *= 2;
                unsigned char *q = cap - o->n >= n ? realloc(o->p, cap) : NULL;
                if (!q) {
                        o->failed = true;
                        return;
                }
                o->p = q;
                o->cap = cap;
        }
        memcpy(o->p + o->n, b, n);
        o->n += n;
}

/* Tag, definite length, contents. */
static void tlv(struct out *o, unsigned char tag, const void *b, size_t n)
{
        unsigned char h[6];
        size_t k = 0;
        h[k++] = tag;
        if (n < 0x80) {
                h[k++] = (unsigned char)n;
        } else {
                size_t bytes = n <= 0xff ? 1 : n <= 0xffff ? 2 : n <= 0xffffff ? 3 : 4;
                h[k++] = (unsigned char)(0x80 | bytes);
                for (size_t i = bytes; i > 0; i--)
                        h[k++] = (unsigned char)(n >> (8 * (i - 1)));
        }
        put(o, h, k);
        put(o, b, n);
}

/* Wrap what `in` holds as one element into o, and empty `in`. */
static void wrap(struct out *o, unsigned char tag, struct out *in)
{
        if (in->failed)
                o->failed = true;
        else
                tlv(o, tag, in->p, in->n);
        in->n = 0;
        in->failed = false;
}

static void out_free(struct out *o)
{
        free(o->p);
        *o = (struct out){0};
}

/* An unsigned big-endian number as an INTEGER (minimal, a leading zero
 * when its top bit is set). */
static void integer(struct out *o, const unsigned char *b, size_t n)
{
        while (n > 1 && b[0] == 0) {
                b++;
                n--;
        }
        unsigned char buf[1 + KEY_LEN + 1];
        if (n > KEY_LEN + 1) {
                o->failed = true;
                return;
        }
        size_t k = 0;
        if (b[0] & 0x80)
                buf[k++] = 0;
        memcpy(buf + k, b, n);
        tlv(o, 0x02, buf, k + n);
}

/* x as KEY_LEN big-endian bytes (zero-padded). false if it does not fit. */
static bool mpz_be(unsigned char out[KEY_LEN], const mpz_t x)
{
        size_t bytes = (mpz_sizeinbase(x, 2) + 7) / 8, cnt = 0;
        if (mpz_sgn(x) < 0 || bytes > KEY_LEN)
                return false;
        memset(out, 0, KEY_LEN);
        if (mpz_sgn(x) > 0)
                mpz_export(out + KEY_LEN - bytes, &cnt, 1, 1, 1, 0, x);
        return cnt == bytes || mpz_sgn(x) == 0;
}

/* A time as X.509 writes it: UTCTime before 2050, GeneralizedTime from then. */
static bool x509_time(struct out *o, time_t t)
{
        struct tm tm;
        char s[32];
        if (!gmtime_r(&t, &tm))
                return false;
        int year = tm.tm_year + 1900;
        if (year < 1950 || year > 9999)
                return false;
        bool utc = year < 2050;
        int n = snprintf(s, sizeof s,
                         utc ? "%02d%02d%02d%02d%02d%02dZ" : "%04d%02d%02d%02d%02d%02dZ",
                         utc ? year % 100 : year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                         tm.tm_sec);
        tlv(o, utc ? 0x17 : 0x18, s, (size_t)n);
        return true;
}

/* ---- the certificate ----------------------------------------------------- */

/* AlgorithmIdentifier ecdsa-with-SHA256 (1.2.840.10045.4.3.2), no parameters */
static const unsigned char ALG_ECDSA_SHA256[] = {0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86,
                                                 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02};
/* SubjectPublicKeyInfo's AlgorithmIdentifier: id-ecPublicKey, prime256v1 */
static const unsigned char ALG_P256[] = {0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
                                         0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
                                         0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
/* Name: O=ringfence, CN=ringfence run CA (UTF8String, as OpenSSL writes them) */
static const unsigned char NAME[] = {0x30, 0x2f, 0x31, 0x12, 0x30, 0x10, 0x06, 0x03, 0x55, 0x04,
                                     0x0a, 0x0c, 0x09, 'r',  'i',  'n',  'g',  'f',  'e',  'n',
                                     'c',  'e',  0x31, 0x19, 0x30, 0x17, 0x06, 0x03, 0x55, 0x04,
                                     0x03, 0x0c, 0x10, 'r',  'i',  'n',  'g',  'f',  'e',  'n',
                                     'c',  'e',  ' ',  'r',  'u',  'n',  ' ',  'C',  'A'};
/* basicConstraints, critical: CA:TRUE, pathlen:0 */
static const unsigned char EXT_BC[] = {0x30, 0x12, 0x06, 0x03, 0x55, 0x1d, 0x13, 0x01, 0x01, 0xff,
                                       0x04, 0x08, 0x30, 0x06, 0x01, 0x01, 0xff, 0x02, 0x01, 0x00};
/* keyUsage, critical: keyCertSign (bit 5), cRLSign (bit 6) */
static const unsigned char EXT_KU[] = {0x30, 0x0e, 0x06, 0x03, 0x55, 0x1d, 0x0f, 0x01,
                                       0x01, 0xff, 0x04, 0x04, 0x03, 0x02, 0x01, 0x06};
static const unsigned char OID_SKI[] = {0x06, 0x03, 0x55, 0x1d, 0x0e};
static const unsigned char OID_NC[] = {0x06, 0x03, 0x55, 0x1d, 0x1e};
static const unsigned char CRITICAL[] = {0x01, 0x01, 0xff};

/* The nameConstraints extension: permitted dNSName subtrees = hosts,
 * excluded iPAddress 0.0.0.0/0 and ::/0 (address and mask all zero). */
static void ext_name_constraints(struct out *o, const char *const *hosts, size_t n)
{
        static const unsigned char zero[32];
        struct out a = {0}, b = {0}, c = {0};
        for (size_t i = 0; i < n; i++) {
                tlv(&b, 0x82, hosts[i], strlen(hosts[i])); /* [2] dNSName */
                wrap(&a, 0x30, &b);                        /* GeneralSubtree */
        }
        wrap(&c, 0xa0, &a); /* [0] permittedSubtrees */
        tlv(&b, 0x87, zero, 8);
        wrap(&a, 0x30, &b);
        tlv(&b, 0x87, zero, 32);
        wrap(&a, 0x30, &b);
        wrap(&c, 0xa1, &a); /* [1] excludedSubtrees */
        wrap(&b, 0x30, &c); /* NameConstraints */
        put(&a, OID_NC, sizeof OID_NC);
        put(&a, CRITICAL, sizeof CRITICAL);
        wrap(&a, 0x04, &b);
        wrap(o, 0x30, &a);
        out_free(&a);
        out_free(&b);
        out_free(&c);
}

/* The TBSCertificate. */
static bool tbs(struct out *o, const unsigned char serial[SERIAL_LEN], time_t nb, time_t na,
                const unsigned char point[POINT_LEN], const char *const *hosts, size_t n)
{
        struct out c = {0}, t = {0}, e = {0};
        unsigned char ski[SHA1_DIGEST_SIZE];
        struct sha1_ctx h;
        bool ok = true;

        put(&c, "\xa0\x03\x02\x01\x02", 5); /* [0] version v3 */
        tlv(&c, 0x02, serial, SERIAL_LEN);
        put(&c, ALG_ECDSA_SHA256, sizeof ALG_ECDSA_SHA256);
        put(&c, NAME, sizeof NAME);
        ok &= x509_time(&t, nb);
        ok &= x509_time(&t, na);
        wrap(&c, 0x30, &t);
        put(&c, NAME, sizeof NAME);
        put(&t, ALG_P256, sizeof ALG_P256);
        put(&e, "", 1); /* no unused bits */
        put(&e, point, POINT_LEN);
        wrap(&t, 0x03, &e);
        wrap(&c, 0x30, &t); /* SubjectPublicKeyInfo */

        put(&t, EXT_BC, sizeof EXT_BC);
        put(&t, EXT_KU, sizeof EXT_KU);
        /* subjectKeyIdentifier: SHA-1 of the public key's bits (RFC 5280
         * 4.2.1.2 method 1, what OpenSSL's "hash" writes) */
        sha1_init(&h);
        sha1_update(&h, POINT_LEN, point);
        sha1_digest(&h, sizeof ski, ski);
        put(&e, OID_SKI, sizeof OID_SKI);
        struct out k = {0};
        tlv(&k, 0x04, ski, sizeof ski);
        wrap(&e, 0x04, &k);
        out_free(&k);
        wrap(&t, 0x30, &e);
        ext_name_constraints(&t, hosts, n);
        wrap(&e, 0x30, &t); /* Extensions */
        wrap(&c, 0xa3, &e); /* [3] */

        wrap(o, 0x30, &c);
        out_free(&c);
        out_free(&t);
        out_free(&e);
        return ok && !o->failed;
}

/* ---- the keys ------------------------------------------------------------ */

struct keypair {
        struct ecc_scalar key;
        struct ecc_point pub;
        bool made;
};

static void keypair_free(struct keypair *k)
{
        if (!k->made)
                return;
        explicit_bzero(k->key.p, (size_t)ecc_size(nettle_get_secp_256r1()) * sizeof(mp_limb_t));
        ecc_scalar_clear(&k->key);
        ecc_point_clear(&k->pub);
        k->made = false;
}

static void keypair_new(struct keypair *k, struct rnd *r)
{
        const struct ecc_curve *c = nettle_get_secp_256r1();
        ecc_scalar_init(&k->key, c);
        ecc_point_init(&k->pub, c);
        k->made = true;
        ecdsa_generate_keypair(&k->pub, &k->key, r, rnd_fill);
}

/* The private scalar into out[KEY_LEN]: through one mpz allocated for
 * 256 bits up front (GMP never reallocates it), wiped. */
static bool scalar_out(const struct keypair *k, unsigned char out[KEY_LEN])
{
        mpz_t z;
        mpz_init2(z, 8 * KEY_LEN + 64);
        ecc_scalar_get(&k->key, z);
        bool ok = mpz_be(out, z);
        size_t limbs = mpz_size(z);
        if (limbs)
                explicit_bzero(mpz_limbs_modify(z, (mp_size_t)limbs), limbs * sizeof(mp_limb_t));
        mpz_clear(z);
        return ok;
}

static bool point_out(const struct keypair *k, unsigned char out[POINT_LEN])
{
        mpz_t x, y;
        mpz_inits(x, y, NULL);
        ecc_point_get(&k->pub, x, y);
        out[0] = 0x04;
        bool ok = mpz_be(out + 1, x) && mpz_be(out + 1 + KEY_LEN, y);
        mpz_clears(x, y, NULL);
        return ok;
}

/* ---- runca_new --------------------------------------------------------- */

/* noinline: its frame lies above the stack wipe_stack clears (it holds
 * no secret itself: pointers, the digest, the signature, the serial) */
static __attribute__((noinline)) int runca_make(const char *const *hosts, size_t n_hosts,
                                                uint64_t lifetime_s, time_t now,
                                                unsigned char **der, size_t *der_len,
                                                unsigned char *export, size_t export_max,
                                                size_t *export_len);

/* GMP's allocation, wiping what it frees (nettle's scratch for the keys
 * and the signature comes from here). GMP cannot take a failed
 * allocation: like its own functions, these abort. */
static void *gmp_alloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                abort();
        return p;
}

static void *gmp_realloc(void *p, size_t old, size_t n)
{
        void *q = gmp_alloc(n);
        if (p) {
                memcpy(q, p, old < n ? old : n);
                explicit_bzero(p, old);
                free(p);
        }
        return q;
}

static void gmp_free(void *p, size_t n)
{
        if (!p)
                return;
        explicit_bzero(p, n);
        free(p);
}

static void gmp_wiping(void)
{
        static bool set;
        if (!set)
                mp_set_memory_functions(gmp_alloc, gmp_realloc, gmp_free);
        set = true;
}

/* The stack runca_new's callees used (nettle's small scratch, TMP_ALLOC),
 * wiped: 16 KiB below the caller's frame, more than P-256 needs. */
static __attribute__((noinline)) void wipe_stack(void)
{
        unsigned char b[16384];
        explicit_bzero(b, sizeof b);
        __asm__ volatile("" : : "r"(b) : "memory");
}

int runca_new(const char *const *hosts, size_t n_hosts, uint64_t lifetime_s, time_t now,
              unsigned char **der, size_t *der_len, unsigned char *export, size_t export_max,
              size_t *export_len)
{
        int r = runca_make(hosts, n_hosts, lifetime_s, now, der, der_len, export, export_max,
                           export_len);
        wipe_stack();
        return r;
}

static int runca_make(const char *const *hosts, size_t n_hosts, uint64_t lifetime_s, time_t now,
                      unsigned char **der, size_t *der_len, unsigned char *export,
                      size_t export_max, size_t *export_len)
{
        if (!hosts || n_hosts == 0 || n_hosts > RF_TLS_MAX_HOSTS || lifetime_s == 0 ||
            lifetime_s > CA_LIFETIME_MAX || !der || !der_len || !export_len)
                return -EINVAL;
        for (size_t i = 0; i < n_hosts; i++)
                if (!hosts[i] || !trust_host_valid(hosts[i]))
                        return -EINVAL;
        gmp_wiping();

        struct rnd rnd = {0};
        struct keypair ca = {0}, leaf = {0};
        struct out t = {0}, rs = {0}, bits = {0}, cert = {0};
        unsigned char serial[SERIAL_LEN], point[POINT_LEN], leaf_point[POINT_LEN];
        unsigned char digest[SHA256_DIGEST_SIZE], rb[KEY_LEN], sb[KEY_LEN];
        struct dsa_signature s;
        int r = -EIO;

        dsa_signature_init(&s);
        rnd_fill(&rnd, sizeof serial, serial);
        serial[0] &= 0x7f; /* positive */
        serial[0] |= 0x01; /* and never shorter than 16 bytes (no leading zero) */
        keypair_new(&ca, &rnd);
        keypair_new(&leaf, &rnd);
        if (rnd.failed || !point_out(&ca, point) || !point_out(&leaf, leaf_point))
                goto out;
        r = -ENOMEM;
        if (!tbs(&t, serial, now - CA_BACKDATE_S, now + (time_t)lifetime_s, point, hosts, n_hosts))
                goto out;
        struct sha256_ctx h;
        sha256_init(&h);
        sha256_update(&h, t.n, t.p);
        sha256_digest(&h, sizeof digest, digest);
        ecdsa_sign(&ca.key, &rnd, rnd_fill, sizeof digest, digest, &s);
        r = -EIO;
        if (rnd.failed || !mpz_be(rb, s.r) || !mpz_be(sb, s.s))
                goto out;
        integer(&rs, rb, sizeof rb);
        integer(&rs, sb, sizeof sb);
        put(&bits, "", 1);      /* the BIT STRING's unused bits */
        wrap(&bits, 0x30, &rs); /* Ecdsa-Sig-Value */
        put(&cert, t.p, t.n);
        put(&cert, ALG_ECDSA_SHA256, sizeof ALG_ECDSA_SHA256);
        wrap(&cert, 0x03, &bits);
        struct out whole = {0};
        wrap(&whole, 0x30, &cert);
        r = -ENOMEM;
        if (whole.failed) {
                out_free(&whole);
                goto out;
        }

        /* the export: tlsterm.h's layout */
        size_t need = RF_TLS_CA_EXPORT_LEAF_KEY + KEY_LEN + POINT_LEN + 4 + whole.n + 1;
        for (size_t i = 0; i < n_hosts; i++)
                need += 1 + strlen(hosts[i]);
        *export_len = need;
        if (!export || export_max < need) {
                out_free(&whole);
                r = -ENOBUFS;
                goto out;
        }
        unsigned char *p = export;
        memcpy(p, RF_TLS_CA_EXPORT_MAGIC, RF_TLS_CA_EXPORT_CA_KEY);
        if (!scalar_out(&ca, p + RF_TLS_CA_EXPORT_CA_KEY) ||
            !scalar_out(&leaf, p + RF_TLS_CA_EXPORT_LEAF_KEY)) {
                explicit_bzero(export, need);
                out_free(&whole);
                r = -EIO;
                goto out;
        }
        p += RF_TLS_CA_EXPORT_LEAF_KEY + KEY_LEN;
        p = mempcpy(p, leaf_point, POINT_LEN);
        *p++ = (unsigned char)(whole.n >> 24);
        *p++ = (unsigned char)(whole.n >> 16);
        *p++ = (unsigned char)(whole.n >> 8);
        *p++ = (unsigned char)whole.n;
        p = mempcpy(p, whole.p, whole.n);
        *p++ = (unsigned char)n_hosts;
        for (size_t i = 0; i < n_hosts; i++) {
                size_t l = strlen(hosts[i]);
                *p++ = (unsigned char)l;
                p = mempcpy(p, hosts[i], l);
        }
        *der = whole.p;
        *der_len = whole.n;
        r = 0;
out:
        dsa_signature_clear(&s);
        keypair_free(&ca);
        keypair_free(&leaf);
        out_free(&t);
        out_free(&rs);
        out_free(&bits);
        out_free(&cert);
        return r;
}

/* ---- the PKCS#12 store's MAC --------------------------------------------- */

int runca_p12_key(const char *password, const unsigned char *salt, size_t salt_len, unsigned iter,
                  unsigned char key[TRUST_P12_MAC_LEN])
{
        enum { V = SHA256_BLOCK_SIZE }; /* the hash's block: 64 */
        size_t plen = password ? strlen(password) : 0;
        if (plen == 0 || plen > TRUST_P12_PASSWORD_MAX || !salt || salt_len == 0 || salt_len > V ||
            iter == 0)
                return -EINVAL;
        /* I = S || P: the salt and the password as a BMPString with its
         * terminator (UTF-16BE), each repeated to a multiple of V bytes */
        size_t pbytes = 2 * plen + 2, plen_v = (pbytes + V - 1) / V * V;
        unsigned char *in = malloc(V + plen_v);
        if (!in)
                return -ENOMEM;
        for (size_t i = 0; i < V; i++)
                in[i] = salt[i % salt_len];
        for (size_t i = 0; i < plen_v; i++) {
                size_t k = i % pbytes;
                unsigned char c = k / 2 < plen ? (unsigned char)password[k / 2] : 0;
                if (c >= 0x80) {
                        explicit_bzero(in, V + plen_v);
                        free(in);
                        return -EINVAL;
                }
                in[V + i] = k % 2 ? c : 0;
        }
        /* A = H^iter(D || I), D = V bytes of the ID (3: a MAC key); the key
         * is A's first 32 bytes, which is all of A (RFC 7292 B.2, n = u) */
        unsigned char d[V];
        memset(d, 3, sizeof d);
        struct sha256_ctx h;
        sha256_init(&h);
        sha256_update(&h, sizeof d, d);
        sha256_update(&h, V + plen_v, in);
        sha256_digest(&h, SHA256_DIGEST_SIZE, key);
        for (unsigned i = 1; i < iter; i++) {
                sha256_update(&h, SHA256_DIGEST_SIZE, key);
                sha256_digest(&h, SHA256_DIGEST_SIZE, key);
        }
        explicit_bzero(in, V + plen_v);
        free(in);
        explicit_bzero(&h, sizeof h);
        return 0;
}

int runca_p12_mac(const char *password, const unsigned char *salt, size_t salt_len, unsigned iter,
                  const unsigned char *data, size_t len, unsigned char mac[TRUST_P12_MAC_LEN],
                  void *ctx)
{
        unsigned char key[TRUST_P12_MAC_LEN];
        (void)ctx;
        int r = runca_p12_key(password, salt, salt_len, iter, key);
        if (r == 0) {
                struct hmac_sha256_ctx hm;
                hmac_sha256_set_key(&hm, TRUST_P12_MAC_LEN, key);
                hmac_sha256_update(&hm, len, data);
                hmac_sha256_digest(&hm, TRUST_P12_MAC_LEN, mac);
                explicit_bzero(&hm, sizeof hm);
        }
        explicit_bzero(key, sizeof key);
        return r;
}
