/*
 * tlsterm.c — ringfence-tls.so: TLS termination for injection hosts (OpenSSL 3).
 *
 * Built as a shared module of its own and loaded by the supervisor (tls-load.c)
 * only for runs with an injection; the ringfence binary itself never links
 * OpenSSL. The only exported symbol is the vtable (RF_TLS_VTABLE_SYMBOL; the
 * build hides everything else with -fvisibility=hidden). Contracts are in
 * tlsterm.h.
 *
 * Design:
 *   - The per-run CA (rf_tls_ca) owns its ECDSA P-256 key, its certificate,
 *     one leaf key for the run and a small cache of leaves, one per injection
 *     host. EVP_PKEY_free clears the private scalar. The keys leave a handle
 *     only through ca_export, into the caller's buffer (the supervisor's
 *     secret memory), and come back through ca_import (in each egress
 *     process): scalars in a fixed layout, moved between the caller's
 *     bytes and OpenSSL's key objects through OSSL_PARAMs on buffers of
 *     our own, so no decoder, encoder or intermediate BIGNUM of ours
 *     holds a copy. The CA's critical nameConstraints permits only the
 *     run's injection hosts and excludes all IP addresses: defence in depth
 *     (the protection is that the key never leaves the egress process).
 *   - One leaf key per run, not per name: a leaf key is exactly as exposed as
 *     the CA key that sits beside it in the same memory, so per-name keys
 *     would buy no isolation; one key makes issuing a leaf a single
 *     signature. Leaves are issued only for the CA's own hosts.
 *   - Sessions sit directly on the (non-blocking) socket (SSL_set_fd): the
 *     egress process is a single-threaded poll loop over fds, and a memory
 *     BIO pair would only add a copy. OpenSSL's error queue is empty
 *     before every call that reads it (err_dirty), so one session's failure
 *     never leaks into another's.
 *   - A server session whose ClientHello the egress process has already
 *     read (to judge its SNI) gets those bytes back through a small read
 *     BIO of our own ("prefix BIO"): it serves a private copy of them first,
 *     then read(2)s the socket exactly as OpenSSL's socket BIO does (retry
 *     flags on EAGAIN/EINTR, EOF flagged for BIO_eof); writes go through an
 *     ordinary socket BIO. So the session makes the same syscalls with or
 *     without a prefix (read, write: RF_TLS_SECCOMP_NOTE). The copy is
 *     wiped and freed as soon as it is consumed. The BIO asks for a retry
 *     only once the copy is drained, so -EAGAIN/POLLIN always means "wait
 *     for the socket"; and the handshake cannot complete before the copy is
 *     drained (the client's Finished follows the ClientHello), so no bytes
 *     can sit unseen in it while the caller polls.
 *   - Renegotiation is refused on both sides (SSL_OP_NO_RENEGOTIATION): a
 *     second handshake inside a session would change keys, and possibly the
 *     peer's certificate, under a session the egress process already judged.
 *   - trust_load() is at the egress process's start (the run's first
 *     connection), so it only reads the files (before the lockdown: the
 *     egress process cannot open files) and checks them cheaply, as the TLS
 *     helper checked them at the run's start (trustfmt.c's reader): the
 *     certificate blocks are found in the PEM text and their base64
 *     decoded (each must be one DER SEQUENCE), with no
 *     X.509 decoding (OpenSSL 3 decodes every public key through its
 *     decoder framework: ~20 ms for Debian's 144 roots). The verification
 *     store and the client context are built from the decoded DER at the
 *     first client_new() (in the egress process, after its lockdown: memory
 *     only); a certificate that fails to parse there fails that and every
 *     later client_new() with a reason. The server context of a CA is
 *     likewise made at its first server session.
 *   - pkcs12() and trust_bundle() are trustfmt.c's (shared with the TLS
 *     helper, which makes the run's files without OpenSSL): the PKCS#12 DER
 *     laid out from the certificates' DER as decoded from the bundle text,
 *     no certificate parsed; OpenSSL only derives the MAC key, computes the
 *     HMAC and draws the salt here.
 *
 * Threats: peer-controlled input is the ClientHello (SNI and ALPN are
 * checked against the one expected name and http/1.1), the upstream's
 * certificate chain (OpenSSL's verifier, with hostname check), and record
 * data (OpenSSL). A name that is not an injection host never gets a leaf.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "shared/macro.h"
#include "tls/tlsterm.h"
#include "tls/trustfmt.h"

#define EXPORT __attribute__((visibility("default")))

/* 10 years: a run lives far less; anything longer is a caller's bug. */
#define CA_LIFETIME_MAX ((uint64_t)10 * 366 * 24 * 3600)
#define CA_BACKDATE_S   60
/* OpenSSL's security level 2 (112-bit keys, no SHA-1 signatures): Debian's
 * openssl.cnf default, set here because no config file is read. */
#define SECURITY_LEVEL 2
#define ALPN_HTTP11    "\x08http/1.1"
/* At most this many bytes already read from a server session's socket
 * (tlsterm.h: 64 KiB; a ClientHello is at most 16 KiB + 5 in practice). */
#define PREFIX_MAX (64u << 10)

struct rf_tls_trust {
        char *bundle_pem; /* owned: the host bundle's text, as read: trust_bundle() */
        size_t bundle_len;
        struct trust_certs host;  /* the host bundle's certificates: pkcs12() and the store */
        struct trust_certs extra; /* --upstream-ca's (n == 0 for none): the store only */
        /* Made by the first client_new() (trust_ready): */
        X509_STORE *store;           /* owned: host bundle + extra CA, parsed */
        SSL_CTX *ctx;                /* owned: client context using store */
        int failed;                  /* < 0 once the parse failed: every client_new fails so */
        char why[RF_TLS_REASON_MAX]; /* and why */
};

struct leaf {
        char name[RF_TLS_HOST_MAX + 1];
        X509 *cert; /* owned */
};

struct rf_tls_ca {
        EVP_PKEY *key;      /* owned: CA key (leaves it only through ca_export) */
        EVP_PKEY *leaf_key; /* owned: the run's leaf key */
        X509 *cert;         /* owned */
        SSL_CTX *server;    /* owned: server context (no cert: set per session),
                               made by the first server session (ca_server_ctx) */
        char **hosts;       /* owned, n_hosts lowercase names */
        size_t n_hosts;
        struct leaf leaves[RF_TLS_LEAF_CACHE_MAX];
        size_t n_leaves;
};

struct rf_tls_conn {
        SSL *ssl; /* owned; NULL in a session that only carries the reason why
                     client_new failed (trust_ready) */
        bool server;
        short want;
        char expected[RF_TLS_HOST_MAX + 1]; /* server: the name; client: the host */
        char reason[RF_TLS_REASON_MAX];
};

/* The prefix BIO's method (created once by init(); freed by
 * prefix_method_free when the module is unloaded). */
static BIO_METHOD *prefix_method;

/* A prefix BIO's state: the copy of bytes already read from fd. */
struct prefix {
        unsigned char *buf; /* owned: NULL once consumed (wiped) */
        size_t len, off;
        int fd; /* borrowed */
        bool eof;
};

/* ---- helpers ---------------------------------------------------------- */

/*
 * OpenSSL's error queue may hold errors: every call into OpenSSL but a
 * successful SSL_read_ex or SSL_write_ex may leave some, so every entry
 * point but read and write sets this, and conn_fail does. SSL_get_error
 * reads the queue first, so a read or write must start with it empty: they
 * clear it when this is set (err_fresh) rather than before every call, as
 * a bulk transfer makes one per TLS record and clearing an empty queue each
 * time cost ~1% of the egress process's CPU (perf, bench/inject). Test
 * builds check that a successful read or write left it empty.
 */
static bool err_dirty = true;

static void err_fresh(void)
{
        if (err_dirty) {
                ERR_clear_error();
                err_dirty = false;
        }
}

/* After a successful read or write: test builds check the queue is empty
 * (what err_fresh's skipping relies on). */
static void err_check_clean(const char *what)
{
#if RF_CONFIG_TEST_BUILD
        unsigned long e = ERR_peek_error();
        if (e) {
                fprintf(stderr, "ringfence-tls: a successful %s left OpenSSL error %lx queued\n",
                        what, e);
                abort();
        }
#else
        (void)what;
#endif
}

static int ossl_err(void)
{
        unsigned long e = ERR_peek_last_error();
        ERR_clear_error();
        return ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE ? -ENOMEM : -EIO;
}

/* OpenSSL's wording for error e (NULL when it has none). init() does not
 * load the error strings: they are loaded here, by the first failure that
 * wants one (memory only: allowed after the lockdown, tested). */
static const char *ossl_reason(unsigned long e)
{
        (void)OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS |
                                       OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
                               NULL);
        return ERR_reason_error_string(e);
}

static int mem_dup_out(BIO *b, char **ret, size_t *len)
{
        char *data;
        long n = BIO_get_mem_data(b, &data);
        if (n < 0)
                return -EIO;
        char *s = malloc((size_t)n + 1);
        if (!s)
                return -ENOMEM;
        memcpy(s, data, (size_t)n);
        s[n] = '\0';
        *ret = s;
        if (len)
                *len = (size_t)n;
        return 0;
}

static int x509_pem(X509 *x, char **ret, size_t *len)
{
        BIO *b = BIO_new(BIO_s_mem());
        if (!b)
                return -ENOMEM;
        int r = PEM_write_bio_X509(b, x) == 1 ? mem_dup_out(b, ret, len) : ossl_err();
        BIO_free(b);
        return r;
}

static int random_serial(X509 *x)
{
        unsigned char b[16];
        if (RAND_bytes(b, sizeof b) != 1)
                return -EIO;
        b[0] &= 0x7f; /* positive */
        b[0] |= 0x01; /* and never shorter than 16 bytes (no leading zero) */
        BIGNUM *bn = BN_bin2bn(b, sizeof b, NULL);
        OPENSSL_cleanse(b, sizeof b);
        if (!bn)
                return -ENOMEM;
        int r = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) ? 0 : -ENOMEM;
        BN_free(bn);
        return r;
}

static int add_ext(X509 *issuer, X509 *x, int nid, const char *value)
{
        X509V3_CTX v3;
        X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
        if (!e)
                return ossl_err();
        int r = X509_add_ext(x, e, -1) ? 0 : -ENOMEM;
        X509_EXTENSION_free(e);
        return r;
}

/* Put the public half of a P-256 key into x: SubjectPublicKeyInfo {
 * id-ecPublicKey, prime256v1, the uncompressed point }, the bytes
 * X509_set_pubkey writes, but without OpenSSL 3's encoder framework (whose
 * first use, ~0.7 ms, was most of ca_new on the run's start path). The
 * certificate keeps no decoded copy of the key: OpenSSL decodes it if it
 * ever needs it (nothing on the start path does). */
static int set_p256_pubkey(X509 *x, EVP_PKEY *key)
{
        unsigned char pt[65];
        size_t n = 0;
        if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt, sizeof pt,
                                            &n) != 1 ||
            n != sizeof pt || pt[0] != 0x04)
                return ossl_err();
        unsigned char *penc = OPENSSL_memdup(pt, n);
        if (!penc)
                return -ENOMEM;
        /* takes penc; the objects are OpenSSL's static ones */
        if (!X509_PUBKEY_set0_param(X509_get_X509_PUBKEY(x), OBJ_nid2obj(NID_X9_62_id_ecPublicKey),
                                    V_ASN1_OBJECT, OBJ_nid2obj(NID_X9_62_prime256v1), penc,
                                    (int)n)) {
                OPENSSL_free(penc);
                return ossl_err();
        }
        return 0;
}

static GENERAL_SUBTREE *subtree_ip(size_t len)
{
        /* address and mask all zero: every address of the family */
        unsigned char zero[32] = {0};
        GENERAL_SUBTREE *st = GENERAL_SUBTREE_new();
        ASN1_OCTET_STRING *o = ASN1_OCTET_STRING_new();
        if (!st || !o || !ASN1_OCTET_STRING_set(o, zero, (int)len)) {
                GENERAL_SUBTREE_free(st);
                ASN1_OCTET_STRING_free(o);
                return NULL;
        }
        GENERAL_NAME_set0_value(st->base, GEN_IPADD, o);
        return st;
}

static GENERAL_SUBTREE *subtree_dns(const char *host)
{
        GENERAL_SUBTREE *st = GENERAL_SUBTREE_new();
        ASN1_IA5STRING *s = ASN1_IA5STRING_new();
        if (!st || !s || !ASN1_STRING_set(s, host, (int)strlen(host))) {
                GENERAL_SUBTREE_free(st);
                ASN1_IA5STRING_free(s);
                return NULL;
        }
        GENERAL_NAME_set0_value(st->base, GEN_DNS, s);
        return st;
}

static int add_name_constraints(X509 *x, char *const *hosts, size_t n)
{
        int r = -ENOMEM;
        NAME_CONSTRAINTS *nc = NAME_CONSTRAINTS_new();
        if (!nc)
                return -ENOMEM;
        nc->permittedSubtrees = sk_GENERAL_SUBTREE_new_null();
        nc->excludedSubtrees = sk_GENERAL_SUBTREE_new_null();
        if (!nc->permittedSubtrees || !nc->excludedSubtrees)
                goto out;
        for (size_t i = 0; i < n; i++) {
                GENERAL_SUBTREE *st = subtree_dns(hosts[i]);
                if (!st || !sk_GENERAL_SUBTREE_push(nc->permittedSubtrees, st)) {
                        GENERAL_SUBTREE_free(st);
                        goto out;
                }
        }
        for (size_t len = 8; len <= 32; len += 24) { /* IPv4 addr+mask, IPv6 addr+mask */
                GENERAL_SUBTREE *st = subtree_ip(len);
                if (!st || !sk_GENERAL_SUBTREE_push(nc->excludedSubtrees, st)) {
                        GENERAL_SUBTREE_free(st);
                        goto out;
                }
        }
        r = X509_add1_ext_i2d(x, NID_name_constraints, nc, 1 /* critical */, X509V3_ADD_DEFAULT) ==
                            1
                    ? 0
                    : ossl_err();
out:
        NAME_CONSTRAINTS_free(nc);
        return r;
}

static X509_NAME *make_name(const char *cn)
{
        X509_NAME *n = X509_NAME_new();
        if (!n)
                return NULL;
        if (!X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8, (const unsigned char *)"ringfence",
                                        -1, -1, 0) ||
            !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                        0)) {
                X509_NAME_free(n);
                return NULL;
        }
        return n;
}

/* ---- the prefix BIO ------------------------------------------------------ */

static void prefix_drop(struct prefix *p)
{
        OPENSSL_clear_free(p->buf, p->len);
        p->buf = NULL;
        p->len = p->off = 0;
}

/* The copy first, then read(2) on the socket, as BIO_s_socket reads: -1 with
 * the retry flag on EAGAIN/EINTR, 0 (and the EOF flag) at end of stream, -1
 * with errno kept for any other error (SSL_ERROR_SYSCALL). */
static int prefix_read(BIO *b, char *out, int outl)
{
        struct prefix *p = BIO_get_data(b);
        BIO_clear_retry_flags(b);
        if (!p || !out || outl <= 0)
                return 0;
        if (p->buf) {
                size_t n = p->len - p->off;
                if (n > (size_t)outl)
                        n = (size_t)outl;
                memcpy(out, p->buf + p->off, n);
                p->off += n;
                if (p->off == p->len)
                        prefix_drop(p);
                return (int)n;
        }
        ssize_t k = read(p->fd, out, (size_t)outl);
        if (k > 0)
                return (int)k;
        if (k == 0) {
                p->eof = true;
                return 0;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                BIO_set_retry_read(b);
        return -1;
}

/* FLUSH succeeds (nothing is buffered for writing); EOF reports the end of
 * stream as the socket BIO does, so a peer that leaves without close_notify
 * is the same truncation error with or without a prefix; nothing else. */
static long prefix_ctrl(BIO *b, int cmd, long num, void *ptr)
{
        struct prefix *p = BIO_get_data(b);
        switch (cmd) {
        case BIO_CTRL_FLUSH:
                return 1;
        case BIO_CTRL_EOF:
                return p && p->eof;
        default:
                return 0;
        }
}

static int prefix_create(BIO *b)
{
        BIO_set_data(b, NULL);
        BIO_set_init(b, 0); /* until prefix_bio_new() attached the state */
        return 1;
}

static int prefix_destroy(BIO *b)
{
        struct prefix *p = b ? BIO_get_data(b) : NULL;
        if (p) {
                prefix_drop(p);
                free(p);
                BIO_set_data(b, NULL);
        }
        return 1;
}

static int prefix_method_new(void)
{
        int type = BIO_get_new_index();
        if (type == -1)
                return -EIO;
        BIO_METHOD *m = BIO_meth_new(type | BIO_TYPE_SOURCE_SINK, "ringfence prefix");
        if (!m || !BIO_meth_set_read(m, prefix_read) || !BIO_meth_set_ctrl(m, prefix_ctrl) ||
            !BIO_meth_set_create(m, prefix_create) || !BIO_meth_set_destroy(m, prefix_destroy)) {
                BIO_meth_free(m);
                return -EIO;
        }
        prefix_method = m;
        return 0;
}

/* The method lives as long as the module is mapped: freed when it is
 * unloaded (dlclose) or at exit, so nothing of the module outlives it. */
__attribute__((destructor)) static void prefix_method_free(void)
{
        BIO_meth_free(prefix_method);
        prefix_method = NULL;
}

/* A read BIO serving a copy of pre[0..len) (len > 0), then fd. */
static int prefix_bio_new(int fd, const void *pre, size_t len, BIO **ret)
{
        if (!prefix_method)
                return -EINVAL; /* init() was not called */
        struct prefix *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->fd = fd;
        p->len = len;
        p->buf = OPENSSL_malloc(len);
        BIO *b = p->buf ? BIO_new(prefix_method) : NULL;
        if (!b) {
                OPENSSL_free(p->buf);
                free(p);
                return -ENOMEM;
        }
        memcpy(p->buf, pre, len);
        BIO_set_data(b, p);
        BIO_set_init(b, 1);
        *ret = b;
        return 0;
}

/* ---- init and trust ------------------------------------------------------ */

/*
 * What init() does and does not do (measured: docs/TLS.md). It initialises
 * OpenSSL without its config file, instantiates the DRBG (the first RAND
 * call: OpenSSL fetches the DRBG's cipher and seeds it, ~1 ms, needed by
 * ca_new right after anyway), fetches the EC algorithms and makes glibc read
 * /etc/localtime: all the first-use work a post-lockdown call could
 * otherwise hit with files. It no longer loads OpenSSL's error strings
 * (~0.3 ms): only a failure's reason needs them, and ossl_reason() loads
 * them then (memory only; the first SSL_CTX_new loads libssl's anyway).
 */
static int tls_init(void)
{
        err_dirty = true;
        if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
                return -EIO;
        /* Seed the DRBG and fetch the algorithms now, while files and every
         * syscall are still allowed (provider loading happens at first use). */
        unsigned char b[16];
        if (RAND_bytes(b, sizeof b) != 1)
                return -EIO;
        EVP_PKEY *k = EVP_EC_gen("P-256");
        if (!k)
                return -EIO;
        EVP_PKEY_free(k);
        if (!prefix_method && prefix_method_new() < 0)
                return -EIO;
        /* glibc reads /etc/localtime at the first gmtime_r() of a process
         * (OpenSSL's certificate times use it): do that now, not after the
         * lockdown. */
        time_t now = time(NULL);
        struct tm tm;
        if (!gmtime_r(&now, &tm))
                return -EIO;
        return 0;
}

static int read_file(const char *path, char **ret, size_t *len)
{
        /* O_NONBLOCK: a FIFO where a file was expected must not hang us */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        int r = 0;
        char *buf = NULL;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto out;
        }
        if ((uint64_t)st.st_size > RF_TLS_BUNDLE_MAX) {
                r = -EFBIG;
                goto out;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        size_t got = 0;
        while (got < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        goto out;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        buf[got] = '\0';
        *ret = buf;
        *len = got;
        buf = NULL;
out:
        free(buf);
        close(fd);
        return r;
}

/* -- the verification store, built at the first client_new -- */

/* Parse every certificate of l into store. -EBADMSG (and why) when one does
 * not parse, -ENOMEM/-EIO when OpenSSL fails otherwise. */
static int store_add_list(X509_STORE *store, const struct trust_certs *l, const char *what,
                          char *why, size_t whylen)
{
        for (size_t i = 0; i < l->n; i++) {
                const struct trust_cert *c = &l->refs[i];
                const unsigned char *p = l->der + c->off;
                /* as PEM_X509_INFO_read_bio: a TRUSTED CERTIFICATE keeps
                 * OpenSSL's trust settings, which the verifier honours */
                X509 *x = c->aux ? d2i_X509_AUX(NULL, &p, (long)c->len)
                                 : d2i_X509(NULL, &p, (long)c->len);
                if (!x) {
                        const char *rs = ossl_reason(ERR_peek_last_error());
                        snprintf(why, whylen, "%s could not be read: certificate %zu of %zu: %s",
                                 what, i + 1, l->n, rs ? rs : "not an X.509 certificate");
                        ERR_clear_error();
                        return -EBADMSG;
                }
                int ok = X509_STORE_add_cert(store, x);
                X509_free(x);
                if (!ok)
                        return ossl_err();
        }
        return 0;
}

/* Build t's store and client context on first use: 0, or t's failure
 * (sticky for a certificate that does not parse: the files do not change
 * in memory). Memory only: called after the lockdown. */
static int trust_ready(struct rf_tls_trust *t)
{
        if (t->ctx)
                return 0;
        if (t->failed < 0)
                return t->failed;
        X509_STORE *store = X509_STORE_new();
        if (!store)
                return ossl_err();
        int r = store_add_list(store, &t->host, "the host's CA bundle", t->why, sizeof t->why);
        if (r >= 0)
                r = store_add_list(store, &t->extra, "the upstream CA file", t->why, sizeof t->why);
        if (r < 0) {
                X509_STORE_free(store);
                if (r == -EBADMSG)
                        t->failed = r;
                return r;
        }
        /* Partial chains are not trusted: the chain must end at an anchor
         * from the files; the default purpose check (sslserver) applies. */
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        if (ctx)
                SSL_CTX_set_security_level(ctx, SECURITY_LEVEL);
        if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
            SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)ALPN_HTTP11,
                                    sizeof ALPN_HTTP11 - 1) != 0) {
                r = ossl_err();
                SSL_CTX_free(ctx);
                X509_STORE_free(store);
                return r;
        }
        SSL_CTX_set_cert_store(ctx, store); /* takes store */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                      SSL_MODE_RELEASE_BUFFERS);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        /* An upstream's HelloRequest is answered with no_renegotiation. */
        SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
        t->store = store; /* borrowed from ctx */
        t->ctx = ctx;
        return 0;
}

static void tls_trust_free(struct rf_tls_trust *t)
{
        err_dirty = true;
        if (!t)
                return;
        SSL_CTX_free(t->ctx); /* and t->store with it */
        trust_certs_free(&t->host);
        trust_certs_free(&t->extra);
        free(t->bundle_pem);
        free(t);
}

static int tls_trust_load(const char *bundle_path, const char *extra_ca_path,
                          struct rf_tls_trust **ret)
{
        err_dirty = true;
        int r;
        if (!bundle_path || !ret)
                return -EINVAL;
        struct rf_tls_trust *t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        r = read_file(bundle_path, &t->bundle_pem, &t->bundle_len);
        if (r < 0)
                goto fail;
        r = trust_certs_load(t->bundle_pem, t->bundle_len, &t->host);
        if (r < 0)
                goto fail;
        if (extra_ca_path) {
                char *extra = NULL;
                size_t elen = 0;
                r = read_file(extra_ca_path, &extra, &elen);
                if (r < 0)
                        goto fail;
                r = trust_certs_load(extra, elen, &t->extra);
                free(extra);
                if (r < 0)
                        goto fail;
        }
        *ret = t;
        return 0;
fail:
        tls_trust_free(t);
        return r;
}

/* ---- the per-run CA ------------------------------------------------------ */

static void tls_ca_free(struct rf_tls_ca *ca)
{
        err_dirty = true;
        if (!ca)
                return;
        for (size_t i = 0; i < ca->n_leaves; i++)
                X509_free(ca->leaves[i].cert);
        SSL_CTX_free(ca->server);
        X509_free(ca->cert);
        EVP_PKEY_free(ca->leaf_key); /* clears the private scalar */
        EVP_PKEY_free(ca->key);
        for (size_t i = 0; i < ca->n_hosts; i++)
                free(ca->hosts[i]);
        free(ca->hosts);
        OPENSSL_cleanse(ca, sizeof *ca);
        free(ca);
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
        unsigned char *sel;
        if (SSL_select_next_proto(&sel, outlen, (const unsigned char *)ALPN_HTTP11,
                                  sizeof ALPN_HTTP11 - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
                return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
}

static int servername_check(SSL *ssl, int *alert, void *arg)
{
        struct rf_tls_conn *c = SSL_get_app_data(ssl);
        const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        if (!c)
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        if (!sni)
                return SSL_TLSEXT_ERR_OK;
        if (strcasecmp(sni, c->expected) != 0) {
                snprintf(c->reason, sizeof c->reason,
                         "client asked for another name than the connection's target");
                *alert = SSL_AD_UNRECOGNIZED_NAME;
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        return SSL_TLSEXT_ERR_OK;
}

static int tls_ca_new(const char *const *hosts, size_t n_hosts, uint64_t lifetime_s,
                      struct rf_tls_ca **ret)
{
        err_dirty = true;
        int r = -ENOMEM;
        if (!hosts || n_hosts == 0 || n_hosts > RF_TLS_MAX_HOSTS || lifetime_s == 0 ||
            lifetime_s > CA_LIFETIME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n_hosts; i++)
                if (!hosts[i] || !trust_host_valid(hosts[i]))
                        return -EINVAL;

        ERR_clear_error();
        struct rf_tls_ca *ca = calloc(1, sizeof *ca);
        if (!ca)
                return -ENOMEM;
        ca->hosts = calloc(n_hosts, sizeof *ca->hosts);
        if (!ca->hosts)
                goto fail;
        for (; ca->n_hosts < n_hosts; ca->n_hosts++) {
                ca->hosts[ca->n_hosts] = strdup(hosts[ca->n_hosts]);
                if (!ca->hosts[ca->n_hosts])
                        goto fail;
        }

        ca->key = EVP_EC_gen("P-256");
        ca->leaf_key = EVP_EC_gen("P-256");
        ca->cert = X509_new();
        if (!ca->key || !ca->leaf_key || !ca->cert) {
                r = ossl_err();
                goto fail;
        }
        X509 *x = ca->cert;
        X509_NAME *name = make_name("ringfence run CA");
        if (!name || !X509_set_version(x, X509_VERSION_3) || !X509_set_subject_name(x, name) ||
            !X509_set_issuer_name(x, name) || set_p256_pubkey(x, ca->key) < 0 ||
            !X509_gmtime_adj(X509_getm_notBefore(x), -CA_BACKDATE_S) ||
            !X509_gmtime_adj(X509_getm_notAfter(x), (long)lifetime_s)) {
                X509_NAME_free(name);
                r = ossl_err();
                goto fail;
        }
        X509_NAME_free(name);
        if ((r = random_serial(x)) < 0 ||
            (r = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE,pathlen:0")) < 0 ||
            (r = add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign")) < 0 ||
            (r = add_ext(x, x, NID_subject_key_identifier, "hash")) < 0 ||
            (r = add_name_constraints(x, ca->hosts, ca->n_hosts)) < 0)
                goto fail;
        if (X509_sign(x, ca->key, EVP_sha256()) <= 0) {
                r = ossl_err();
                goto fail;
        }
        /* the server context waits for the first server session
         * (ca_server_ctx): ca_new is on the run's start path */
        *ret = ca;
        return 0;
fail:
        tls_ca_free(ca);
        return r;
}

/* The CA's server context, made on first use (in the egress process, after
 * its lockdown: memory only). 0, -ENOMEM/-EIO. */
static int ca_server_ctx(struct rf_tls_ca *ca)
{
        if (ca->server)
                return 0;
        SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
        if (ctx)
                SSL_CTX_set_security_level(ctx, SECURITY_LEVEL);
        if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)) {
                int r = ossl_err();
                SSL_CTX_free(ctx);
                return r;
        }
        SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
        SSL_CTX_set_tlsext_servername_callback(ctx, servername_check);
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                      SSL_MODE_RELEASE_BUFFERS);
        /* No resumption: a run's sessions are short-lived and a ticket key
         * would be one more secret; every connection is a full handshake. */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                         SSL_OP_NO_RENEGOTIATION);
        SSL_CTX_set_num_tickets(ctx, 0);
        ca->server = ctx;
        return 0;
}

static int tls_ca_pem(const struct rf_tls_ca *ca, char **ret, size_t *len)
{
        err_dirty = true;
        return x509_pem(ca->cert, ret, len);
}

static int issue_leaf(struct rf_tls_ca *ca, const char *name, X509 **ret)
{
        int r = -ENOMEM;
        X509 *x = X509_new();
        X509_NAME *subj = make_name(name);
        char *san = NULL;
        if (!x || !subj)
                goto out;
        if (asprintf(&san, "DNS:%s", name) < 0) {
                san = NULL;
                goto out;
        }
        if (!X509_set_version(x, X509_VERSION_3) || !X509_set_subject_name(x, subj) ||
            !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
            !X509_set_pubkey(x, ca->leaf_key) ||
            !X509_set1_notBefore(x, X509_get0_notBefore(ca->cert)) ||
            !X509_set1_notAfter(x, X509_get0_notAfter(ca->cert))) {
                r = ossl_err();
                goto out;
        }
        if ((r = random_serial(x)) < 0 ||
            (r = add_ext(ca->cert, x, NID_basic_constraints, "critical,CA:FALSE")) < 0 ||
            (r = add_ext(ca->cert, x, NID_key_usage, "critical,digitalSignature")) < 0 ||
            (r = add_ext(ca->cert, x, NID_ext_key_usage, "serverAuth")) < 0 ||
            (r = add_ext(ca->cert, x, NID_authority_key_identifier, "keyid:always")) < 0 ||
            (r = add_ext(ca->cert, x, NID_subject_alt_name, san)) < 0)
                goto out;
        if (X509_sign(x, ca->key, EVP_sha256()) <= 0) {
                r = ossl_err();
                goto out;
        }
        *ret = x;
        x = NULL;
        r = 0;
out:
        free(san);
        X509_NAME_free(subj);
        X509_free(x);
        return r;
}

static bool ca_has_host(const struct rf_tls_ca *ca, const char *name)
{
        for (size_t i = 0; i < ca->n_hosts; i++)
                if (strcasecmp(ca->hosts[i], name) == 0)
                        return true;
        return false;
}

/* The cached leaf for one of the CA's hosts (borrowed), issued on first use. */
static int leaf_get(struct rf_tls_ca *ca, const char *name, X509 **ret)
{
        if (strlen(name) > RF_TLS_HOST_MAX || !ca_has_host(ca, name))
                return -EPERM;
        for (size_t i = 0; i < ca->n_leaves; i++)
                if (strcasecmp(ca->leaves[i].name, name) == 0) {
                        *ret = ca->leaves[i].cert;
                        return 0;
                }
        if (ca->n_leaves >= RF_TLS_LEAF_CACHE_MAX)
                return -ENOSPC; /* cannot happen: one leaf per host at most */
        char lower[RF_TLS_HOST_MAX + 1];
        size_t i;
        for (i = 0; name[i]; i++)
                lower[i] = (char)tolower((unsigned char)name[i]);
        lower[i] = '\0';
        X509 *x = NULL;
        int r = issue_leaf(ca, lower, &x);
        if (r < 0)
                return r;
        memcpy(ca->leaves[ca->n_leaves].name, lower, i + 1);
        ca->leaves[ca->n_leaves++].cert = x;
        *ret = x;
        return 0;
}

static int tls_leaf_pem(struct rf_tls_ca *ca, const char *name, char **ret, size_t *len)
{
        err_dirty = true;
        X509 *x = NULL;
        ERR_clear_error();
        int r = leaf_get(ca, name, &x);
        return r < 0 ? r : x509_pem(x, ret, len);
}

#if RF_CONFIG_TEST_BUILD
static int tls_test_forge_leaf_pem(struct rf_tls_ca *ca, const char *name, char **ret, size_t *len)
{
        err_dirty = true;
        X509 *x = NULL;
        int r = issue_leaf(ca, name, &x);
        if (r < 0)
                return r;
        r = x509_pem(x, ret, len);
        X509_free(x);
        return r;
}
#endif

static int tls_trust_bundle(const struct rf_tls_trust *t, const struct rf_tls_ca *ca, char **ret,
                            size_t *len)
{
        err_dirty = true;
        char *ca_pem;
        size_t ca_len;
        int r = x509_pem(ca->cert, &ca_pem, &ca_len);
        if (r < 0)
                return r;
        r = trust_bundle_join(t->bundle_pem, t->bundle_len, ca_pem, ca_len, ret, len);
        free(ca_pem);
        return r;
}

/* ---- the CA's export and import (ca_export, ca_import) --------------------- */

#define EXPORT_MAGIC_LEN sizeof(RF_TLS_CA_EXPORT_MAGIC) - 1
#define P256_POINT_LEN   65
#define EXPORT_LEAF_PUB  (RF_TLS_CA_EXPORT_LEAF_KEY + RF_TLS_CA_KEY_LEN)
#define EXPORT_CERT      (EXPORT_LEAF_PUB + P256_POINT_LEN)

_Static_assert(EXPORT_MAGIC_LEN == RF_TLS_CA_EXPORT_CA_KEY, "the CA key follows the magic");
_Static_assert(RF_TLS_CA_EXPORT_CA_KEY + RF_TLS_CA_KEY_LEN == RF_TLS_CA_EXPORT_LEAF_KEY,
               "the leaf key follows the CA key");

/* OpenSSL's OSSL_PARAM integers are native-endian; the export is big-endian. */
static void native_be(unsigned char *out, const unsigned char *in, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        for (size_t i = 0; i < n; i++)
                out[i] = in[n - 1 - i];
#else
        memmove(out, in, n);
#endif
}

/* A P-256 key's private scalar, big-endian, into out[RF_TLS_CA_KEY_LEN]:
 * OpenSSL writes it into a buffer on our stack (padded to the group's
 * size), which is reversed into out and wiped. 0 or -EIO. */
static int p256_priv_out(const EVP_PKEY *key, unsigned char *out)
{
        unsigned char native[RF_TLS_CA_KEY_LEN] = {0};
        OSSL_PARAM p[] = {OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, native, sizeof native),
                          OSSL_PARAM_construct_end()};
        int r = EVP_PKEY_get_params(key, p) == 1 && OSSL_PARAM_modified(p) ? 0 : -EIO;
        if (r == 0)
                native_be(out, native, sizeof native);
        OPENSSL_cleanse(native, sizeof native);
        return r;
}

/* A P-256 key from its big-endian private scalar and its public point (65
 * bytes, uncompressed), checked to be one key pair. NULL if it is not one
 * (or OpenSSL fails). The scalar passes through one buffer on our stack
 * (native-endian, wiped); OpenSSL's import frees its own copy clearing it. */
static EVP_PKEY *p256_key_in(const unsigned char *priv, const unsigned char *pub)
{
        unsigned char native[RF_TLS_CA_KEY_LEN];
        char group[] = "prime256v1";
        EVP_PKEY *key = NULL;
        native_be(native, priv, sizeof native);
        OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
                          OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)pub,
                                                            P256_POINT_LEN),
                          OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, native, sizeof native),
                          OSSL_PARAM_construct_end()};
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        if (ctx && EVP_PKEY_fromdata_init(ctx) == 1)
                (void)EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, p);
        EVP_PKEY_CTX_free(ctx);
        OPENSSL_cleanse(native, sizeof native);
        if (!key)
                return NULL;
        /* the private half must be the public half's (priv * G == pub) */
        EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
        bool pair = chk && EVP_PKEY_pairwise_check(chk) == 1;
        EVP_PKEY_CTX_free(chk);
        if (!pair) {
                EVP_PKEY_free(key);
                return NULL;
        }
        return key;
}

/* The certificate's public point (borrowed from x), 65 bytes, or NULL. */
static const unsigned char *cert_point(X509 *x)
{
        const unsigned char *pk = NULL;
        int pklen = 0;
        if (!X509_PUBKEY_get0_param(NULL, &pk, &pklen, NULL, X509_get_X509_PUBKEY(x)) ||
            pklen != P256_POINT_LEN || pk[0] != 0x04)
                return NULL;
        return pk;
}

static int tls_ca_export(const struct rf_tls_ca *ca, unsigned char *buf, size_t size, size_t *len)
{
        err_dirty = true;
        ERR_clear_error();
        int cert_len = i2d_X509(ca->cert, NULL);
        if (cert_len <= 0)
                return ossl_err();
        size_t need = EXPORT_CERT + 4 + (size_t)cert_len + 1;
        for (size_t i = 0; i < ca->n_hosts; i++)
                need += 1 + strlen(ca->hosts[i]);
        *len = need;
        if (need > RF_TLS_CA_EXPORT_MAX)
                return -EFBIG; /* cannot happen: RF_TLS_MAX_HOSTS names of RF_TLS_HOST_MAX */
        if (!buf || size < need)
                return -ENOBUFS;

        unsigned char pt[P256_POINT_LEN];
        size_t ptlen = 0;
        if (EVP_PKEY_get_octet_string_param(ca->leaf_key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt,
                                            sizeof pt, &ptlen) != 1 ||
            ptlen != sizeof pt)
                return ossl_err();
        unsigned char *p = buf;
        memcpy(p, RF_TLS_CA_EXPORT_MAGIC, EXPORT_MAGIC_LEN);
        if (p256_priv_out(ca->key, p + RF_TLS_CA_EXPORT_CA_KEY) < 0 ||
            p256_priv_out(ca->leaf_key, p + RF_TLS_CA_EXPORT_LEAF_KEY) < 0) {
                OPENSSL_cleanse(buf, need);
                return -EIO;
        }
        memcpy(p + EXPORT_LEAF_PUB, pt, sizeof pt);
        p += EXPORT_CERT;
        *p++ = (unsigned char)((unsigned)cert_len >> 24);
        *p++ = (unsigned char)((unsigned)cert_len >> 16);
        *p++ = (unsigned char)((unsigned)cert_len >> 8);
        *p++ = (unsigned char)cert_len;
        unsigned char *q = p;
        if (i2d_X509(ca->cert, &q) != cert_len) {
                OPENSSL_cleanse(buf, need);
                return ossl_err();
        }
        p = q;
        *p++ = (unsigned char)ca->n_hosts;
        for (size_t i = 0; i < ca->n_hosts; i++) {
                size_t l = strlen(ca->hosts[i]);
                *p++ = (unsigned char)l;
                p = mempcpy(p, ca->hosts[i], l);
        }
        return 0;
}

static int tls_ca_import(const unsigned char *buf, size_t len, struct rf_tls_ca **ret)
{
        err_dirty = true;
        if (!buf || len < EXPORT_CERT + 4 || len > RF_TLS_CA_EXPORT_MAX ||
            memcmp(buf, RF_TLS_CA_EXPORT_MAGIC, EXPORT_MAGIC_LEN) != 0)
                return -EBADMSG;
        size_t off = EXPORT_CERT;
        size_t cert_len = (size_t)buf[off] << 24 | (size_t)buf[off + 1] << 16 |
                          (size_t)buf[off + 2] << 8 | buf[off + 3];
        off += 4;
        if (cert_len == 0 || cert_len > len - off)
                return -EBADMSG;

        ERR_clear_error();
        int r = -ENOMEM;
        struct rf_tls_ca *ca = calloc(1, sizeof *ca);
        if (!ca)
                return -ENOMEM;
        const unsigned char *q = buf + off;
        ca->cert = d2i_X509(NULL, &q, (long)cert_len);
        if (!ca->cert || q != buf + off + cert_len) {
                r = -EBADMSG;
                goto fail;
        }
        off += cert_len;
        size_t n = off < len ? buf[off++] : 0;
        r = -EBADMSG;
        if (n == 0 || n > RF_TLS_MAX_HOSTS)
                goto fail;
        if (!(ca->hosts = calloc(n, sizeof *ca->hosts))) {
                r = -ENOMEM;
                goto fail;
        }
        for (; ca->n_hosts < n; ca->n_hosts++) {
                size_t l = off < len ? buf[off++] : 0;
                if (l == 0 || l > len - off)
                        goto fail;
                if (!(ca->hosts[ca->n_hosts] = strndup((const char *)buf + off, l))) {
                        r = -ENOMEM;
                        goto fail;
                }
                off += l;
                if (strlen(ca->hosts[ca->n_hosts]) != l ||
                    !trust_host_valid(ca->hosts[ca->n_hosts])) {
                        ca->n_hosts++; /* freed with the others */
                        goto fail;
                }
        }
        if (off != len)
                goto fail;
        const unsigned char *capub = cert_point(ca->cert);
        if (!capub)
                goto fail;
        ca->key = p256_key_in(buf + RF_TLS_CA_EXPORT_CA_KEY, capub);
        ca->leaf_key = p256_key_in(buf + RF_TLS_CA_EXPORT_LEAF_KEY, buf + EXPORT_LEAF_PUB);
        if (!ca->key || !ca->leaf_key)
                goto fail;
        *ret = ca;
        return 0;
fail:
        tls_ca_free(ca);
        return r;
}

/* ---- the JVM's PKCS#12 trust store (trustfmt.c lays it out) ------------- */

_Static_assert(TRUST_P12_SALT_LEN == PKCS12_SALT_LEN && TRUST_P12_ITER == PKCS12_DEFAULT_ITER,
               "the store's MAC parameters are OpenSSL's defaults");

/* trustfmt's MAC: the PKCS#12 KDF and HMAC-SHA256, OpenSSL's. */
static int ossl_p12_mac(const char *password, const unsigned char *salt, size_t salt_len,
                        unsigned iter, const unsigned char *data, size_t len,
                        unsigned char mac[TRUST_P12_MAC_LEN], void *ctx)
{
        unsigned char key[TRUST_P12_MAC_LEN];
        unsigned int mac_len = 0;
        int ok = PKCS12_key_gen_utf8_ex(password, (int)strlen(password), (unsigned char *)salt,
                                        (int)salt_len, PKCS12_MAC_ID, (int)iter, (int)sizeof key,
                                        key, EVP_sha256(), NULL, NULL) == 1 &&
                 HMAC(EVP_sha256(), key, (int)sizeof key, data, len, mac, &mac_len) &&
                 mac_len == TRUST_P12_MAC_LEN;
        OPENSSL_cleanse(key, sizeof key);
        return ok ? 0 : ossl_err();
}

static int tls_pkcs12(const struct rf_tls_ca *ca, const struct rf_tls_trust *t,
                      const char *password, unsigned char **ret, size_t *len)
{
        err_dirty = true;
        unsigned char *ca_der = NULL, salt[TRUST_P12_SALT_LEN];
        if (!ca || !password || !ret || !len)
                return -EINVAL;
        ERR_clear_error();
        int ca_len = i2d_X509(ca->cert, &ca_der);
        if (ca_len <= 0)
                return ossl_err();
        int r = RAND_bytes(salt, sizeof salt) == 1 ? 0 : ossl_err();
        if (r == 0)
                r = trust_p12(ca_der, (size_t)ca_len, t ? &t->host : NULL, password, salt,
                              ossl_p12_mac, NULL, ret, len);
        OPENSSL_free(ca_der);
        return r;
}

/* ---- sessions ------------------------------------------------------------ */

static void tls_conn_free(struct rf_tls_conn *c)
{
        err_dirty = true;
        if (!c)
                return;
        SSL_free(c->ssl);
        free(c);
}

/* A session on fd; when pre_len > 0 (server side only) it first reads a
 * copy of pre[0..pre_len) through the prefix BIO, else it sits on fd alone
 * (SSL_set_fd). */
static int conn_new(SSL_CTX *ctx, int fd, const char *name, bool server, const void *pre,
                    size_t pre_len, struct rf_tls_conn **ret)
{
        if (fd < 0 || !name || strlen(name) > RF_TLS_HOST_MAX)
                return -EINVAL;
        struct rf_tls_conn *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->server = server;
        c->want = POLLIN;
        strcpy(c->expected, name);
        int r;
        BIO *rbio = NULL, *wbio = NULL;
        c->ssl = SSL_new(ctx);
        if (!c->ssl || !SSL_set_app_data(c->ssl, c))
                goto ossl_fail;
        /* read ahead: one read(2) brings several records (a bulk transfer
         * otherwise costs two reads per 16 KiB record); what it buffers is
         * reported by pending() */
        SSL_set_read_ahead(c->ssl, 1);
        SSL_set_default_read_buffer_len(c->ssl, 64 * 1024);
        if (pre_len == 0) {
                if (!SSL_set_fd(c->ssl, fd))
                        goto ossl_fail;
        } else {
                r = prefix_bio_new(fd, pre, pre_len, &rbio);
                if (r < 0)
                        goto fail;
                wbio = BIO_new_socket(fd, BIO_NOCLOSE);
                if (!wbio)
                        goto ossl_fail;
                SSL_set_bio(c->ssl, rbio, wbio); /* takes both */
        }
        *ret = c;
        return 0;
ossl_fail:
        r = ossl_err();
fail:
        BIO_free(rbio);
        tls_conn_free(c);
        return r;
}

static int server_with(struct rf_tls_ca *ca, int fd, const char *name, X509 *leaf, const void *pre,
                       size_t pre_len, struct rf_tls_conn **ret)
{
        struct rf_tls_conn *c;
        int r = ca_server_ctx(ca);
        if (r < 0)
                return r;
        r = conn_new(ca->server, fd, name, true, pre, pre_len, &c);
        if (r < 0)
                return r;
        if (SSL_use_certificate(c->ssl, leaf) != 1 ||
            SSL_use_PrivateKey(c->ssl, ca->leaf_key) != 1) {
                r = ossl_err();
                tls_conn_free(c);
                return r;
        }
        SSL_set_accept_state(c->ssl);
        *ret = c;
        return 0;
}

static int tls_server_new(struct rf_tls_ca *ca, int fd, const char *name, const void *pre,
                          size_t pre_len, struct rf_tls_conn **ret)
{
        err_dirty = true;
        X509 *leaf = NULL;
        ERR_clear_error();
        if (!name || pre_len > PREFIX_MAX || (!pre && pre_len > 0))
                return -EINVAL;
        int r = leaf_get(ca, name, &leaf);
        return r < 0 ? r : server_with(ca, fd, name, leaf, pre, pre_len, ret);
}

#if RF_CONFIG_TEST_BUILD
static int tls_test_server_new_forged(struct rf_tls_ca *ca, int fd, const char *name,
                                      struct rf_tls_conn **ret)
{
        err_dirty = true;
        X509 *x = NULL;
        int r = issue_leaf(ca, name, &x);
        if (r < 0)
                return r;
        r = server_with(ca, fd, name, x, NULL, 0, ret); /* SSL_use_certificate took a reference */
        X509_free(x);
        return r;
}
#endif

static int tls_client_new(struct rf_tls_trust *t, int fd, const char *host,
                          struct rf_tls_conn **ret)
{
        err_dirty = true;
        struct rf_tls_conn *c;
        char lower[RF_TLS_HOST_MAX + 1];
        size_t i;
        ERR_clear_error();
        if (!host || strlen(host) > RF_TLS_HOST_MAX)
                return -EINVAL;
        for (i = 0; host[i]; i++)
                lower[i] = (char)tolower((unsigned char)host[i]);
        lower[i] = '\0';
        /* a DNS name, as the injection hosts are (no IP literal: the name
         * check below is for names) */
        if (!trust_host_valid(lower))
                return -EINVAL;
        host = lower;
        int r = trust_ready(t);
        if (r == -EBADMSG) {
                /* a certificate of the files did not parse: the caller
                 * gets a session that only says so (tlsterm.h) */
                c = calloc(1, sizeof *c);
                if (!c)
                        return -ENOMEM;
                c->want = POLLIN;
                snprintf(c->expected, sizeof c->expected, "%s", host);
                snprintf(c->reason, sizeof c->reason, "%s", t->why);
                *ret = c;
                return -EBADMSG;
        }
        if (r < 0)
                return r;
        r = conn_new(t->ctx, fd, host, false, NULL, 0, &c);
        if (r < 0)
                return r;
        if (!SSL_set_tlsext_host_name(c->ssl, host) || !SSL_set1_host(c->ssl, host)) {
                r = ossl_err();
                tls_conn_free(c);
                return r;
        }
        SSL_set_hostflags(c->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        SSL_set_connect_state(c->ssl);
        *ret = c;
        return 0;
}

static const char *verify_class(long v)
{
        switch (v) {
        case X509_V_ERR_CERT_HAS_EXPIRED:
        case X509_V_ERR_CRL_HAS_EXPIRED:
                return "certificate expired";
        case X509_V_ERR_CERT_NOT_YET_VALID:
                return "certificate not yet valid";
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
                return "self-signed certificate";
        case X509_V_ERR_HOSTNAME_MISMATCH:
                return "hostname mismatch";
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
        case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
        case X509_V_ERR_CERT_UNTRUSTED:
        case X509_V_ERR_CERT_REJECTED:
                return "untrusted certificate";
        default:
                return "certificate rejected";
        }
}

/* Map an SSL_get_error() outcome to the contract's results. */
static int conn_fail(struct rf_tls_conn *c, int ret, const char *what)
{
        err_dirty = true;
        int e = SSL_get_error(c->ssl, ret);
        unsigned long le;

        switch (e) {
        case SSL_ERROR_WANT_READ:
                c->want = POLLIN;
                return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
                c->want = POLLOUT;
                return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
                return 0;
        case SSL_ERROR_SYSCALL:
                ERR_clear_error();
                if (!c->reason[0])
                        snprintf(c->reason, sizeof c->reason, "%s: connection closed by peer",
                                 what);
                return errno == EPIPE ? -EPIPE : -ECONNRESET;
        default:
                break;
        }
        if (!c->server && SSL_get_verify_result(c->ssl) != X509_V_OK) {
                long v = SSL_get_verify_result(c->ssl);
                snprintf(c->reason, sizeof c->reason, "%s (%s)", verify_class(v),
                         X509_verify_cert_error_string(v));
                ERR_clear_error();
                return -EKEYREJECTED;
        }
        le = ERR_peek_last_error();
        if (ERR_GET_REASON(le) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
                ERR_clear_error();
                snprintf(c->reason, sizeof c->reason, "%s: connection closed without close_notify",
                         what);
                return -ECONNRESET;
        }
        if (!c->reason[0]) {
                const char *rs = ossl_reason(le);
                snprintf(c->reason, sizeof c->reason, "%s: %s", what, rs ? rs : "TLS error");
        }
        ERR_clear_error();
        return -EPROTO;
}

static int tls_handshake(struct rf_tls_conn *c)
{
        err_dirty = true;
        if (!c->ssl)
                return -EPROTO; /* a failed client_new's reason carrier */
        ERR_clear_error();
        int r = SSL_do_handshake(c->ssl);
        if (r == 1) {
                if (!c->server) {
                        const unsigned char *p;
                        unsigned int n;
                        SSL_get0_alpn_selected(c->ssl, &p, &n);
                        if (n && (n != 8 || memcmp(p, "http/1.1", 8) != 0)) {
                                snprintf(c->reason, sizeof c->reason,
                                         "upstream selected a protocol other than http/1.1");
                                return -EPROTO;
                        }
                }
                return 0;
        }
        r = conn_fail(c, r, "handshake");
        return r == 0 ? -ECONNRESET : r;
}

static ssize_t tls_read(struct rf_tls_conn *c, void *buf, size_t len)
{
        size_t n = 0;
        if (!c->ssl)
                return -EPROTO;
        err_fresh();
        if (SSL_read_ex(c->ssl, buf, len, &n) == 1) {
                err_check_clean("read");
                return (ssize_t)n;
        }
        return conn_fail(c, 0, "read");
}

static ssize_t tls_write(struct rf_tls_conn *c, const void *buf, size_t len)
{
        size_t n = 0;
        if (!c->ssl)
                return -EPROTO;
        if (len == 0)
                return 0;
        err_fresh();
        if (SSL_write_ex(c->ssl, buf, len, &n) == 1) {
                err_check_clean("write");
                return (ssize_t)n;
        }
        int r = conn_fail(c, 0, "write");
        return r == 0 ? -EPIPE : r;
}

static size_t tls_pending(const struct rf_tls_conn *c)
{
        if (!c->ssl)
                return 0;
        int n = SSL_pending(c->ssl);
        /* read ahead: records read from the socket but not yet decrypted
         * raise no event on it either */
        return n > 0 ? (size_t)n : SSL_has_pending(c->ssl) ? 1 : 0;
}

static int tls_shutdown(struct rf_tls_conn *c)
{
        err_dirty = true;
        if (!c->ssl)
                return -EPROTO;
        ERR_clear_error();
        int r = SSL_shutdown(c->ssl);
        if (r >= 0)
                return 0; /* ours is sent; the peer's is not waited for */
        r = conn_fail(c, r, "shutdown");
        return r == 0 ? 0 : r;
}

static short tls_want(const struct rf_tls_conn *c)
{
        return c->want;
}

static const char *tls_reason(const struct rf_tls_conn *c)
{
        return c->reason;
}

static const char *tls_version(const struct rf_tls_conn *c)
{
        return c->ssl ? SSL_get_version(c->ssl) : "";
}

static const char *tls_sni(const struct rf_tls_conn *c)
{
        return c->ssl ? SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name) : NULL;
}

EXPORT const struct rf_tls_vtable rf_tls_vtable_v3 = {
        .abi_version = RF_TLS_ABI_VERSION,
        .size = sizeof(struct rf_tls_vtable),
        .init = tls_init,
        .trust_load = tls_trust_load,
        .trust_free = tls_trust_free,
        .ca_new = tls_ca_new,
        .ca_free = tls_ca_free,
        .ca_pem = tls_ca_pem,
        .leaf_pem = tls_leaf_pem,
        .trust_bundle = tls_trust_bundle,
        .pkcs12 = tls_pkcs12,
        .server_new = tls_server_new,
        .client_new = tls_client_new,
        .handshake = tls_handshake,
        .read = tls_read,
        .write = tls_write,
        .pending = tls_pending,
        .shutdown = tls_shutdown,
        .want = tls_want,
        .reason = tls_reason,
        .version = tls_version,
        .sni = tls_sni,
        .conn_free = tls_conn_free,
#if RF_CONFIG_TEST_BUILD
        .test_forge_leaf_pem = tls_test_forge_leaf_pem,
        .test_server_new_forged = tls_test_server_new_forged,
#endif
        .ca_export = tls_ca_export,
        .ca_import = tls_ca_import,
};
