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
 *     host. Keys exist only in this process's memory; EVP_PKEY_free clears
 *     the private scalar. The CA's critical nameConstraints permits only the
 *     run's injection hosts and excludes all IP addresses: defence in depth
 *     (the protection is that the key never leaves the egress process).
 *   - One leaf key per run, not per name: a leaf key is exactly as exposed as
 *     the CA key that sits beside it in the same memory, so per-name keys
 *     would buy no isolation; one key makes issuing a leaf a single
 *     signature. Leaves are issued only for the CA's own hosts.
 *   - Sessions sit directly on the (non-blocking) socket (SSL_set_fd): the
 *     egress process is a single-threaded poll loop over fds, and a memory
 *     BIO pair would only add a copy. Every call clears OpenSSL's error queue
 *     first, so one session's failure never leaks into another's.
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
 *   - Upstream verification uses an X509_STORE built at trust_load() from
 *     the host's bundle (and --upstream-ca), before the lockdown: the egress
 *     process cannot open files.
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
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls/tlsterm.h"

#define EXPORT __attribute__((visibility("default")))

/* 10 years: a run lives far less; anything longer is a caller's bug. */
#define CA_LIFETIME_MAX ((uint64_t)10 * 366 * 24 * 3600)
#define CA_BACKDATE_S   60
/* OpenSSL's security level 2 (112-bit keys, no SHA-1 signatures): Debian's
 * openssl.cnf default, set here because no config file is read. */
#define SECURITY_LEVEL 2
#define ALPN_HTTP11    "\x08http/1.1"
/* Java's "trusted key usage" bag attribute (Oracle arc): a certificate bag
 * carrying it is a trustedCertEntry for keytool and KeyStore. */
#define JAVA_TRUSTED_KEY_USAGE_OID "2.16.840.1.113894.746875.1.1"
#define P12_ALIAS                  "ringfence-run-ca"
#define P12_HOST_ALIAS             "host-ca-%zu"
/* At most this many bytes already read from a server session's socket
 * (tlsterm.h: 64 KiB; a ClientHello is at most 16 KiB + 5 in practice). */
#define PREFIX_MAX (64u << 10)

struct rf_tls_trust {
        X509_STORE *store; /* owned: host bundle + extra CA */
        SSL_CTX *ctx;      /* owned: client context using store */
        char *bundle_pem;  /* owned: the host bundle's text, as read */
        size_t bundle_len;
        STACK_OF(X509) * host_certs; /* owned: the host bundle's certificates, in
                                       file order (not the extra CA): pkcs12() */
};

struct leaf {
        char name[RF_TLS_HOST_MAX + 1];
        X509 *cert; /* owned */
};

struct rf_tls_ca {
        EVP_PKEY *key;      /* owned: CA key, never exported */
        EVP_PKEY *leaf_key; /* owned: the run's leaf key */
        X509 *cert;         /* owned */
        SSL_CTX *server;    /* owned: server context (no cert: set per session) */
        char **hosts;       /* owned, n_hosts lowercase names */
        size_t n_hosts;
        struct leaf leaves[RF_TLS_LEAF_CACHE_MAX];
        size_t n_leaves;
};

struct rf_tls_conn {
        SSL *ssl; /* owned */
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

static int ossl_err(void)
{
        unsigned long e = ERR_peek_last_error();
        ERR_clear_error();
        return ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE ? -ENOMEM : -EIO;
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

/* A host name as the CA accepts it: LDH labels, lowercase, no IP literal. */
static bool host_valid(const char *h)
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

static int tls_init(void)
{
        if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS |
                                     OPENSSL_INIT_LOAD_CRYPTO_STRINGS,
                             NULL) != 1)
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
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
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

/* Add every certificate of a PEM text to store (and, when keep is not NULL,
 * a reference to each to keep, in order); returns how many, or -errno. */
static int store_add_pem(X509_STORE *store, const char *pem, size_t len, STACK_OF(X509) * keep)
{
        BIO *b = BIO_new_mem_buf(pem, (int)len);
        if (!b)
                return -ENOMEM;
        STACK_OF(X509_INFO) *infos = PEM_X509_INFO_read_bio(b, NULL, NULL, NULL);
        BIO_free(b);
        if (!infos) {
                ERR_clear_error();
                return -EBADMSG;
        }
        int n = 0, r = 0;
        for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
                X509_INFO *xi = sk_X509_INFO_value(infos, i);
                if (!xi->x509)
                        continue;
                if (!X509_STORE_add_cert(store, xi->x509)) {
                        r = ossl_err();
                        break;
                }
                if (keep) {
                        if (!sk_X509_push(keep, xi->x509)) {
                                r = -ENOMEM;
                                break;
                        }
                        xi->x509 = NULL; /* the reference moved to keep */
                }
                n++;
        }
        sk_X509_INFO_pop_free(infos, X509_INFO_free);
        if (r < 0)
                return r;
        return n > 0 ? n : -EBADMSG;
}

static void tls_trust_free(struct rf_tls_trust *t)
{
        if (!t)
                return;
        SSL_CTX_free(t->ctx);
        X509_STORE_free(t->store);
        sk_X509_pop_free(t->host_certs, X509_free);
        free(t->bundle_pem);
        free(t);
}

static int tls_trust_load(const char *bundle_path, const char *extra_ca_path,
                          struct rf_tls_trust **ret)
{
        int r;
        struct rf_tls_trust *t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        r = read_file(bundle_path, &t->bundle_pem, &t->bundle_len);
        if (r < 0)
                goto fail;
        r = -ENOMEM;
        t->store = X509_STORE_new();
        t->host_certs = sk_X509_new_null();
        if (!t->store || !t->host_certs)
                goto fail;
        r = store_add_pem(t->store, t->bundle_pem, t->bundle_len, t->host_certs);
        if (r < 0)
                goto fail;
        if (extra_ca_path) {
                char *extra = NULL;
                size_t elen = 0;
                r = read_file(extra_ca_path, &extra, &elen);
                if (r < 0)
                        goto fail;
                r = store_add_pem(t->store, extra, elen, NULL);
                free(extra);
                if (r < 0)
                        goto fail;
        }
        /* Partial chains are not trusted: the chain must end at an anchor
         * from the files; the default purpose check (sslserver) applies. */
        t->ctx = SSL_CTX_new(TLS_client_method());
        if (t->ctx)
                SSL_CTX_set_security_level(t->ctx, SECURITY_LEVEL);
        if (!t->ctx || !SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION) ||
            SSL_CTX_set_alpn_protos(t->ctx, (const unsigned char *)ALPN_HTTP11,
                                    sizeof ALPN_HTTP11 - 1) != 0 ||
            !X509_STORE_up_ref(t->store)) {
                r = ossl_err();
                goto fail;
        }
        SSL_CTX_set_cert_store(t->ctx, t->store);
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                         SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                         SSL_MODE_RELEASE_BUFFERS);
        SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
        /* An upstream's HelloRequest is answered with no_renegotiation. */
        SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION);
        *ret = t;
        return 0;
fail:
        tls_trust_free(t);
        return r;
}

/* ---- the per-run CA ------------------------------------------------------ */

static void tls_ca_free(struct rf_tls_ca *ca)
{
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
        int r = -ENOMEM;
        if (!hosts || n_hosts == 0 || n_hosts > RF_TLS_MAX_HOSTS || lifetime_s == 0 ||
            lifetime_s > CA_LIFETIME_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n_hosts; i++)
                if (!hosts[i] || !host_valid(hosts[i]))
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
            !X509_set_issuer_name(x, name) || !X509_set_pubkey(x, ca->key) ||
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

        ca->server = SSL_CTX_new(TLS_server_method());
        if (ca->server)
                SSL_CTX_set_security_level(ca->server, SECURITY_LEVEL);
        if (!ca->server || !SSL_CTX_set_min_proto_version(ca->server, TLS1_2_VERSION)) {
                r = ossl_err();
                goto fail;
        }
        SSL_CTX_set_alpn_select_cb(ca->server, alpn_select, NULL);
        SSL_CTX_set_tlsext_servername_callback(ca->server, servername_check);
        SSL_CTX_set_mode(ca->server, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                             SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                             SSL_MODE_RELEASE_BUFFERS);
        /* No resumption: a run's sessions are short-lived and a ticket key
         * would be one more secret; every connection is a full handshake. */
        SSL_CTX_set_session_cache_mode(ca->server, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ca->server, SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                                SSL_OP_NO_RENEGOTIATION);
        SSL_CTX_set_num_tickets(ca->server, 0);
        *ret = ca;
        return 0;
fail:
        tls_ca_free(ca);
        return r;
}

static int tls_ca_pem(const struct rf_tls_ca *ca, char **ret, size_t *len)
{
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
        X509 *x = NULL;
        ERR_clear_error();
        int r = leaf_get(ca, name, &x);
        return r < 0 ? r : x509_pem(x, ret, len);
}

#if RF_CONFIG_TEST_BUILD
static int tls_test_forge_leaf_pem(struct rf_tls_ca *ca, const char *name, char **ret, size_t *len)
{
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
        static const char sep[] = "# ringfence: this run's CA (valid for this run only)\n";
        char *ca_pem;
        size_t ca_len;
        int r = x509_pem(ca->cert, &ca_pem, &ca_len);
        if (r < 0)
                return r;
        bool nl = t->bundle_len > 0 && t->bundle_pem[t->bundle_len - 1] != '\n';
        size_t n = t->bundle_len + nl + sizeof sep - 1 + ca_len;
        char *s = malloc(n + 1);
        if (!s) {
                free(ca_pem);
                return -ENOMEM;
        }
        char *p = mempcpy(s, t->bundle_pem, t->bundle_len);
        if (nl)
                *p++ = '\n';
        p = mempcpy(p, sep, sizeof sep - 1);
        p = mempcpy(p, ca_pem, ca_len);
        *p = '\0';
        free(ca_pem);
        *ret = s;
        *len = n;
        return 0;
}

/* Append a certificate bag for x: friendly name `alias` and Java's
 * trusted-key-usage attribute, a SET OF OID, here anyExtendedKeyUsage (len
 * -1: the data is an ASN1_OBJECT, copied). */
static int p12_push_cert(STACK_OF(PKCS12_SAFEBAG) * bags, X509 *x, const char *alias,
                         const ASN1_OBJECT *any_eku)
{
        PKCS12_SAFEBAG *bag = PKCS12_SAFEBAG_create_cert(x);
        if (!bag)
                return ossl_err();
        if (!PKCS12_add_friendlyname_asc(bag, alias, -1) ||
            !PKCS12_add1_attr_by_txt(bag, JAVA_TRUSTED_KEY_USAGE_OID, V_ASN1_OBJECT,
                                     (const unsigned char *)any_eku, -1) ||
            !sk_PKCS12_SAFEBAG_push(bags, bag)) {
                PKCS12_SAFEBAG_free(bag);
                return ossl_err();
        }
        return 0;
}

static int tls_pkcs12(const struct rf_tls_ca *ca, const struct rf_tls_trust *t,
                      const char *password, unsigned char **ret, size_t *len)
{
        int r = -ENOMEM;
        STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
        STACK_OF(PKCS7) *safes = NULL;
        PKCS7 *p7 = NULL;
        PKCS12 *p12 = NULL;
        const ASN1_OBJECT *any_eku = NULL;
        unsigned char *der = NULL;

        if (!ca || !password || !ret || !len)
                return -EINVAL;
        ERR_clear_error();
        any_eku = OBJ_nid2obj(NID_anyExtendedKeyUsage);
        bags = sk_PKCS12_SAFEBAG_new_null();
        if (!bags || !any_eku)
                goto out;
        r = p12_push_cert(bags, ca->cert, P12_ALIAS, any_eku);
        /* The host's roots, so the store can replace the JVM's cacerts; the
         * --upstream-ca file is for the egress process's own upstream
         * connections and is not handed to the run. */
        for (int i = 0; r >= 0 && t && i < sk_X509_num(t->host_certs); i++) {
                char alias[32];
                snprintf(alias, sizeof alias, P12_HOST_ALIAS, (size_t)i + 1);
                r = p12_push_cert(bags, sk_X509_value(t->host_certs, i), alias, any_eku);
        }
        if (r < 0)
                goto out;
        /* Certificates are public: an unencrypted safe, as keytool writes
         * for trusted entries without a password-protected store. */
        p7 = PKCS12_pack_p7data(bags);
        safes = sk_PKCS7_new_null();
        if (!p7 || !safes || !sk_PKCS7_push(safes, p7))
                goto err;
        p7 = NULL;
        p12 = PKCS12_add_safes(safes, 0);
        if (!p12)
                goto err;
        if (!PKCS12_set_mac(p12, password, -1, NULL, 0, 10000, EVP_sha256()))
                goto err;
        int n = i2d_PKCS12(p12, &der);
        if (n <= 0)
                goto err;
        r = -ENOMEM;
        *ret = malloc((size_t)n);
        if (!*ret)
                goto out;
        memcpy(*ret, der, (size_t)n);
        *len = (size_t)n;
        r = 0;
        goto out;
err:
        r = ossl_err();
out:
        OPENSSL_free(der);
        PKCS12_free(p12);
        sk_PKCS7_pop_free(safes, PKCS7_free);
        PKCS7_free(p7);
        sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
        return r;
}

/* ---- sessions ------------------------------------------------------------ */

static void tls_conn_free(struct rf_tls_conn *c)
{
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
        int r = conn_new(ca->server, fd, name, true, pre, pre_len, &c);
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
        if (!host_valid(lower))
                return -EINVAL;
        host = lower;
        int r = conn_new(t->ctx, fd, host, false, NULL, 0, &c);
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
                const char *rs = ERR_reason_error_string(le);
                snprintf(c->reason, sizeof c->reason, "%s: %s", what, rs ? rs : "TLS error");
        }
        ERR_clear_error();
        return -EPROTO;
}

static int tls_handshake(struct rf_tls_conn *c)
{
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
        ERR_clear_error();
        if (SSL_read_ex(c->ssl, buf, len, &n) == 1)
                return (ssize_t)n;
        return conn_fail(c, 0, "read");
}

static ssize_t tls_write(struct rf_tls_conn *c, const void *buf, size_t len)
{
        size_t n = 0;
        ERR_clear_error();
        if (len == 0)
                return 0;
        if (SSL_write_ex(c->ssl, buf, len, &n) == 1)
                return (ssize_t)n;
        int r = conn_fail(c, 0, "write");
        return r == 0 ? -EPIPE : r;
}

static size_t tls_pending(const struct rf_tls_conn *c)
{
        int n = SSL_pending(c->ssl);
        return n > 0 ? (size_t)n : 0;
}

static int tls_shutdown(struct rf_tls_conn *c)
{
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
        return SSL_get_version(c->ssl);
}

static const char *tls_sni(const struct rf_tls_conn *c)
{
        return SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
}

EXPORT const struct rf_tls_vtable rf_tls_vtable_v2 = {
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
};
