/*
 * test_tlsterm.c — the TLS-termination module (src/tls) and its loader.
 *
 * Loads build/ringfence-tls.so through the real loader, then checks with
 * OpenSSL directly (this test links libssl itself, independently of the
 * module): the per-run CA's properties (critical name constraints with the
 * run's hosts and every IP range excluded, P-256 key, validity window), that
 * a leaf for an allowed name verifies and one forged for another name under
 * the same CA is refused by OpenSSL's verifier because of the name
 * constraint, a full handshake between the module's server side and an
 * OpenSSL client that trusts only the run CA (data both ways; wrong SNI and
 * non-http/1.1 ALPN refused), with and without the ClientHello handed in
 * as already-read bytes (whole or in part; also under the seccomp
 * allowlist and with the real clients), renegotiation refused on both
 * sides (with controls that renegotiate), the module's client side against
 * test servers (trusted via the extra CA → ok; self-signed, expired, wrong
 * name, untrusted → refused with the reason), the run's trust bundle, the
 * PKCS12 store (run CA alone, and with every host root but not the extra
 * CA) checked bag by bag and as Java 17's keytool lists it, the CA's
 * export and import (the same certificate, keys and hosts; what is not an
 * export refused), and the loader's refusals. The CA, leaf, server and
 * real-client batteries run twice: on the module's ca_new, and on the CA the
 * TLS helper makes without OpenSSL (tls/runca.c, nettle) imported as an
 * egress process imports it; that CA's DER, signature, subject key id,
 * refusals, its PKCS#12 MAC (nettle's KDF and HMAC against OpenSSL's) and
 * the helper's trust files (trustfmt.c) are checked here too.
 *
 *   test_tlsterm --syscalls   runs only the post-lockdown operations after a
 *                             marker syscall (close(-77)), for strace.
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "shared/memfd.h"
#include "sandbox/plan.h"
#include "sandbox/trustfiles.h"
#include "shared/error.h"
#include "tap.h"
#include "tls/runca.h"
#include "tls/tls-load.h"
#include "tls/trustfmt.h"
#include "tls/trustmake.h"

static const struct rf_tls_vtable *vt;

/* A check whose failure is a known property of the host, reported as TAP
 * TODO (counted as skipped by tests/run.sh, visible in the output). */
static void todo(bool pass, const char *what, const char *why)
{
        printf("%sok %d - %s # TODO %s\n", pass ? "" : "not ", ++tap_state.run, what, why);
        fflush(stdout);
}

static void skip(const char *why)
{
        printf("ok %d # SKIP %s\n", ++tap_state.run, why);
        fflush(stdout);
}
static char tmpdir[] = "/tmp/rf-tlsterm-XXXXXX";

/* ---- helpers: OpenSSL objects of the test's own ------------------------- */

static X509 *pem_x509(const char *pem)
{
        BIO *b = BIO_new_mem_buf(pem, -1);
        X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        BIO_free(b);
        return x;
}

static void add_ext(X509 *issuer, X509 *x, int nid, const char *v)
{
        X509V3_CTX c;
        X509V3_set_ctx(&c, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &c, nid, v);
        X509_add_ext(x, e, -1);
        X509_EXTENSION_free(e);
}

/* A certificate for `cn` signed by (issuer, ikey), or self-signed when issuer
 * is NULL; validity [now+nb, now+na]. */
static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *ikey, bool ca,
                       long nb, long na)
{
        static long serial = 1000;
        X509 *x = X509_new();
        X509_set_version(x, X509_VERSION_3);
        ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
        X509_NAME *n = X509_NAME_new();
        X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
        X509_set_subject_name(x, n);
        X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
        X509_NAME_free(n);
        X509_set_pubkey(x, key);
        X509_gmtime_adj(X509_getm_notBefore(x), nb);
        X509_gmtime_adj(X509_getm_notAfter(x), na);
        if (ca) {
                add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
                add_ext(x, x, NID_key_usage, "critical,keyCertSign");
        } else {
                char san[300];
                snprintf(san, sizeof san, "DNS:%s", cn);
                add_ext(issuer ? issuer : x, x, NID_subject_alt_name, san);
                add_ext(issuer ? issuer : x, x, NID_ext_key_usage, "serverAuth");
        }
        X509_sign(x, issuer ? ikey : key, EVP_sha256());
        return x;
}

static char *write_tmp(const char *name, const void *data, size_t len)
{
        char *p;
        if (asprintf(&p, "%s/%s", tmpdir, name) < 0)
                abort();
        FILE *f = fopen(p, "we");
        fwrite(data, 1, len, f);
        fclose(f);
        return p;
}

static char *write_pem(const char *name, X509 *x)
{
        BIO *b = BIO_new(BIO_s_mem());
        PEM_write_bio_X509(b, x);
        char *d;
        long n = BIO_get_mem_data(b, &d);
        char *p = write_tmp(name, d, (size_t)n);
        BIO_free(b);
        return p;
}

/* x as a TRUSTED CERTIFICATE block (OpenSSL's trust settings appended). */
static char *write_pem_aux(const char *name, X509 *x)
{
        BIO *b = BIO_new(BIO_s_mem());
        PEM_write_bio_X509_AUX(b, x);
        char *d;
        long n = BIO_get_mem_data(b, &d);
        char *p = write_tmp(name, d, (size_t)n);
        BIO_free(b);
        return p;
}

static void nonblock_pair(int sv[2])
{
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
}

/* Drive the module's side (mod) and an OpenSSL peer (ssl) until both are
 * done or one fails. Returns the module's result; *peer gets SSL_do_handshake's. */
static int pump_handshake(struct rf_tls_conn *mod, SSL *ssl, int *peer)
{
        int m = -EAGAIN, p = -1;
        for (int i = 0; i < 200 && (m == -EAGAIN || p != 1); i++) {
                if (m == -EAGAIN)
                        m = vt->handshake(mod);
                if (p != 1) {
                        p = SSL_do_handshake(ssl);
                        if (p != 1) {
                                int e = SSL_get_error(ssl, p);
                                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                                        break;
                        }
                }
                if (m < 0 && m != -EAGAIN)
                        break;
        }
        /* let the module read an alert the peer sent */
        if (m == -EAGAIN)
                m = vt->handshake(mod);
        *peer = p;
        return m;
}

/* ---- the loader ------------------------------------------------------------ */

static void test_loader(void)
{
        char path[4096], again[4096];
        struct rf_tls_module m;

        is_int(rf_tls_module_path(path, sizeof path), 0, "module path resolves");
        is_str(path, RF_BUILD_ROOT "/ringfence-tls.so",
               "a binary inside the build tree loads the build tree's module");
        /* no environment variable redirects it */
        setenv("RF_TLS_MODULE", "/tmp/evil.so", 1);
        setenv("RINGFENCE_TLS_MODULE", "/tmp/evil.so", 1);
        setenv("LD_LIBRARY_PATH", tmpdir, 1);
        rf_tls_module_path(again, sizeof again);
        is_str(again, path, "environment variables do not change the module path");
        unsetenv("RF_TLS_MODULE");
        unsetenv("RINGFENCE_TLS_MODULE");
        unsetenv("LD_LIBRARY_PATH");

        /* a copy of the real module, then its mode changed */
        int in = open(path, O_RDONLY | O_CLOEXEC);
        char *copy;
        if (asprintf(&copy, "%s/ringfence-tls.so", tmpdir) < 0)
                abort();
        int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t)n) != n)
                        abort();
        close(in);
        close(out);

        chmod(copy, 0664);
        is_int(rf_tls_load_path(copy, &m), -EPERM, "a group-writable module is refused");
        ok(m.handle == NULL, "and nothing was mapped");
        chmod(copy, 0646);
        is_int(rf_tls_load_path(copy, &m), -EPERM, "a world-writable module is refused");
        chmod(copy, 0644);
        is_int(rf_tls_load_path(copy, &m), 0, "control: the same file mode 0644 loads");
        ok(m.vt && m.vt->abi_version == RF_TLS_ABI_VERSION, "its vtable has the ABI version");
        rf_tls_unload(&m);

        char *link;
        if (asprintf(&link, "%s/link.so", tmpdir) < 0)
                abort();
        if (symlink(copy, link) < 0)
                abort();
        is_int(rf_tls_load_path(link, &m), -ELOOP, "a symlink is not followed");
        is_int(rf_tls_load_path("ringfence-tls.so", &m), -EINVAL, "a relative path is refused");

        /* the supervisor's check of a module it does not load */
        char mpath[4096];
        int msrc = rf_tls_module_open(mpath, sizeof mpath);
        int snap = msrc < 0 ? msrc : rf_tls_snapshot(msrc, RF_TLS_MODULE_MAX, "ringfence-tls.so");
        if (msrc >= 0)
                close(msrc);
        ok(snap >= 0 && memfd_sealed_size(snap, RF_TLS_MODULE_MAX, NULL) == 0,
           "the module, opened and checked, snapshotted into a sealed memfd");
        is_int(rf_tls_module_version(snap), 0, "... which names this binary's vtable symbol");
        close(snap);
        int other = memfd_new("other-module");
        const char junk[] = "\x7f"
                            "ELF... rf_tls_vtable_v2";
        if (other < 0 || write(other, junk, sizeof junk) != (ssize_t)sizeof junk)
                abort();
        is_int(rf_tls_module_version(other), -EBADF, "an unsealed memfd is no snapshot (-EBADF)");
        memfd_seal(other);
        is_int(rf_tls_module_version(other), -EPROTO,
               "a module naming another version's symbol is refused (-EPROTO)");
        close(other);

        /* fd_copy_all: the kernel's copy between files, a buffer otherwise */
        int src = memfd_new("copy-src"), dst = memfd_new("copy-dst"), pp[2];
        char text[40000], back[40000];
        for (size_t i = 0; i < sizeof text; i++)
                text[i] = (char)('a' + i % 23);
        if (src < 0 || dst < 0 || pipe(pp) < 0 || write(src, text, sizeof text) != sizeof text ||
            write(dst, "hdr", 3) != 3)
                abort();
        is_int(fd_copy_all(src, 100, dst, 30000), 0, "fd_copy_all: 30000 bytes from offset 100");
        ok(pread(dst, back, 30003, 0) == 30003 && memcmp(back, "hdr", 3) == 0 &&
                   memcmp(back + 3, text + 100, 30000) == 0,
           "... appended after what was there, byte for byte");
        is_int(fd_copy_all(src, 39990, dst, 20), -EIO, "... a source that ends early: -EIO");
        fcntl(pp[1], F_SETPIPE_SZ, 65536);
        is_int(fd_copy_all(src, 7, pp[1], 20000), 0,
               "... into a pipe (no kernel copy between them: the buffer path)");
        ok(read(pp[0], back, sizeof back) == 20000 && memcmp(back, text + 7, 20000) == 0,
           "... the same bytes");
        close(src);
        close(dst);
        close(pp[0]);
        close(pp[1]);
        unlink(link);
        unlink(copy);
        free(link);
        free(copy);
}

/* ---- the CA ---------------------------------------------------------------- */

static const char *const hosts[] = {"api.example.test", "upload.example.test"};

static void test_ca(struct rf_tls_ca *ca, time_t t0)
{
        char *pem;
        size_t len;
        is_int(vt->ca_pem(ca, &pem, &len), 0, "CA PEM");
        X509 *x = pem_x509(pem);
        free(pem);
        ok(x != NULL, "CA PEM parses");

        EVP_PKEY *pk = X509_get0_pubkey(x);
        char group[64] = "";
        size_t gl;
        EVP_PKEY_get_group_name(pk, group, sizeof group, &gl);
        ok(EVP_PKEY_is_a(pk, "EC") && strcmp(group, "prime256v1") == 0, "CA key is EC P-256 (%s)",
           group);
        is_int(X509_verify(x, pk), 1, "CA is self-signed with its own key");
        /* the module writes the SubjectPublicKeyInfo itself: the same bytes
         * as OpenSSL's encoder writes for the key */
        unsigned char *spki = NULL, *enc = NULL;
        int spki_len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &spki);
        int enc_len = i2d_PUBKEY(pk, &enc);
        ok(spki_len > 0 && spki_len == enc_len && memcmp(spki, enc, (size_t)enc_len) == 0,
           "its SubjectPublicKeyInfo is OpenSSL's encoding of the key (%d bytes)", spki_len);
        OPENSSL_free(spki);
        OPENSSL_free(enc);

        int idx = X509_get_ext_by_NID(x, NID_basic_constraints, -1);
        ok(idx >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, idx)),
           "basicConstraints critical");
        ok(X509_check_ca(x) == 1, "CA:TRUE");
        idx = X509_get_ext_by_NID(x, NID_key_usage, -1);
        ok(idx >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, idx)) &&
                   (X509_get_key_usage(x) & KU_KEY_CERT_SIGN),
           "keyUsage keyCertSign, critical");

        idx = X509_get_ext_by_NID(x, NID_name_constraints, -1);
        ok(idx >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, idx)),
           "nameConstraints present and critical");
        NAME_CONSTRAINTS *nc = X509_get_ext_d2i(x, NID_name_constraints, NULL, NULL);
        bool perm = nc && sk_GENERAL_SUBTREE_num(nc->permittedSubtrees) == 2;
        for (int i = 0; perm && i < 2; i++) {
                GENERAL_SUBTREE *st = sk_GENERAL_SUBTREE_value(nc->permittedSubtrees, i);
                perm = st->base->type == GEN_DNS &&
                       strcmp((const char *)ASN1_STRING_get0_data(st->base->d.dNSName), hosts[i]) ==
                               0;
        }
        ok(perm, "permitted subtrees are exactly the run's hosts (dNSName)");
        bool v4 = false, v6 = false, other = false;
        for (int i = 0; nc && i < sk_GENERAL_SUBTREE_num(nc->excludedSubtrees); i++) {
                GENERAL_SUBTREE *st = sk_GENERAL_SUBTREE_value(nc->excludedSubtrees, i);
                if (st->base->type != GEN_IPADD) {
                        other = true;
                        continue;
                }
                const unsigned char *d = ASN1_STRING_get0_data(st->base->d.iPAddress);
                int l = ASN1_STRING_length(st->base->d.iPAddress);
                bool zero = true;
                for (int k = 0; k < l; k++)
                        zero &= d[k] == 0;
                v4 |= l == 8 && zero;
                v6 |= l == 32 && zero;
        }
        ok(v4 && v6 && !other, "excluded: 0.0.0.0/0 and ::/0, nothing else");
        NAME_CONSTRAINTS_free(nc);

        int day, sec;
        ASN1_TIME_diff(&day, &sec, NULL, X509_get0_notBefore(x));
        /* notBefore relative to now: one minute back (now read after ca_new) */
        long nb = day * 86400L + sec;
        ok(nb <= -60 + 1 && nb >= -60 - (long)(time(NULL) - t0) - 2,
           "notBefore one minute back (%ld s)", nb);
        ASN1_TIME_diff(&day, &sec, X509_get0_notBefore(x), X509_get0_notAfter(x));
        is_int(day * 86400L + sec, 3600 + 60, "notAfter = start + lifetime");
        const ASN1_INTEGER *serial = X509_get0_serialNumber(x);
        ok(ASN1_STRING_length(serial) >= 16, "serial is 128 random bits");
        X509_free(x);
}

static int verify_leaf(X509 *ca, X509 *leaf, const char *host)
{
        X509_STORE *st = X509_STORE_new();
        X509_STORE_add_cert(st, ca);
        X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        X509_STORE_CTX_init(ctx, st, leaf, NULL);
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
        X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
        int r = X509_verify_cert(ctx) == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
        X509_STORE_CTX_free(ctx);
        X509_STORE_free(st);
        return r;
}

static void test_leaves(struct rf_tls_ca *ca)
{
        char *pem, *leafpem;
        size_t len;
        vt->ca_pem(ca, &pem, &len);
        X509 *cax = pem_x509(pem);
        free(pem);

        is_int(vt->leaf_pem(ca, "api.example.test", &leafpem, &len), 0,
               "leaf for an injection host");
        X509 *leaf = pem_x509(leafpem);
        is_int(verify_leaf(cax, leaf, "api.example.test"), X509_V_OK,
               "it verifies against the run CA (OpenSSL verifier, host check)");
        EVP_PKEY *pk = X509_get0_pubkey(leaf);
        ok(EVP_PKEY_is_a(pk, "EC"), "leaf key is EC");
        ok(X509_get_extended_key_usage(leaf) & XKU_SSL_SERVER, "leaf EKU serverAuth");
        ok(ASN1_TIME_compare(X509_get0_notAfter(leaf), X509_get0_notAfter(cax)) <= 0 &&
                   ASN1_TIME_compare(X509_get0_notBefore(leaf), X509_get0_notBefore(cax)) >= 0,
           "leaf validity within the CA's");
        char *again;
        vt->leaf_pem(ca, "API.example.test", &again, &len);
        is_str(again, leafpem, "the leaf is cached (same name, any case)");
        free(again);
        free(leafpem);
        X509_free(leaf);

        is_int(vt->leaf_pem(ca, "evil.test", &pem, &len), -EPERM,
               "no leaf for a name outside the run's hosts");
        is_int(vt->leaf_pem(ca, "x.api.example.test", &pem, &len), -EPERM,
               "nor for a subdomain of one");

        if (!vt->test_forge_leaf_pem) {
                skip("forging a leaf needs a test build (-Dtest_build=true)");
                skip("forging a leaf needs a test build (-Dtest_build=true)");
        } else {
                is_int(vt->test_forge_leaf_pem(ca, "evil.test", &pem, &len), 0,
                       "test build: leaf forged for evil.test under the run CA");
                leaf = pem_x509(pem);
                free(pem);
                is_int(verify_leaf(cax, leaf, "evil.test"), X509_V_ERR_PERMITTED_VIOLATION,
                       "OpenSSL refuses it: permitted subtree violation (the name constraint)");
                X509_free(leaf);
                /* an IP-address SAN would be X509_V_ERR_EXCLUDED_VIOLATION;
                 * the module never issues one, so forge by name only */
        }
        X509_free(cax);
}

/* ---- the server side ----------------------------------------------------- */

static SSL_CTX *client_ctx_trusting(struct rf_tls_ca *ca)
{
        char *pem;
        size_t len;
        vt->ca_pem(ca, &pem, &len);
        X509 *x = pem_x509(pem);
        free(pem);
        SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), x);
        X509_free(x);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        return ctx;
}

/* How server_session hands the module the client's first bytes: not at all
 * (the module reads the socket), all the client sent before the server spoke
 * (its ClientHello, read off the socket as the egress process reads it to
 * judge the SNI), or only the first 7 bytes of it (the rest stays on the
 * socket). */
enum pre_mode { PRE_NONE, PRE_ALL, PRE_PART };
#define PRE_PART_LEN 7

/* The module's reason() for the last server_session. */
static char server_reason[RF_TLS_REASON_MAX];

/* A server session of the module for api.example.test with an OpenSSL client
 * (cctx, sending `sni` and `alpn`): the handshake's result; unless quiet,
 * data both ways and close_notify are checked too. */
static int server_session(struct rf_tls_ca *ca, SSL_CTX *cctx, const char *sni, const char *alpn,
                          size_t alpn_len, enum pre_mode pre, bool quiet)
{
        int sv[2], peer;
        struct rf_tls_conn *c;
        unsigned char first[16384 + 5];
        ssize_t first_len = 0;
        nonblock_pair(sv);
        SSL *cl = SSL_new(cctx);
        SSL_set_fd(cl, sv[1]);
        SSL_set_connect_state(cl);
        SSL_set_tlsext_host_name(cl, sni);
        SSL_set1_host(cl, "api.example.test");
        if (alpn)
                SSL_set_alpn_protos(cl, (const unsigned char *)alpn, (unsigned)alpn_len);
        if (pre != PRE_NONE) {
                /* the ClientHello goes out, then the client waits */
                (void)SSL_do_handshake(cl);
                first_len = read(sv[0], first, pre == PRE_ALL ? sizeof first : PRE_PART_LEN);
                if (first_len <= 0)
                        abort();
        }
        int r = vt->server_new(ca, sv[0], "api.example.test", first_len > 0 ? first : NULL,
                               (size_t)first_len, &c);
        if (r < 0) {
                SSL_free(cl);
                close(sv[0]);
                close(sv[1]);
                return r;
        }
        /* the session works on its own copy of the bytes */
        memset(first, 0xa5, sizeof first);
        r = pump_handshake(c, cl, &peer);
        if (r == 0 && peer == 1 && !quiet) {
                const unsigned char *p;
                unsigned n;
                SSL_get0_alpn_selected(cl, &p, &n);
                ok(n == 8 && memcmp(p, "http/1.1", 8) == 0, "ALPN http/1.1 selected");
                is_int(SSL_get_verify_result(cl), X509_V_OK,
                       "the client, trusting only the run CA, verified the leaf");
                is_str(vt->sni(c), "api.example.test", "server saw the SNI");
                ok(strcmp(vt->version(c), "TLSv1.3") == 0, "TLS 1.3 negotiated (%s)",
                   vt->version(c));

                /* data both ways */
                char buf[64] = "";
                is_int(SSL_write(cl, "GET / HTTP/1.1\r\n", 16), 16, "client writes");
                ssize_t k = -EAGAIN;
                for (int i = 0; i < 50 && k == -EAGAIN; i++)
                        k = vt->read(c, buf, sizeof buf);
                ok(k == 16 && memcmp(buf, "GET / HTTP/1.1\r\n", 16) == 0,
                   "module server read the client's bytes");
                is_int(vt->read(c, buf, sizeof buf), -EAGAIN, "then -EAGAIN, want POLLIN");
                is_int(vt->want(c), POLLIN, "want() is POLLIN");
                is_int(vt->write(c, "HTTP/1.1 200 OK\r\n", 17), 17, "module server writes");
                int got = SSL_read(cl, buf, sizeof buf);
                ok(got == 17 && memcmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0,
                   "client read the module's bytes");
                is_int(vt->shutdown(c), 0, "module sends close_notify");
                ok(SSL_read(cl, buf, sizeof buf) == 0 &&
                           SSL_get_error(cl, 0) == SSL_ERROR_ZERO_RETURN,
                   "client sees a clean close");
                SSL_shutdown(cl);
                k = -EAGAIN;
                for (int i = 0; i < 50 && k == -EAGAIN; i++)
                        k = vt->read(c, buf, sizeof buf);
                is_int(k, 0, "module read returns 0 at the client's close_notify");
        } else if (r == 0 && peer != 1) {
                r = -EPROTO;
        }
        snprintf(server_reason, sizeof server_reason, "%s", vt->reason(c));
        SSL_free(cl);
        vt->conn_free(c);
        close(sv[0]);
        close(sv[1]);
        return r;
}

static void test_server(struct rf_tls_ca *ca)
{
        SSL_CTX *cctx = client_ctx_trusting(ca);
        is_int(server_session(ca, cctx, "api.example.test", "\x02h2\x08http/1.1", 12, PRE_NONE,
                              false),
               0, "handshake: module server, OpenSSL client trusting only the run CA");
        is_int(server_session(ca, cctx, "evil.test", NULL, 0, PRE_NONE, true), -EPROTO,
               "a ClientHello naming another host is refused");
        is_int(server_session(ca, cctx, "api.example.test", "\x02h2", 3, PRE_NONE, true), -EPROTO,
               "a client offering only h2 is refused (ALPN http/1.1 only)");
        /* OpenSSL's wording, though init() loads no error strings: the
         * module loads them at the first failure */
        is_str(server_reason, "handshake: no application protocol", "with OpenSSL's reason");
        is_int(server_session(ca, cctx, "api.example.test", NULL, 0, PRE_NONE, true), 0,
               "control: a client without ALPN is served");

        /* the egress process has read the ClientHello (to judge the SNI)
         * and hands it in */
        is_int(server_session(ca, cctx, "api.example.test", "\x02h2\x08http/1.1", 12, PRE_ALL,
                              false),
               0,
               "prefix: the ClientHello already read off the socket, handed in: handshake, "
               "data, close_notify");
        is_int(server_session(ca, cctx, "api.example.test", NULL, 0, PRE_PART, true), 0,
               "prefix: only its first %d bytes handed in, the rest read from the socket",
               PRE_PART_LEN);
        is_int(server_session(ca, cctx, "evil.test", NULL, 0, PRE_ALL, true), -EPROTO,
               "prefix: a ClientHello naming another host is still refused");
        is_int(server_session(ca, cctx, "api.example.test", "\x02h2", 3, PRE_ALL, true), -EPROTO,
               "prefix: so is one offering only h2");

        int sv[2];
        struct rf_tls_conn *c;
        nonblock_pair(sv);
        is_int(vt->server_new(ca, sv[0], "evil.test", NULL, 0, &c), -EPERM,
               "no server session for a name outside the CA");
        unsigned char *big = calloc(1, 65537);
        is_int(vt->server_new(ca, sv[0], "api.example.test", big, 65537, &c), -EINVAL,
               "a prefix over 64 KiB is refused");
        is_int(vt->server_new(ca, sv[0], "api.example.test", NULL, 1, &c), -EINVAL,
               "a NULL prefix with a length is refused");
        is_int(vt->server_new(ca, sv[0], "api.example.test", big, 65536, &c), 0,
               "a prefix of exactly 64 KiB is taken");
        /* all zeros is no TLS record: the handshake fails on the copy alone,
         * before the (empty) socket is read */
        is_int(vt->handshake(c), -EPROTO, "and is read first (zeros: not TLS, -EPROTO)");
        vt->conn_free(c);
        free(big);
        /* a peer that sent its ClientHello and left, without close_notify:
         * the same truncation error as without a prefix */
        char reasons[2][RF_TLS_REASON_MAX];
        for (int pre = PRE_NONE; pre <= PRE_ALL; pre++) {
                SSL *cl = SSL_new(cctx);
                unsigned char first[16384 + 5];
                ssize_t n = 0;
                SSL_set_fd(cl, sv[1]);
                SSL_set_connect_state(cl);
                SSL_set_tlsext_host_name(cl, "api.example.test");
                (void)SSL_do_handshake(cl);
                if (pre == PRE_ALL && (n = read(sv[0], first, sizeof first)) <= 0)
                        abort();
                SSL_free(cl);
                shutdown(sv[1], SHUT_WR); /* EOF for the module; its writes still land */
                if (vt->server_new(ca, sv[0], "api.example.test", n ? first : NULL, (size_t)n, &c) <
                    0)
                        abort();
                int r;
                for (int i = 0; i < 10 && (r = vt->handshake(c)) == -EAGAIN; i++)
                        ;
                is_int(r, -ECONNRESET, "%s: a client gone after its ClientHello: -ECONNRESET (%s)",
                       pre == PRE_ALL ? "prefix" : "no prefix", vt->reason(c));
                snprintf(reasons[pre == PRE_ALL], sizeof reasons[0], "%s", vt->reason(c));
                vt->conn_free(c);
                close(sv[0]);
                close(sv[1]);
                nonblock_pair(sv);
        }
        is_str(reasons[1], reasons[0], "with the same reason (the prefix BIO reports EOF)");
        close(sv[0]);
        close(sv[1]);
        SSL_CTX_free(cctx);
}

/* `asker`, one end of a TLS 1.2 session of the test's own, asks for a
 * renegotiation; the other end is the module's session `mod` or, for the
 * controls, another OpenSSL endpoint `peer`. Both are driven (the other end
 * only reads: that is where a peer's handshake messages are processed).
 * Returns 1 when the renegotiation completed, 0 when the asker's session
 * failed instead (*why: its OpenSSL error), -1 if neither happened;
 * *mod_r gets the module's first read result other than -EAGAIN (after a
 * fatal alert OpenSSL reports later reads as a clean close: the first one
 * is what a caller acts on). */
static int renegotiate(SSL *asker, struct rf_tls_conn *mod, SSL *peer, unsigned long *why,
                       ssize_t *mod_r)
{
        char b[16];
        *why = 0;
        *mod_r = -EAGAIN;
        if (SSL_renegotiate(asker) != 1)
                return -1;
        for (int i = 0; i < 100; i++) {
                int r = SSL_do_handshake(asker);
                if (r == 1 && !SSL_renegotiate_pending(asker))
                        return 1;
                if (r == 1) /* a server's HelloRequest is out: read the answer */
                        r = SSL_read(asker, b, sizeof b);
                if (r <= 0) {
                        int e = SSL_get_error(asker, r);
                        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                                *why = ERR_peek_last_error();
                                ERR_clear_error();
                                break;
                        }
                }
                if (mod) {
                        if (*mod_r == -EAGAIN)
                                *mod_r = vt->read(mod, b, sizeof b);
                } else {
                        (void)SSL_read(peer, b, sizeof b);
                }
        }
        /* the module reads what the asker said last (its alert) */
        for (int i = 0; mod && i < 5 && *mod_r == -EAGAIN; i++)
                *mod_r = vt->read(mod, b, sizeof b);
        return *why ? 0 : -1;
}

static SSL *ssl_on(SSL_CTX *ctx, int fd, bool server)
{
        SSL *s = SSL_new(ctx);
        SSL_set_fd(s, fd);
        if (server)
                SSL_set_accept_state(s);
        else
                SSL_set_connect_state(s);
        return s;
}

/* OpenSSL-to-OpenSSL handshake over a socket pair. */
static bool pump_pair(SSL *a, SSL *b)
{
        int ra = 0, rb = 0;
        for (int i = 0; i < 100 && (ra != 1 || rb != 1); i++) {
                if (ra != 1)
                        ra = SSL_do_handshake(a);
                if (rb != 1)
                        rb = SSL_do_handshake(b);
        }
        return ra == 1 && rb == 1;
}

/* ---- export and import (the supervisor keeps the CA as bytes) ------------ */

static int import_bytes(const unsigned char *b, size_t len)
{
        struct rf_tls_ca *x = NULL;
        int r = vt->ca_import(b, len, &x);
        vt->ca_free(x);
        return r;
}

static void test_export(struct rf_tls_ca *ca)
{
        size_t len = 0, len2 = 0;
        is_int(vt->ca_export(ca, NULL, 0, &len), -ENOBUFS, "ca_export without a buffer: -ENOBUFS");
        ok(len > RF_TLS_CA_EXPORT_LEAF_KEY + RF_TLS_CA_KEY_LEN && len <= RF_TLS_CA_EXPORT_MAX,
           "... and the size it needs (%zu bytes)", len);
        unsigned char *b = calloc(1, len + 1), *bad = calloc(1, len + 1);
        is_int(vt->ca_export(ca, b, len - 1, &len2), -ENOBUFS, "a buffer one byte short: -ENOBUFS");
        is_int(vt->ca_export(ca, b, len + 1, &len2), 0, "ca_export into a large enough buffer");
        ok(len2 == len && memcmp(b, RF_TLS_CA_EXPORT_MAGIC, 8) == 0,
           "... writes the size it announced, magic first");

        struct rf_tls_ca *imp = NULL;
        is_int(vt->ca_import(b, len, &imp), 0, "ca_import of the export");
        char *pem, *pem2, *leafpem, *leafpem2;
        size_t n;
        vt->ca_pem(ca, &pem, &n);
        vt->ca_pem(imp, &pem2, &n);
        is_str(pem2, pem, "the imported CA has the same certificate");
        X509 *cax = pem_x509(pem);
        free(pem);
        free(pem2);
        is_int(vt->leaf_pem(imp, "upload.example.test", &leafpem, &n), 0,
               "the imported CA issues a leaf for one of its hosts");
        X509 *leaf = leafpem ? pem_x509(leafpem) : NULL;
        is_int(verify_leaf(cax, leaf, "upload.example.test"), X509_V_OK,
               "... which verifies under the ORIGINAL CA's certificate (same CA key)");
        vt->leaf_pem(ca, "upload.example.test", &leafpem2, &n);
        X509 *leaf2 = pem_x509(leafpem2);
        ok(leaf && leaf2 && EVP_PKEY_eq(X509_get0_pubkey(leaf), X509_get0_pubkey(leaf2)) == 1,
           "... with the same leaf key as the original's leaf");
        ok(strcmp(leafpem, leafpem2) != 0, "... a leaf of its own (the cache starts empty)");
        free(leafpem);
        free(leafpem2);
        X509_free(leaf);
        X509_free(leaf2);
        is_int(vt->leaf_pem(imp, "evil.test", &leafpem, &n), -EPERM,
               "the imported CA keeps the hosts: no leaf for another name");
        SSL_CTX *cctx = client_ctx_trusting(ca);
        is_int(server_session(imp, cctx, "api.example.test", NULL, 0, PRE_NONE, true), 0,
               "a client trusting the original CA completes a handshake with the imported one");
        SSL_CTX_free(cctx);
        size_t len3 = 0;
        unsigned char *again = calloc(1, len);
        is_int(vt->ca_export(imp, again, len, &len3), 0, "the imported CA exports again");
        ok(len3 == len && memcmp(again, b, len) == 0, "... the same bytes");
        free(again);
        vt->ca_free(imp);

        /* what is not an export */
        memcpy(bad, b, len);
        bad[0] ^= 1;
        is_int(import_bytes(bad, len), -EBADMSG, "import: a wrong magic is refused (-EBADMSG)");
        is_int(import_bytes(b, len - 1), -EBADMSG, "import: a byte short is refused");
        memcpy(bad, b, len);
        bad[len] = 'x';
        is_int(import_bytes(bad, len + 1), -EBADMSG, "import: a byte left over is refused");
        is_int(import_bytes(b, 20), -EBADMSG, "import: a stub is refused");
        memcpy(bad, b, len);
        bad[RF_TLS_CA_EXPORT_CA_KEY + 31] ^= 1;
        is_int(import_bytes(bad, len), -EBADMSG,
               "import: a CA key that is not the certificate's is refused");
        memcpy(bad, b, len);
        memcpy(bad + RF_TLS_CA_EXPORT_CA_KEY, b + RF_TLS_CA_EXPORT_LEAF_KEY, RF_TLS_CA_KEY_LEN);
        is_int(import_bytes(bad, len), -EBADMSG,
               "import: a valid P-256 key (the leaf's) as the CA key is refused");
        memcpy(bad, b, len);
        bad[RF_TLS_CA_EXPORT_LEAF_KEY + 31] ^= 1;
        is_int(import_bytes(bad, len), -EBADMSG,
               "import: a leaf key whose halves differ is refused");
        memcpy(bad, b, len);
        bad[len - 1] = 'X'; /* the last host's last letter, uppercase */
        is_int(import_bytes(bad, len), -EBADMSG, "import: a host ca_new would refuse is refused");
        memcpy(bad, b, len);
        bad[len - 1] = 't'; /* control: the same byte, as it was */
        is_int(import_bytes(bad, len), 0, "control: the same bytes as exported import");
        explicit_bzero(b, len + 1);
        explicit_bzero(bad, len + 1);
        free(b);
        free(bad);
        X509_free(cax);
}

/* Renegotiation is refused by the module's server side (a client asking for
 * one, TLS 1.2) and its client side (an upstream sending HelloRequest). The
 * controls show that the same test endpoints do renegotiate with a peer that
 * allows it, so the refusals are the module's. */
static void test_renegotiation(struct rf_tls_ca *ca, struct rf_tls_trust *t, X509 *ucert,
                               EVP_PKEY *ukey)
{
        int sv[2], peer;
        struct rf_tls_conn *c;
        unsigned long why;
        ssize_t mod_r;
        char b[8];

        SSL_CTX *cctx = client_ctx_trusting(ca);
        SSL_CTX_set_max_proto_version(cctx, TLS1_2_VERSION);
        SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL); /* the controls' self-made server */
        nonblock_pair(sv);
        if (vt->server_new(ca, sv[0], "api.example.test", NULL, 0, &c) < 0)
                abort();
        SSL *cl = ssl_on(cctx, sv[1], false);
        SSL_set_tlsext_host_name(cl, "api.example.test");
        int hr = pump_handshake(c, cl, &peer);
        ok(hr == 0 && peer == 1 && strcmp(vt->version(c), "TLSv1.2") == 0,
           "renegotiation: a TLS 1.2 session with the module's server side (%s)", vt->version(c));
        is_int(renegotiate(cl, c, NULL, &why, &mod_r), 0,
               "a client asking the module's server side for a renegotiation does not get one");
        is_int((int)ERR_GET_REASON(why), SSL_R_NO_RENEGOTIATION, "the client was told: %s",
               ERR_reason_error_string(why) ? ERR_reason_error_string(why) : "?");
        ok(mod_r < 0 && mod_r != -EAGAIN, "and the module's session ended (read %zd: %s)", mod_r,
           vt->reason(c));
        SSL_free(cl);
        vt->conn_free(c);
        close(sv[0]);
        close(sv[1]);

        /* control: an OpenSSL server allowing client renegotiation grants it */
        SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
        SSL_CTX_use_certificate(sctx, ucert);
        SSL_CTX_use_PrivateKey(sctx, ukey);
        SSL_CTX_set_max_proto_version(sctx, TLS1_2_VERSION);
        SSL_CTX_set_options(sctx, SSL_OP_ALLOW_CLIENT_RENEGOTIATION);
        nonblock_pair(sv);
        SSL *s = ssl_on(sctx, sv[0], true);
        cl = ssl_on(cctx, sv[1], false);
        ok(pump_pair(cl, s) && renegotiate(cl, NULL, s, &why, &mod_r) == 1,
           "control: the same client renegotiates with a server that allows it");
        SSL_free(cl);
        SSL_free(s);
        close(sv[0]);
        close(sv[1]);

        /* the module's client side: the upstream sends a HelloRequest */
        nonblock_pair(sv);
        s = ssl_on(sctx, sv[1], true);
        if (vt->client_new(t, sv[0], "upstream.test", &c) < 0)
                abort();
        hr = pump_handshake(c, s, &peer);
        ok(hr == 0 && peer == 1 && strcmp(vt->version(c), "TLSv1.2") == 0,
           "renegotiation: a TLS 1.2 session of the module's client side (%s)", vt->version(c));
        is_int(renegotiate(s, c, NULL, &why, &mod_r), 0,
               "an upstream asking the module's client side for a renegotiation does not get one");
        is_int((int)ERR_GET_REASON(why), SSL_R_NO_RENEGOTIATION, "the upstream was told: %s",
               ERR_reason_error_string(why) ? ERR_reason_error_string(why) : "?");
        vt->conn_free(c);
        SSL_free(s);
        close(sv[0]);
        close(sv[1]);

        /* control: a default OpenSSL client accepts the same HelloRequest */
        nonblock_pair(sv);
        s = ssl_on(sctx, sv[1], true);
        cl = ssl_on(cctx, sv[0], false);
        ok(pump_pair(cl, s) && renegotiate(s, NULL, cl, &why, &mod_r) == 1,
           "control: a default OpenSSL client renegotiates when that upstream asks");
        /* and data still flows after it */
        SSL_write(s, "x", 1);
        ok(SSL_read(cl, b, sizeof b) == 1, "control: data after the renegotiation");
        SSL_free(cl);
        SSL_free(s);
        close(sv[0]);
        close(sv[1]);
        SSL_CTX_free(sctx);
        SSL_CTX_free(cctx);
}

/* ---- the client side ----------------------------------------------------- */

struct upstream {
        X509 *cert;
        EVP_PKEY *key;
};

/* The module's client toward "upstream.test" against an OpenSSL server
 * presenting u. Returns the handshake result; reason copied out. */
static int client_session(struct rf_tls_trust *t, const struct upstream *u, char *reason,
                          size_t rlen, bool data)
{
        int sv[2], peer;
        struct rf_tls_conn *c;
        nonblock_pair(sv);
        SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
        SSL_CTX_use_certificate(sctx, u->cert);
        SSL_CTX_use_PrivateKey(sctx, u->key);
        SSL *s = SSL_new(sctx);
        SSL_set_fd(s, sv[1]);
        SSL_set_accept_state(s);
        int r = vt->client_new(t, sv[0], "upstream.test", &c);
        if (r < 0)
                return r;
        r = pump_handshake(c, s, &peer);
        snprintf(reason, rlen, "%s", vt->reason(c));
        if (r == 0 && data) {
                char buf[32] = "";
                is_int(vt->write(c, "ping", 4), 4, "module client writes upstream");
                ok(SSL_read(s, buf, sizeof buf) == 4 && memcmp(buf, "ping", 4) == 0,
                   "upstream read it");
                SSL_write(s, "pong", 4);
                ssize_t k = -EAGAIN;
                for (int i = 0; i < 50 && k == -EAGAIN; i++)
                        k = vt->read(c, buf, sizeof buf);
                ok(k == 4 && memcmp(buf, "pong", 4) == 0, "module client read the answer");
        }
        vt->conn_free(c);
        SSL_free(s);
        SSL_CTX_free(sctx);
        close(sv[0]);
        close(sv[1]);
        return r;
}

/* A PEM file of one CERTIFICATE block around `b64`. */
static char *write_block(const char *name, const char *b64, bool end)
{
        char text[512];
        int n = snprintf(text, sizeof text, "# %s\n-----BEGIN CERTIFICATE-----\n%s\n%s", name, b64,
                         end ? "-----END CERTIFICATE-----\n" : "");
        return write_tmp(name, text, (size_t)n);
}

/* trust_load checks the files' text only (no X.509 decoding); the
 * certificates are parsed at the first client_new, which fails with a
 * reason for one that does not parse. */
static void test_trust_lazy(struct rf_tls_ca *ca, const char *bundle, const struct upstream *good,
                            X509 *testca)
{
        struct rf_tls_trust *t;
        struct rf_tls_conn *c = NULL;
        char reason[RF_TLS_REASON_MAX];
        int sv[2];

        /* what the cheap check refuses */
        const struct {
                const char *name, *b64;
                bool end;
                const char *what;
        } bad[] = {
                {"bad-b64.pem", "MAMC*QA=", true, "a block whose base64 does not decode"},
                {"bad-pad.pem", "MAMCAQA=MAMC", true, "base64 going on after its padding"},
                {"no-end.pem", "MAMCAQA=", false, "a block without its END line"},
                {"not-seq.pem", "AgEA", true, "a block that is no DER SEQUENCE"},
                {"short-seq.pem", "MAQCAQA=", true, "a DER SEQUENCE longer than the block"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char *path = write_block(bad[i].name, bad[i].b64, bad[i].end);
                is_int(vt->trust_load(path, NULL, &t), -EBADMSG, "trust_load refuses %s",
                       bad[i].what);
                unlink(path);
                free(path);
        }

        /* a well-formed block that is not a certificate (SEQUENCE {
         * INTEGER 0 }) passes the check, and fails the first client_new */
        char *junk = write_block("junk.pem", "MAMCAQA=", true);
        is_int(vt->trust_load(junk, NULL, &t), 0,
               "a DER SEQUENCE that is no certificate passes trust_load (not decoded there)");
        char *b;
        size_t blen;
        is_int(vt->trust_bundle(t, ca, &b, &blen), 0, "the run's bundle is made from its text");
        ok(blen > 40 && strncmp(b, "# junk.pem\n-----BEGIN CERTIFICATE-----\nMAMCAQA=\n", 40) == 0,
           "byte for byte");
        free(b);
        nonblock_pair(sv);
        is_int(vt->client_new(t, sv[0], "upstream.test", &c), -EBADMSG,
               "the first client_new on it fails (-EBADMSG)");
        ok(c && strncmp(vt->reason(c), "the host's CA bundle could not be read: certificate 1 of 1",
                        58) == 0,
           "with a reason: %s", c ? vt->reason(c) : "(no session)");
        if (c) {
                is_int(vt->handshake(c), -EPROTO, "the reason's session does nothing (-EPROTO)");
                is_int(vt->write(c, "x", 1), -EPROTO, "not even write");
                vt->conn_free(c);
        }
        c = NULL;
        is_int(vt->client_new(t, sv[0], "upstream.test", &c), -EBADMSG, "and so does the next");
        ok(c && strncmp(vt->reason(c), "the host's CA bundle could not be read: ", 40) == 0,
           "with the same reason");
        vt->conn_free(c);
        vt->trust_free(t);
        c = NULL;
        is_int(vt->trust_load(bundle, junk, &t), 0, "the same block as --upstream-ca file");
        is_int(vt->client_new(t, sv[0], "upstream.test", &c), -EBADMSG,
               "fails the first client_new too");
        ok(c && strncmp(vt->reason(c), "the upstream CA file could not be read: ", 40) == 0,
           "reason: %s", c ? vt->reason(c) : "(no session)");
        vt->conn_free(c);
        vt->trust_free(t);
        close(sv[0]);
        close(sv[1]);
        unlink(junk);
        free(junk);

        /* a TRUSTED CERTIFICATE block (OpenSSL's trust settings appended)
         * is a certificate as before */
        char *aux = write_pem_aux("test-ca-aux.pem", testca);
        is_int(vt->trust_load(bundle, aux, &t), 0, "trust: an extra CA as TRUSTED CERTIFICATE");
        is_int(client_session(t, good, reason, sizeof reason, false), 0,
               "upstream with a certificate from it: verified");
        vt->trust_free(t);
        unlink(aux);
        free(aux);
}

static void test_client(struct rf_tls_ca *ca, const char *bundle)
{
        EVP_PKEY *cak = EVP_EC_gen("P-256"), *k = EVP_EC_gen("P-256");
        X509 *testca = make_cert("ringfence test CA", cak, NULL, NULL, true, -3600, 86400);
        char *capath = write_pem("test-ca.pem", testca);
        struct upstream good = {make_cert("upstream.test", k, testca, cak, false, -3600, 86400), k};
        struct upstream self = {make_cert("upstream.test", k, NULL, NULL, false, -3600, 86400), k};
        struct upstream expired = {
                make_cert("upstream.test", k, testca, cak, false, -3 * 86400, -86400), k};
        struct upstream wrong = {make_cert("other.test", k, testca, cak, false, -3600, 86400), k};
        struct rf_tls_trust *t, *plain;
        char reason[RF_TLS_REASON_MAX];

        is_int(vt->trust_load(bundle, capath, &t), 0, "trust: host bundle + extra CA");
        is_int(vt->trust_load(bundle, NULL, &plain), 0, "trust: host bundle alone");

        is_int(client_session(t, &good, reason, sizeof reason, true), 0,
               "upstream with a certificate from the extra CA: verified");
        is_int(client_session(t, &self, reason, sizeof reason, false), -EKEYREJECTED,
               "self-signed upstream refused");
        ok(strncmp(reason, "self-signed certificate", 23) == 0, "reason: %s", reason);
        is_int(client_session(t, &expired, reason, sizeof reason, false), -EKEYREJECTED,
               "expired upstream refused");
        ok(strncmp(reason, "certificate expired", 19) == 0, "reason: %s", reason);
        is_int(client_session(t, &wrong, reason, sizeof reason, false), -EKEYREJECTED,
               "wrong-name upstream refused");
        ok(strncmp(reason, "hostname mismatch", 17) == 0, "reason: %s", reason);
        is_int(client_session(plain, &good, reason, sizeof reason, false), -EKEYREJECTED,
               "without --upstream-ca the same upstream is refused");
        ok(strncmp(reason, "untrusted certificate", 21) == 0, "reason: %s", reason);
        test_renegotiation(ca, t, good.cert, k);

        int sv[2];
        struct rf_tls_conn *c;
        nonblock_pair(sv);
        is_int(vt->client_new(t, sv[0], "10.0.0.1", &c), -EINVAL,
               "upstream session refuses an IP literal as the host");
        is_int(vt->client_new(t, sv[0], "a b.test", &c), -EINVAL, "and a name with a space");
        close(sv[0]);
        close(sv[1]);
        struct rf_tls_trust *bad;
        char *empty = write_tmp("empty.pem", "no certificates here\n", 21);
        is_int(vt->trust_load(bundle, empty, &bad), -EBADMSG,
               "an extra CA file without a certificate");
        is_int(vt->trust_load("/nonexistent/bundle.crt", NULL, &bad), -ENOENT, "a missing bundle");
        unlink(empty);
        free(empty);
        test_trust_lazy(ca, bundle, &good, testca);

        vt->trust_free(plain);
        vt->trust_free(t);
        unlink(capath);
        free(capath);
        X509_free(good.cert);
        X509_free(self.cert);
        X509_free(expired.cert);
        X509_free(wrong.cert);
        X509_free(testca);
        EVP_PKEY_free(k);
        EVP_PKEY_free(cak);
}

/* The syscalls the module's post-lockdown operations need (tlsterm.h's
 * RF_TLS_SECCOMP_NOTE), plus what this test's own scaffolding uses
 * (socketpair). */
static const int tls_syscalls[] = {
        SCMP_SYS(read),         SCMP_SYS(write),        SCMP_SYS(close),
        SCMP_SYS(getrandom),    SCMP_SYS(getpid),       SCMP_SYS(brk),
        SCMP_SYS(mmap),         SCMP_SYS(munmap),       SCMP_SYS(mremap),
        SCMP_SYS(madvise),      SCMP_SYS(futex),        SCMP_SYS(exit_group),
        SCMP_SYS(exit),         SCMP_SYS(rt_sigreturn), SCMP_SYS(clock_gettime),
        SCMP_SYS(gettimeofday), SCMP_SYS(socketpair),
};
#ifndef __has_feature
#define __has_feature(x) 0
#endif
/* Sanitizer runtimes reach for these on their own (the egress filter allows
 * them too, for the same reason); not needed by the module. */
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
static const int sanitizer_syscalls[] = {
        SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction),    SCMP_SYS(rt_sigprocmask),
        SCMP_SYS(sched_yield), SCMP_SYS(getrlimit),       SCMP_SYS(nanosleep),
        SCMP_SYS(gettid),      SCMP_SYS(clock_nanosleep),
};
#else
static const int sanitizer_syscalls[] = {SCMP_SYS(read)};
#endif

/* In a forked child (as the egress process is forked after the module's
 * init), under a seccomp allowlist of exactly tls_syscalls (anything else
 * kills the process): the first client_new on a trust whose block is no
 * certificate (the parse fails, with OpenSSL's error strings loaded then:
 * the first failure's reason), a CA, server sessions with data (the CA's
 * server context made by the first), one refused for ALPN (OpenSSL's reason),
 * the first upstream session on a fresh trust `t` (its certificates parsed
 * into the store then). `then_open` adds an openat after them (the control:
 * the filter is really in force). Returns the child's wait status. */
static int run_locked_down(struct rf_tls_trust *t, struct rf_tls_trust *junk,
                           const struct upstream *u, bool then_open)
{
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
                for (size_t i = 0; i < ARRAY_SIZE(tls_syscalls); i++)
                        seccomp_rule_add(f, SCMP_ACT_ALLOW, tls_syscalls[i], 0);
                for (size_t i = 0; i < ARRAY_SIZE(sanitizer_syscalls); i++)
                        seccomp_rule_add(f, SCMP_ACT_ALLOW, sanitizer_syscalls[i], 0);
                if (seccomp_load(f) < 0)
                        _exit(2);
                struct rf_tls_ca *ca;
                struct rf_tls_conn *c = NULL;
                char reason[RF_TLS_REASON_MAX];
                int sv[2];
                nonblock_pair(sv);
                if (vt->client_new(junk, sv[0], "upstream.test", &c) != -EBADMSG || !c ||
                    strncmp(vt->reason(c), "the host's CA bundle could not be read: ", 40) != 0)
                        _exit(7);
                vt->conn_free(c);
                if (vt->ca_new(hosts, 2, 3600, &ca) < 0)
                        _exit(3);
                SSL_CTX *cctx = client_ctx_trusting(ca);
                if (server_session(ca, cctx, "api.example.test", NULL, 0, PRE_NONE, true) < 0)
                        _exit(4);
                if (server_session(ca, cctx, "api.example.test", "\x02h2", 3, PRE_NONE, true) !=
                            -EPROTO ||
                    strcmp(server_reason, "handshake: no application protocol") != 0)
                        _exit(8);
                /* the ClientHello handed in (all of it, then part of it) */
                if (server_session(ca, cctx, "api.example.test", NULL, 0, PRE_ALL, true) < 0 ||
                    server_session(ca, cctx, "api.example.test", NULL, 0, PRE_PART, true) < 0)
                        _exit(6);
                if (client_session(t, u, reason, sizeof reason, false) < 0)
                        _exit(5);
                /* the CA exported and imported (as a new egress process
                 * does, there before its lockdown): the copy serves too */
                static unsigned char exp[RF_TLS_CA_EXPORT_MAX];
                size_t elen = 0;
                struct rf_tls_ca *imp = NULL;
                if (vt->ca_export(ca, exp, sizeof exp, &elen) < 0 ||
                    vt->ca_import(exp, elen, &imp) < 0 ||
                    server_session(imp, cctx, "api.example.test", NULL, 0, PRE_ALL, true) < 0)
                        _exit(9);
                if (then_open)
                        (void)!open("/etc/hostname", O_RDONLY | O_CLOEXEC);
                _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) < 0)
                return -1;
        return st;
}

/* Run first (main), while this process has made no SSL_CTX and loaded no
 * error strings: the child's first uses of them are under the filter. */
static void test_seccomp(const char *bundle)
{
        EVP_PKEY *cak = EVP_EC_gen("P-256"), *k = EVP_EC_gen("P-256");
        X509 *testca = make_cert("ringfence test CA", cak, NULL, NULL, true, -3600, 86400);
        struct upstream good = {make_cert("upstream.test", k, testca, cak, false, -3600, 86400), k};
        char *capath = write_pem("seccomp-ca.pem", testca);
        static const char junk_text[] = "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n"
                                        "-----END CERTIFICATE-----\n";
        char *junkpath = write_tmp("seccomp-junk.pem", junk_text, sizeof junk_text - 1);
        struct rf_tls_trust *t, *junk;
        /* fresh: trust_load parses no certificate, the child's first
         * client_new does */
        if (vt->trust_load(bundle, capath, &t) < 0 || vt->trust_load(junkpath, NULL, &junk) < 0)
                abort();
        int st = run_locked_down(t, junk, &good, false);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "after fork, under an allowlist of only the listed syscalls: the first client_new "
           "on a fresh trust (its certificates parsed then; one that does not parse refused "
           "with a reason), CA, leaf, the CA's first server session, server sessions (without "
           "and with a ClientHello prefix), a refusal with OpenSSL's reason, upstream "
           "sessions, the CA's export and import and the imported CA's server session work "
           "(status %#x)",
           st);
        st = run_locked_down(t, junk, &good, true);
        ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
           "control: the same child opening a file is killed by the filter (SIGSYS)");
        vt->trust_free(t);
        vt->trust_free(junk);
        unlink(capath);
        free(capath);
        unlink(junkpath);
        free(junkpath);
        X509_free(good.cert);
        X509_free(testca);
        EVP_PKEY_free(k);
        EVP_PKEY_free(cak);
}

/* ---- real clients (curl, Python, Node, Java) against the server side ------ */

/* Serve one HTTPS request on `lfd` in a forked child: the module's server
 * side for `name` (a forged leaf when `forged`), a poll loop as the egress
 * process will run it, the answer "ok". The child exits 0 if it served the
 * request, 1 if the handshake or the exchange failed, 2 if no client came
 * (client_run shuts the listening socket down after the client exits). */
static pid_t serve_once(struct rf_tls_ca *ca, int lfd, const char *name, bool forged)
{
        fflush(stdout);
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        alarm(120); /* hang guard only */
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct rf_tls_conn *c;
        if (fd < 0)
                _exit(2);
        /* as the egress process does: read what the client sent first (its
         * ClientHello, whole or in part) and hand it in (the forged-leaf
         * entry has no prefix: it reads the socket itself) */
        unsigned char first[16384 + 5];
        ssize_t n = 0;
        if (!forged) {
                struct pollfd p = {fd, POLLIN, 0};
                if (poll(&p, 1, -1) != 1 || (n = read(fd, first, sizeof first)) <= 0)
                        _exit(1);
        }
        if ((forged ? vt->test_server_new_forged(ca, fd, name, &c)
                    : vt->server_new(ca, fd, name, first, (size_t)n, &c)) < 0)
                _exit(2);
        char req[4096];
        size_t got = 0;
        int r;
        while ((r = vt->handshake(c)) == -EAGAIN) {
                struct pollfd p = {fd, vt->want(c), 0};
                poll(&p, 1, -1);
        }
        if (r < 0)
                _exit(1);
        while (!memmem(req, got, "\r\n\r\n", 4)) {
                ssize_t k = vt->read(c, req + got, sizeof req - got);
                if (k == -EAGAIN) {
                        struct pollfd p = {fd, vt->want(c), 0};
                        poll(&p, 1, -1);
                        continue;
                }
                if (k <= 0 || (got += (size_t)k) == sizeof req)
                        _exit(1);
        }
        static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: "
                                   "close\r\n\r\nok";
        size_t off = 0;
        while (off < sizeof resp - 1) {
                ssize_t k = vt->write(c, resp + off, sizeof resp - 1 - off);
                if (k == -EAGAIN) {
                        struct pollfd p = {fd, vt->want(c), 0};
                        poll(&p, 1, -1);
                        continue;
                }
                if (k < 0)
                        _exit(1);
                off += (size_t)k;
        }
        while (vt->shutdown(c) == -EAGAIN) {
                struct pollfd p = {fd, vt->want(c), 0};
                poll(&p, 1, -1);
        }
        vt->conn_free(c);
        _exit(0);
}

/* Run `cmd` (a shell command line) against a fresh server; returns the
 * client's exit status and the server child's in *server. */
static int client_run(struct rf_tls_ca *ca, const char *fmt, const char *name, bool forged,
                      int *server, char *out, size_t outlen)
{
        int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t al = sizeof a;
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 4) < 0 ||
            getsockname(lfd, (struct sockaddr *)&a, &al) < 0)
                abort();
        int port = ntohs(a.sin_port);
        pid_t pid = serve_once(ca, lfd, name, forged);
        char cmd[2048];
        /* fmt is one of test_real_clients' command templates (%1$s name, %2$d port) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        snprintf(cmd, sizeof cmd, fmt, name, port);
#pragma GCC diagnostic pop
        FILE *f = popen(cmd, "r");
        size_t n = fread(out, 1, outlen - 1, f);
        out[n] = '\0';
        int st = pclose(f);
        /* a client that never connected leaves the server in accept():
         * shutting the shared listening socket down wakes it (EINVAL) */
        shutdown(lfd, SHUT_RDWR);
        close(lfd);
        int sst;
        waitpid(pid, &sst, 0);
        *server = sst;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

struct real_client {
        const char *what, *probe, *fmt;
        bool honours;        /* does it enforce the run CA's name constraint? */
        const char *why_not; /* if not: why (docs/TLS.md) */
};

static void test_real_clients(struct rf_tls_ca *ca, const char *bundle)
{
        char *pem, *p12path, *capath;
        unsigned char *der;
        size_t len;
        struct rf_tls_trust *t = NULL;
        vt->ca_pem(ca, &pem, &len);
        capath = write_tmp("run-ca.pem", pem, len);
        free(pem);
        /* the JVM's store as a run gets it: the run CA and the host's roots
         * (the run CA alone without a host bundle) */
        if (bundle && vt->trust_load(bundle, NULL, &t) < 0)
                abort();
        if (vt->pkcs12(ca, t, "changeit", &der, &len) < 0)
                abort();
        vt->trust_free(t);
        p12path = write_tmp("run-ca.p12", der, len);
        free(der);

        /* each prints the body ("ok") and exits 0, or exits non-zero */
        char java[4096], curl[512], py[1024], node[1024];
        snprintf(curl, sizeof curl,
                 "curl -sS --max-time 30 --cacert %s --resolve %%1$s:%%2$d:127.0.0.1 "
                 "https://%%1$s:%%2$d/ 2>&1",
                 capath);
        snprintf(py, sizeof py,
                 "python3 -c 'import socket,ssl,sys\n"
                 "c=ssl.create_default_context(cafile=\"%s\")\n"
                 "s=c.wrap_socket(socket.create_connection((\"127.0.0.1\",%%2$d)),server_hostname="
                 "\"%%1$s\")\n"
                 "s.sendall(b\"GET / HTTP/1.1\\r\\nHost: %%1$s\\r\\n\\r\\n\")\n"
                 "d=b\"\"\n"
                 "while True:\n"
                 " b=s.recv(4096)\n"
                 " if not b: break\n"
                 " d+=b\n"
                 "sys.stdout.write(d.split(b\"\\r\\n\\r\\n\",1)[1].decode())' 2>&1",
                 capath);
        snprintf(node, sizeof node,
                 "node -e 'const tls=require(\"tls\"),fs=require(\"fs\");"
                 "const s=tls.connect({host:\"127.0.0.1\",port:%%2$d,servername:\"%%1$s\","
                 "ca:fs.readFileSync(\"%s\")},()=>s.write(\"GET / HTTP/1.1\\r\\nHost: "
                 "%%1$s\\r\\n\\r\\n\"));"
                 "let "
                 "d=\"\";s.on(\"data\",b=>d+=b);s.on(\"end\",()=>process.stdout.write(d.split("
                 "\"\\r\\n\\r\\n\")[1]));"
                 "s.on(\"error\",e=>{console.log(e.code+\": \"+e.message);process.exit(1)})' 2>&1",
                 capath);
        /* Java: the PKCS12 trust store as the JVM's only trust store; an
         * SSLSocket layered over a plain one (no DNS), HTTPS endpoint
         * identification, SNI = the name */
        char *javasrc;
        if (asprintf(&javasrc, "%s/T.java", tmpdir) < 0)
                abort();
        static const char jsrc[] =
                "import javax.net.ssl.*;import java.net.*;import java.io.*;\n"
                "public class T{public static void main(String[] a)throws Exception{\n"
                "Socket p=new Socket(\"127.0.0.1\",Integer.parseInt(a[1]));\n"
                "SSLSocket s=(SSLSocket)((SSLSocketFactory)SSLSocketFactory.getDefault())"
                ".createSocket(p,a[0],Integer.parseInt(a[1]),true);\n"
                "SSLParameters "
                "sp=s.getSSLParameters();sp.setEndpointIdentificationAlgorithm(\"HTTPS\");"
                "s.setSSLParameters(sp);\n"
                "s.getOutputStream().write((\"GET / HTTP/1.1\\r\\nHost: "
                "\"+a[0]+\"\\r\\n\\r\\n\").getBytes());\n"
                "String r=new String(s.getInputStream().readAllBytes());\n"
                "System.out.print(r.split(\"\\r\\n\\r\\n\",2)[1]);}}\n";
        FILE *jf = fopen(javasrc, "we");
        fputs(jsrc, jf);
        fclose(jf);
        snprintf(java, sizeof java,
                 "java -Djavax.net.ssl.trustStore=%s -Djavax.net.ssl.trustStoreType=PKCS12 "
                 "-Djavax.net.ssl.trustStorePassword=changeit %s %%1$s %%2$d 2>&1 | tail -c 300",
                 p12path, javasrc);

        const struct real_client clients[] = {
                {"curl", "curl --version >/dev/null 2>&1", curl, true, NULL},
                {"python3 ssl", "python3 -c 'import ssl' >/dev/null 2>&1", py, true, NULL},
                {"node tls", "node -e 0 >/dev/null 2>&1", node, true, NULL},
                /* Java's PKIX builds a TrustAnchor from the certificate
                 * alone and ignores the name constraints inside it */
                {"java (PKCS12 trust store)", "java -version >/dev/null 2>&1", java, false,
                 "Java 17 ignores nameConstraints in a trust anchor certificate: "
                 "for the JVM only the key's confinement protects"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(clients); i++) {
                const struct real_client *rc = &clients[i];
                char out[4096], why[128];
                int server;
                if (system(rc->probe) != 0) {
                        snprintf(why, sizeof why, "%s is not installed", rc->what);
                        skip(why);
                        skip(why);
                        continue;
                }
                int st = client_run(ca, rc->fmt, "api.example.test", false, &server, out,
                                    sizeof out);
                ok(st == 0 && strcmp(out, "ok") == 0 && WIFEXITED(server) &&
                           WEXITSTATUS(server) == 0,
                   "%s trusting the run CA gets the answer from the module's server side",
                   rc->what);
                if (st != 0 || strcmp(out, "ok") != 0)
                        diag("%s: status %d, said: %s", rc->what, st, out);
                if (!vt->test_server_new_forged) {
                        skip("a forged leaf needs a test build (-Dtest_build=true)");
                        continue;
                }
                st = client_run(ca, rc->fmt, "evil.test", true, &server, out, sizeof out);
                /* the record of which clients honour a constraint on a trust
                 * anchor: a client that accepts is reported, not hidden */
                bool refused = st != 0 && WIFEXITED(server) && WEXITSTATUS(server) == 1;
                char what[160];
                snprintf(what, sizeof what,
                         "%s refuses a leaf for evil.test forged under the run CA (name "
                         "constraint)",
                         rc->what);
                if (rc->honours)
                        ok(refused, "%s", what);
                else
                        todo(refused, what, rc->why_not);
                diag("%s on the forged leaf: status %d: %.200s", rc->what, st, out);
        }
        unlink(javasrc);
        free(javasrc);
        unlink(capath);
        unlink(p12path);
        free(capath);
        free(p12path);
}

/* ---- the run's trust material --------------------------------------------- */

static void test_bundle(struct rf_tls_ca *ca, const char *bundle)
{
        struct rf_tls_trust *t;
        char *b, *cap, *host;
        size_t blen, clen;
        FILE *f = fopen(bundle, "re");
        fseek(f, 0, SEEK_END);
        long hl = ftell(f);
        rewind(f);
        host = malloc((size_t)hl);
        if (fread(host, 1, (size_t)hl, f) != (size_t)hl)
                abort();
        fclose(f);

        vt->trust_load(bundle, NULL, &t);
        is_int(vt->trust_bundle(t, ca, &b, &blen), 0, "run trust bundle");
        vt->ca_pem(ca, &cap, &clen);
        ok(blen > (size_t)hl && memcmp(b, host, (size_t)hl) == 0,
           "it starts with the host bundle, byte for byte");
        ok(strstr(b + hl, cap) != NULL, "and contains the run CA");
        /* every certificate in it parses: host's count + 1 */
        BIO *bio = BIO_new_mem_buf(b, (int)blen);
        STACK_OF(X509_INFO) *in = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
        BIO_free(bio);
        bio = BIO_new_mem_buf(host, (int)hl);
        STACK_OF(X509_INFO) *hin = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
        BIO_free(bio);
        is_int(sk_X509_INFO_num(in), sk_X509_INFO_num(hin) + 1,
               "certificates: the host's %d + the run CA", sk_X509_INFO_num(hin));
        sk_X509_INFO_pop_free(in, X509_INFO_free);
        sk_X509_INFO_pop_free(hin, X509_INFO_free);
        free(b);
        free(cap);
        free(host);
        vt->trust_free(t);
}

/* keytool -list on a PKCS12 store: its exit status; *entries from "Your
 * keystore contains N entries", and how many entries it lists as
 * trustedCertEntry and as anything else. The start of its output in out. */
static int keytool_list(const char *path, int *entries, int *trusted, int *other, char *out,
                        size_t outlen)
{
        char cmd[512], *line = NULL;
        size_t cap = 0, used = 0;
        *entries = *trusted = *other = -1;
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/keytool -list -keystore %s -storepass changeit -storetype PKCS12 2>&1",
                 path);
        FILE *f = popen(cmd, "r");
        if (!f)
                return -1;
        *trusted = *other = 0;
        out[0] = '\0';
        while (getline(&line, &cap, f) > 0) {
                int n;
                if (used < outlen - 1)
                        used += (size_t)snprintf(out + used, outlen - used, "%s", line);
                if (used > outlen - 1)
                        used = outlen - 1;
                if (sscanf(line, "Your keystore contains %d entr", &n) == 1)
                        *entries = n;
                else if (strstr(line, "trustedCertEntry"))
                        (*trusted)++;
                else if (strstr(line, "PrivateKeyEntry") || strstr(line, "SecretKeyEntry"))
                        (*other)++;
        }
        free(line);
        return pclose(f);
}

/* Does a bag carry Java's trusted-key-usage attribute = anyExtendedKeyUsage?
 * (The OID has no NID in OpenSSL: compared as an object.) */
static bool java_trusted(const STACK_OF(X509_ATTRIBUTE) * attrs, const ASN1_OBJECT *jtku)
{
        for (int i = 0; i < sk_X509_ATTRIBUTE_num(attrs); i++) {
                X509_ATTRIBUTE *a = sk_X509_ATTRIBUTE_value(attrs, i);
                if (OBJ_cmp(X509_ATTRIBUTE_get0_object(a), jtku) != 0)
                        continue;
                const ASN1_TYPE *v = X509_ATTRIBUTE_get0_type(a, 0);
                return X509_ATTRIBUTE_count(a) == 1 && v && v->type == V_ASN1_OBJECT &&
                       OBJ_obj2nid(v->value.object) == NID_anyExtendedKeyUsage;
        }
        return false;
}

/* The store's certificate bags, checked one by one: unencrypted, each with
 * Java's trusted-key-usage attribute; aliases in order ("ringfence-run-ca",
 * then "host-ca-1", ...). Returns the number of certificate bags, -1 when one
 * is not as expected; *has_extra when one of them is `extra`. */
static int p12_bags(PKCS12 *p12, X509 *extra, bool *has_extra)
{
        STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
        ASN1_OBJECT *jtku = OBJ_txt2obj("2.16.840.1.113894.746875.1.1", 1);
        int n = 0;
        *has_extra = false;
        for (int i = 0; safes && n >= 0 && i < sk_PKCS7_num(safes); i++) {
                PKCS7 *p7 = sk_PKCS7_value(safes, i);
                if (OBJ_obj2nid(p7->type) != NID_pkcs7_data) {
                        n = -1; /* an encrypted safe */
                        break;
                }
                STACK_OF(PKCS12_SAFEBAG) *bags = PKCS12_unpack_p7data(p7);
                for (int k = 0; bags && n >= 0 && k < sk_PKCS12_SAFEBAG_num(bags); k++) {
                        const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, k);
                        if (PKCS12_SAFEBAG_get_nid(bag) != NID_certBag ||
                            !java_trusted(PKCS12_SAFEBAG_get0_attrs(bag), jtku)) {
                                n = -1;
                                break;
                        }
                        char want[32], *alias = PKCS12_get_friendlyname((PKCS12_SAFEBAG *)bag);
                        if (n == 0)
                                snprintf(want, sizeof want, "ringfence-run-ca");
                        else
                                snprintf(want, sizeof want, "host-ca-%d", n);
                        X509 *x = PKCS12_SAFEBAG_get1_cert(bag);
                        if (x && extra && X509_cmp(x, extra) == 0)
                                *has_extra = true;
                        if (!alias || strcmp(alias, want) != 0 || !x)
                                n = -1;
                        else
                                n++;
                        X509_free(x);
                        OPENSSL_free(alias);
                }
                sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
        }
        sk_PKCS7_pop_free(safes, PKCS7_free);
        ASN1_OBJECT_free(jtku);
        return n;
}

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* One store: the MAC, its bags, and keytool's listing; expected entries. */
static void check_p12(const unsigned char *der, size_t len, int expect, X509 *extra,
                      const char *what)
{
        const unsigned char *p = der;
        PKCS12 *p12 = d2i_PKCS12(NULL, &p, (long)len);
        ok(p12 && PKCS12_verify_mac(p12, "changeit", -1) == 1 &&
                   PKCS12_verify_mac(p12, "wrong", -1) != 1,
           "%s: its MAC verifies with the password (only)", what);
        EVP_PKEY *pk = NULL;
        X509 *cert = NULL;
        STACK_OF(X509) *cas = NULL;
        ok(p12 && PKCS12_parse(p12, "changeit", &pk, &cert, &cas) == 1 && pk == NULL &&
                   cert == NULL && sk_X509_num(cas) == expect,
           "%s: no key and %d certificates (%d)", what, expect, cas ? sk_X509_num(cas) : -1);
        bool has_extra = false;
        is_int(p12 ? p12_bags(p12, extra, &has_extra) : -1, expect,
               "%s: every certificate bag unencrypted, with Java's trusted-key-usage attribute, "
               "aliases ringfence-run-ca, host-ca-1..",
               what);
        if (extra)
                ok(!has_extra, "%s: the --upstream-ca certificate is not in it", what);
        EVP_PKEY_free(pk);
        X509_free(cert);
        sk_X509_pop_free(cas, X509_free);
        PKCS12_free(p12);

        char *path = write_tmp("trust.p12", der, len);
        if (access("/usr/bin/keytool", X_OK) != 0) {
                skip("keytool absent (openjdk-17-jdk-headless is not installed)");
        } else {
                char out[2048];
                int entries, trusted, other;
                int st = keytool_list(path, &entries, &trusted, &other, out, sizeof out);
                ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && entries == expect &&
                           trusted == expect && other == 0,
                   "%s: keytool (Java %s) lists %d entries, every one a trustedCertEntry "
                   "(entries %d, trusted %d, other %d)",
                   what, "17", expect, entries, trusted, other);
                if (expect == 1)
                        ok(strstr(out, "ringfence-run-ca") != NULL,
                           "%s: the entry is ringfence-run-ca", what);
                if (trusted != expect)
                        diag("keytool said: %s", out);
        }
        unlink(path);
        free(path);
}

static void test_pkcs12(struct rf_tls_ca *ca, const char *bundle)
{
        unsigned char *der;
        size_t len;
        is_int(vt->pkcs12(ca, NULL, "changeit", &der, &len), 0, "PKCS12 trust store, run CA only");
        check_p12(der, len, 1, NULL, "run CA only");
        free(der);
        is_int(vt->pkcs12(ca, NULL, NULL, &der, &len), -EINVAL, "PKCS12 needs a password");
        if (!bundle) {
                skip("no host bundle: PKCS12 with the host's roots");
                return;
        }

        /* the host bundle's certificates, counted here from the text */
        FILE *f = fopen(bundle, "re");
        char *line = NULL;
        size_t cap = 0;
        int host_n = 0;
        while (f && getline(&line, &cap, f) > 0)
                host_n += strcmp(line, "-----BEGIN CERTIFICATE-----\n") == 0;
        free(line);
        if (f)
                fclose(f);

        /* with an extra CA (--upstream-ca), which must stay out */
        EVP_PKEY *cak = EVP_EC_gen("P-256");
        X509 *extra = make_cert("ringfence upstream test CA", cak, NULL, NULL, true, -3600, 86400);
        char *capath = write_pem("p12-extra-ca.pem", extra);
        struct rf_tls_trust *t;
        if (vt->trust_load(bundle, capath, &t) < 0)
                abort();
        is_int(vt->pkcs12(ca, t, "changeit", &der, &len), 0,
               "PKCS12 trust store with the host's roots (%d in %s)", host_n, bundle);
        char what[64];
        snprintf(what, sizeof what, "run CA + %d host roots", host_n);
        check_p12(der, len, host_n + 1, extra, what);
        free(der);

        /* its cost (reported, not asserted) */
        double ms[5];
        for (size_t i = 0; i < ARRAY_SIZE(ms); i++) {
                double t0 = now_ms();
                if (vt->pkcs12(ca, t, "changeit", &der, &len) < 0)
                        abort();
                ms[i] = now_ms() - t0;
                free(der);
        }
        qsort(ms, ARRAY_SIZE(ms), sizeof ms[0], cmp_double);
        diag("pkcs12 with %d host roots: %.1f ms median (min %.1f, max %.1f, %zu runs, %zu bytes)",
             host_n, ms[2], ms[0], ms[4], ARRAY_SIZE(ms), len);

        vt->trust_free(t);
        unlink(capath);
        free(capath);
        X509_free(extra);
        EVP_PKEY_free(cak);
}

/* A text file's bytes up to its first NUL (*len of them), malloc'ed;
 * aborts if it cannot be read. */
static char *read_text(const char *path, size_t *len)
{
        FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t cap = 0;
        if (!f || getdelim(&text, &cap, '\0', f) < 0)
                abort();
        fclose(f);
        *len = strlen(text);
        return text;
}

/* ---- the helper's CA (tls/runca.c) and trust files (trustfmt.c) ---------- */

/* A CA made by runca_new for `hosts`, imported by the module (as an egress
 * process imports the helper's export); *der its certificate. NULL if
 * either fails. */
static struct rf_tls_ca *runca_imported(unsigned char **der, size_t *der_len)
{
        static unsigned char ex[RF_TLS_CA_EXPORT_MAX];
        size_t ex_len = 0;
        struct rf_tls_ca *ca = NULL;
        int r = runca_new(hosts, 2, 3600, time(NULL), der, der_len, ex, sizeof ex, &ex_len);
        is_int(r, 0, "runca: a CA for two hosts, one hour, without OpenSSL");
        if (r == 0)
                is_int(vt->ca_import(ex, ex_len, &ca), 0,
                       "runca: the module imports its export (certificate parsed, both keys "
                       "checked as pairs, the CA key the certificate's)");
        explicit_bzero(ex, sizeof ex);
        return ca;
}

static void test_runca(const unsigned char *der, size_t der_len)
{
        static unsigned char ex[RF_TLS_CA_EXPORT_MAX];
        const char *const bad_ip[] = {"10.0.0.1"};
        const char *const bad_chars[] = {"api.example.test,DNS:evil.test"};
        unsigned char *d = NULL;
        size_t dl = 0, el = 0;
        time_t now = time(NULL);
        is_int(runca_new(bad_ip, 1, 3600, now, &d, &dl, ex, sizeof ex, &el), -EINVAL,
               "runca refuses an IP literal as a host");
        is_int(runca_new(bad_chars, 1, 3600, now, &d, &dl, ex, sizeof ex, &el), -EINVAL,
               "runca refuses a host with ',' and ':'");
        is_int(runca_new(hosts, 0, 3600, now, &d, &dl, ex, sizeof ex, &el), -EINVAL,
               "runca needs a host");
        is_int(runca_new(hosts, 2, 0, now, &d, &dl, ex, sizeof ex, &el), -EINVAL,
               "runca needs a lifetime");
        is_int(runca_new(hosts, 2, 3600, now, &d, &dl, ex, 100, &el), -ENOBUFS,
               "runca: an export buffer too small is -ENOBUFS");
        ok(el > 100 && el <= RF_TLS_CA_EXPORT_MAX, "... with the size it needs (%zu)", el);

        const unsigned char *q = der;
        X509 *x = d2i_X509(NULL, &q, (long)der_len);
        ok(x && q == der + der_len, "runca's certificate is one DER certificate (%zu bytes)",
           der_len);
        if (!x)
                return;
        unsigned char *re = NULL;
        int rl = i2d_X509(x, &re);
        ok(rl == (int)der_len && memcmp(re, der, der_len) == 0,
           "... in DER: OpenSSL re-encodes it to the same bytes");
        OPENSSL_free(re);
        is_int(X509_get_signature_nid(x), NID_ecdsa_with_SHA256, "... signed ecdsa-with-SHA256");
        is_int(X509_verify(x, X509_get0_pubkey(x)), 1, "... and the signature verifies");
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdl = 0;
        const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(x);
        ok(ski && X509_pubkey_digest(x, EVP_sha1(), md, &mdl) == 1 &&
                   (unsigned)ASN1_STRING_length(ski) == mdl &&
                   memcmp(ASN1_STRING_get0_data(ski), md, mdl) == 0,
           "... subjectKeyIdentifier = SHA-1 of the key (OpenSSL's \"hash\")");
        char subj[128] = "", iss[128] = "";
        X509_NAME_oneline(X509_get_subject_name(x), subj, sizeof subj);
        X509_NAME_oneline(X509_get_issuer_name(x), iss, sizeof iss);
        is_str(subj, "/O=ringfence/CN=ringfence run CA", "... subject as ca_new's");
        is_str(iss, subj, "... self-issued");
        ok(X509_get_extension_flags(x) & EXFLAG_CA && X509_get_pathlen(x) == 0,
           "... basicConstraints CA:TRUE, pathlen 0");
        ok(X509_get_key_usage(x) == (KU_KEY_CERT_SIGN | KU_CRL_SIGN),
           "... keyUsage keyCertSign, cRLSign");
        X509_free(x);

        /* a GeneralizedTime from 2050 on (X.509's rule, as X509_gmtime_adj) */
        time_t late = (time_t)2524608000; /* 2050-01-01 */
        is_int(runca_new(hosts, 1, 86400, late, &d, &dl, ex, sizeof ex, &el), 0,
               "runca: a CA valid from 2050");
        q = d;
        x = d ? d2i_X509(NULL, &q, (long)dl) : NULL;
        ok(x && ASN1_STRING_type(X509_get0_notAfter(x)) == V_ASN1_GENERALIZEDTIME &&
                   ASN1_STRING_type(X509_get0_notBefore(x)) == V_ASN1_UTCTIME,
           "... notBefore (2049-12-31) a UTCTime, notAfter a GeneralizedTime");
        int day = 0, sec = 0;
        if (x)
                ASN1_TIME_diff(&day, &sec, X509_get0_notBefore(x), X509_get0_notAfter(x));
        is_int(day * 86400L + sec, 86400 + 60, "... one minute back to one day on");
        X509_free(x);
        free(d);
        explicit_bzero(ex, sizeof ex);

        /* the store's MAC: nettle's PKCS#12 KDF and HMAC against OpenSSL's */
        unsigned char salt[TRUST_P12_SALT_LEN] = {1, 2, 3, 4, 5, 6, 7, 8}, key[32], want[32],
                      got[32];
        unsigned int wl = 0;
        const unsigned char data[] = "the authenticated safe";
        bool same = true;
        static const unsigned iters[] = {1, 2, 64, TRUST_P12_ITER};
        for (size_t ii = 0; ii < ARRAY_SIZE(iters); ii++) {
                unsigned iter = iters[ii];
                for (size_t pl = 1; pl <= 70; pl += 23) {
                        char pw[80];
                        for (size_t i = 0; i < pl; i++)
                                pw[i] = (char)('a' + (i * 7 + iter) % 26);
                        pw[pl] = '\0';
                        same &= PKCS12_key_gen_utf8_ex(pw, (int)pl, salt, sizeof salt,
                                                       PKCS12_MAC_ID, (int)iter, sizeof key, key,
                                                       EVP_sha256(), NULL, NULL) == 1 &&
                                HMAC(EVP_sha256(), key, sizeof key, data, sizeof data, want, &wl) &&
                                runca_p12_mac(pw, salt, sizeof salt, iter, data, sizeof data, got,
                                              NULL) == 0 &&
                                memcmp(want, got, sizeof got) == 0;
                }
        }
        ok(same,
           "runca_p12_mac = OpenSSL's PKCS12 KDF (ID 3, SHA-256) + HMAC-SHA256 "
           "(1, 2, 64 and %d iterations, passwords of 1..70 characters)",
           TRUST_P12_ITER);
        is_int(runca_p12_mac("", salt, sizeof salt, 1, data, 1, got, NULL), -EINVAL,
               "... an empty password is refused");
        is_int(runca_p12_mac("caf\xc3\xa9", salt, sizeof salt, 1, data, 1, got, NULL), -EINVAL,
               "... a non-ASCII one too");
}

/* The helper's trust files from runca's certificate: the PEM equals the
 * DER, the bundle is the host's text + the CA, the store passes check_p12
 * (keytool included) with nettle's MAC. */
static void test_runca_files(const unsigned char *der, size_t der_len, const char *bundle)
{
        char *pem = NULL, *b = NULL;
        size_t pl = 0, bl = 0;
        is_int(trust_pem_cert(der, der_len, &pem, &pl), 0, "trustfmt: the CA as PEM");
        X509 *x = pem ? pem_x509(pem) : NULL;
        unsigned char *re = NULL;
        int rl = x ? i2d_X509(x, &re) : -1;
        ok(rl == (int)der_len && memcmp(re, der, der_len) == 0 && pl == strlen(pem),
           "... OpenSSL reads it back to the same DER");
        OPENSSL_free(re);
        X509_free(x);
        unsigned char salt[TRUST_P12_SALT_LEN] = {8, 7, 6, 5, 4, 3, 2, 1}, *p12 = NULL;
        size_t p12_len = 0;
        is_int(trust_p12(der, der_len, NULL, "changeit", salt, runca_p12_mac, NULL, &p12, &p12_len),
               0, "trustfmt: a PKCS12 store of runca's CA alone, nettle's MAC");
        if (p12)
                check_p12(p12, p12_len, 1, NULL, "runca's CA alone (nettle's MAC)");
        free(p12);
        if (!bundle) {
                skip("no host bundle: the helper's bundle and store with the host's roots");
                free(pem);
                return;
        }
        size_t tl = 0;
        char *text = read_text(bundle, &tl);
        struct trust_certs host;
        int n = trust_certs_load(text, tl, &host);
        ok(n > 0, "trustfmt: the host bundle's blocks (%d)", n);
        is_int(trust_bundle_join(text, tl, pem, pl, &b, &bl), 0, "trustfmt: the run's bundle");
        ok(b && bl > tl + pl && memcmp(b, text, tl) == 0 && strcmp(b + bl - pl, pem) == 0,
           "... the host's text, then the CA");
        free(b);
        is_int(trust_p12(der, der_len, &host, "changeit", salt, runca_p12_mac, NULL, &p12,
                         &p12_len),
               0, "trustfmt: a store of runca's CA + the host's roots, nettle's MAC");
        char what[64];
        snprintf(what, sizeof what, "runca's CA + %d host roots (nettle's MAC)", n);
        if (p12)
                check_p12(p12, p12_len, n + 1, NULL, what);
        free(p12);
        trust_certs_free(&host);
        free(text);
        free(pem);
}

/* The run's trust files as init puts them together from what trust_make
 * made (sandbox/trustfiles.h), each read back into memory. */
struct tfiles {
        unsigned char *data[TRUST_FILES]; /* NULL: absent */
        size_t len[TRUST_FILES];
};

static void tfiles_free(struct tfiles *tf)
{
        for (size_t i = 0; i < TRUST_FILES; i++)
                free(tf->data[i]);
        *tf = (struct tfiles){0};
}

/* A range of fd, appended to buf at *at: 0 or -1. */
static int range_read(int fd, uint64_t off, uint64_t len, unsigned char *buf, size_t *at)
{
        if (len && fd < 0)
                return -1;
        for (uint64_t got = 0; got < len;) {
                ssize_t k = pread(fd, buf + *at, (size_t)(len - got), (off_t)(off + got));
                if (k <= 0)
                        return -1;
                got += (uint64_t)k;
                *at += (size_t)k;
        }
        return 0;
}

static int made_files(const struct trust_made *m, struct tfiles *tf)
{
        unsigned char hdr[TRUSTFILES_HDR];
        struct trustfiles t;
        size_t size = 0;
        int src[TRUST_SOURCES] = {-1, m->bundle, m->jvm};
        *tf = (struct tfiles){0};
        if (memfd_sealed_size(m->files, TRUSTFILES_HDR + 3 * PLAN_TLS_FILE_MAX, &size) < 0 ||
            pread(m->files, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
            trustfiles_parse(hdr, size, PLAN_TLS_FILE_MAX, &t) < 0)
                return -1;
        for (size_t i = 0; i < TRUST_FILES; i++) {
                const struct trustfile *f = &t.f[i];
                size_t at = 0;
                if (!f->len)
                        continue;
                if (!(tf->data[i] = malloc(f->len + 1)) ||
                    range_read(m->files, f->pre_off, f->pre, tf->data[i], &at) < 0 ||
                    range_read(src[f->src], f->src_off, f->src_len, tf->data[i], &at) < 0 ||
                    range_read(m->files, f->post_off, f->post, tf->data[i], &at) < 0 ||
                    at != f->len) {
                        tfiles_free(tf);
                        return -1;
                }
                tf->data[i][at] = '\0'; /* the PEM files read as strings */
                tf->len[i] = at;
        }
        return 0; /* the store's MAC came made: init only copies, as here */
}

/* The cache's entries with this prefix (their names into names[max]):
 * how many. */
static size_t cache_entries(const char *dir, const char *prefix, char names[][256], size_t max)
{
        size_t n = 0;
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
                if (!strncmp(e->d_name, prefix, strlen(prefix)) && n < max)
                        snprintf(names[n++], 256, "%s", e->d_name);
        if (d)
                closedir(d);
        return n;
}

/* One trust_make for the bundle at `path`: 0 with *m (its fds open) and
 * the export imported into *ca, or the error. */
static int make_once(const char *path, const char *upstream, const char *state,
                     struct trust_made *m, struct rf_tls_ca **ca, char *why, size_t why_len)
{
        static unsigned char ex[RF_TLS_CA_EXPORT_MAX];
        int b = open(path, O_RDONLY | O_CLOEXEC),
            u = upstream ? open(upstream, O_RDONLY | O_CLOEXEC) : -1;
        struct trust_job j = {.hosts = hosts,
                              .n_hosts = 2,
                              .bundle = b,
                              .upstream = u,
                              .upstream_path = upstream,
                              .lifetime_s = 3600,
                              .java = true,
                              .bound = PLAN_TLS_FILE_MAX,
                              .cache = trust_cache_open(state)};
        int r = b < 0 ? -errno : trust_make(&j, ex, TRUST_EXPORT_BOUND(2, 35), m, why, why_len);
        if (j.cache >= 0)
                close(j.cache);
        if (r == 0 && ca && vt->ca_import(ex, m->ca_len, ca) < 0)
                r = -EPROTO;
        explicit_bzero(ex, sizeof ex);
        if (b >= 0)
                close(b);
        if (u >= 0)
                close(u);
        return r;
}

static void made_close(struct trust_made *m)
{
        int *fds[] = {&m->files, &m->module, &m->bundle, &m->jvm, &m->upstream};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if (*fds[i] >= 0)
                        close(*fds[i]);
}

/* trust_make (tls/trustmake.h): what the supervisor makes for a run, its
 * cache of the host's part, and that a cached run gets the same trust. */
static void test_trustmake(const char *bundle)
{
        char state[1024], cdir[2048], copy[2048], why[RF_ERROR_MSG_MAX], names[4][256];
        struct trust_made m1, m2, m3;
        struct rf_tls_ca *ca = NULL;
        struct tfiles f1 = {0}, f2 = {0};
        if (!bundle) {
                skip("no host bundle: trust_make");
                return;
        }
        snprintf(state, sizeof state, "%s/state", tmpdir);
        snprintf(cdir, sizeof cdir, "%s/" TRUST_CACHE_DIR, state);
        snprintf(copy, sizeof copy, "%s/bundle-copy.crt", tmpdir);
        mkdir(state, 0700);
        /* copies of the host's bundle: each a bundle of another identity
         * (what an update of the host's certificates makes), all settled
         * (changed more than TRUST_CACHE_SETTLE_S ago: only such a file is
         * cached) but the last, made after the wait */
        char copies[7][2048];
        for (int k = 0; k < 7; k++) {
                snprintf(copies[k], sizeof copies[k], "%s/bundle-%d.crt", tmpdir, k);
                if (k == 6)
                        sleep(3);
                int in = open(bundle, O_RDONLY | O_CLOEXEC),
                    out = open(copies[k], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                struct stat bst;
                if (in < 0 || out < 0 || fstat(in, &bst) < 0 ||
                    fd_copy_all(in, 0, out, (size_t)bst.st_size) < 0)
                        abort();
                close(in);
                close(out);
        }
        snprintf(copy, sizeof copy, "%s", copies[0]);

        why[0] = '\0';
        is_int(make_once(copy, NULL, state, &m1, &ca, why, sizeof why), 0,
               "trust_make: a run's CA and trust files %s", why);
        ok(!m1.cached, "... the first for this bundle: its host part made, not cached");
        ok(ca != NULL, "... the CA's export imports into the module (both keys pairs)");
        if (ca)
                vt->ca_free(ca);
        ca = NULL;
        char mname[4][256], bname[4][256];
        is_int(cache_entries(cdir, TRUST_CACHE_JVM, names, 4), 1,
               "... one JVM entry in the state dir's cache");
        is_int(cache_entries(cdir, TRUST_CACHE_BUNDLE, bname, 4), 1, "... one bundle entry");
        is_int(cache_entries(cdir, TRUST_CACHE_MODULE, mname, 4), 1, "... one module entry");
        ok(strstr(mname[0], RF_TLS_VTABLE_SYMBOL) != NULL,
           "... named with this binary's module ABI (%s)", mname[0]);
        struct stat cst;
        char entry[4096];
        snprintf(entry, sizeof entry, "%s/%s", cdir, names[0]);
        ok(stat(cdir, &cst) == 0 && (cst.st_mode & 0777) == 0700 && stat(entry, &cst) == 0 &&
                   (cst.st_mode & 0777) == 0600,
           "... the cache dir 0700, the entry 0600");
        struct stat mst, sst;
        ok(fstat(m1.module, &mst) == 0 && S_ISREG(mst.st_mode) &&
                   rf_tls_module_path(entry, sizeof entry) == 0 && stat(entry, &sst) == 0 &&
                   mst.st_size == sst.st_size && m1.upstream < 0,
           "... the module: a cache file as large as the module, no upstream CA file");
        int msnap = rf_tls_snapshot(m1.module, RF_TLS_MODULE_MAX, "m");
        ok(msnap >= 0 && rf_tls_module_version(msnap) == 0,
           "... which snapshots to this binary's module version");
        if (msnap >= 0)
                close(msnap);
        snprintf(entry, sizeof entry, "%s/%s", cdir, names[0]);
        ok(made_files(&m1, &f1) == 0,
           "... the trust files parse and can be put together (trustfiles.h)");
        ok(m1.jvm >= 0 && m1.bundle >= 0,
           "... the host's parts are handed on for init to copy (the bundle, the store's bags)");

        /* what the files hold, read with OpenSSL */
        size_t tl = 0;
        char *text = read_text(bundle, &tl);
        struct trust_certs host;
        int n = trust_certs_load(text, tl, &host);
        X509 *runca = f1.data[TRUST_CA] ? pem_x509((const char *)f1.data[TRUST_CA]) : NULL;
        ok(runca != NULL, "... the run CA's PEM parses");
        ok(f1.data[TRUST_BUNDLE] && f1.len[TRUST_BUNDLE] > tl + f1.len[TRUST_CA] &&
                   memcmp(f1.data[TRUST_BUNDLE], text, tl) == 0 &&
                   memcmp(f1.data[TRUST_BUNDLE] + f1.len[TRUST_BUNDLE] - f1.len[TRUST_CA],
                          f1.data[TRUST_CA], f1.len[TRUST_CA]) == 0,
           "... the bundle: the host's text byte for byte, then the CA");
        char what[64];
        snprintf(what, sizeof what, "trust_make's store, made (%d host roots)", n);
        if (f1.data[TRUST_JAVA])
                check_p12(f1.data[TRUST_JAVA], f1.len[TRUST_JAVA], n + 1, NULL, what);
        else
                ok(false, "... a JVM store");
        /* the entry is the host's bags as trustfmt makes them */
        unsigned char *bags = NULL;
        size_t bags_len = 0;
        size_t cl = stat(entry, &cst) == 0 ? (size_t)cst.st_size : 0;
        unsigned char *cached = malloc(cl + 1);
        int cfd = open(entry, O_RDONLY | O_CLOEXEC);
        if (!cached || cfd < 0 || pread(cfd, cached, cl, 0) != (ssize_t)cl)
                cl = 0;
        if (cfd >= 0)
                close(cfd);
        int br = trust_p12_bags(&host, &bags, &bags_len);
        ok(br == 0 && cl == TRUST_CACHE_JVM_HDR + bags_len &&
                   memcmp(cached, TRUST_CACHE_JVM_MAGIC, 8) == 0 &&
                   memcmp(cached + TRUST_CACHE_JVM_HDR, bags, bags_len) == 0,
           "... the JVM entry: its header, then the host's bags byte for byte (%zu of %zu bytes)",
           cl, TRUST_CACHE_JVM_HDR + bags_len);
        free(cached);
        free(bags);

        /* again: the host's part from the cache, the same trust but the CA */
        is_int(make_once(copy, NULL, state, &m2, NULL, why, sizeof why), 0,
               "trust_make again for the same bundle");
        ok(m2.cached, "... its host part from the cache");
        ok(made_files(&m2, &f2) == 0, "... the trust files parse");
        X509 *runca2 = f2.data[TRUST_CA] ? pem_x509((const char *)f2.data[TRUST_CA]) : NULL;
        ok(runca && runca2 && X509_cmp(runca, runca2) != 0,
           "... a CA of its own (each run's CA is new)");
        ok(f2.len[TRUST_BUNDLE] - f2.len[TRUST_CA] == f1.len[TRUST_BUNDLE] - f1.len[TRUST_CA] &&
                   memcmp(f2.data[TRUST_BUNDLE], f1.data[TRUST_BUNDLE],
                          f1.len[TRUST_BUNDLE] - f1.len[TRUST_CA]) == 0,
           "... the same host bundle before it (%zu-%zu, %zu-%zu)", f2.len[TRUST_BUNDLE],
           f2.len[TRUST_CA], f1.len[TRUST_BUNDLE], f1.len[TRUST_CA]);
        snprintf(what, sizeof what, "trust_make's store, cached (%d host roots)", n);
        if (f2.data[TRUST_JAVA])
                check_p12(f2.data[TRUST_JAVA], f2.len[TRUST_JAVA], n + 1, NULL, what);
        X509_free(runca2);
        tfiles_free(&f2);
        made_close(&m2);

        /* an entry others may write is not used: made anew, and replaced */
        chmod(entry, 0666);
        is_int(make_once(copy, NULL, state, &m2, NULL, why, sizeof why), 0,
               "trust_make with a world-writable cache entry");
        ok(!m2.cached, "... that entry is not used");
        ok(stat(entry, &cst) == 0 && (cst.st_mode & 0777) == 0600,
           "... and is replaced by one of mode 0600");
        made_close(&m2);

        /* the bundle changes (another identity): a new entry beside */
        snprintf(copy, sizeof copy, "%s", copies[1]);
        is_int(make_once(copy, NULL, state, &m3, NULL, why, sizeof why), 0,
               "trust_make after the bundle changed");
        ok(!m3.cached, "... its host part made anew");
        char bname2[8][256];
        is_int(cache_entries(cdir, TRUST_CACHE_JVM, bname2, 8), 2,
               "... a second JVM entry beside the first");
        ok(cache_entries(cdir, TRUST_CACHE_BUNDLE, bname2, 8) == 2 &&
                   (strcmp(bname[0], bname2[0]) != 0 || strcmp(bname[0], bname2[1]) != 0),
           "... and a second bundle entry, under a new name");
        made_close(&m3);
        /* four more changes: the cache keeps the four newest of each kind */
        for (int k = 2; k < 6; k++) {
                usleep(20000); /* past the filesystem clock's granularity */
                snprintf(copy, sizeof copy, "%s", copies[k]);
                if (make_once(copy, NULL, state, &m3, NULL, why, sizeof why) == 0)
                        made_close(&m3);
        }
        is_int(cache_entries(cdir, TRUST_CACHE_JVM, bname2, 8), 4,
               "... after four more bundle changes: the four newest JVM entries kept");
        is_int(cache_entries(cdir, TRUST_CACHE_BUNDLE, bname2, 8), 4,
               "... and the four newest bundle entries");
        is_int(make_once(copy, NULL, state, &m3, NULL, why, sizeof why), 0,
               "trust_make for the bundle as it is now");
        ok(m3.cached, "... from the cache");
        made_close(&m3);
        /* a bundle changed just now is not cached (a rewrite within the
         * filesystem clock's tick would keep its identity) */
        snprintf(copy, sizeof copy, "%s", copies[6]);
        ok(make_once(copy, NULL, state, &m3, NULL, why, sizeof why) == 0 && !m3.cached,
           "trust_make for a bundle changed just now: made");
        made_close(&m3);
        ok(make_once(copy, NULL, state, &m3, NULL, why, sizeof why) == 0 && !m3.cached,
           "... and again made, not cached (settled only %d s after its change)", 2);
        made_close(&m3);

        /* no state dir: made every time, never cached */
        is_int(make_once(copy, NULL, NULL, &m3, NULL, why, sizeof why), 0,
               "trust_make without a state dir");
        ok(!m3.cached, "... nothing cached");
        made_close(&m3);

        /* an upstream CA file without a certificate: refused, with why */
        char nocert[4096];
        snprintf(nocert, sizeof nocert, "%s/nocert.pem", tmpdir);
        FILE *f = fopen(nocert, "we");
        if (!f)
                abort();
        fputs("not a certificate\n", f);
        fclose(f);
        is_int(make_once(copy, nocert, state, &m3, NULL, why, sizeof why), -EBADMSG,
               "trust_make with an upstream CA file without a certificate: -EBADMSG");
        ok(strstr(why, "upstream CA file ") && strstr(why, "/nocert.pem: no certificate in it"),
           "... saying which and why (%s)", why);
        /* a bundle without one */
        is_int(make_once(nocert, NULL, state, &m3, NULL, why, sizeof why), -EBADMSG,
               "trust_make with a host bundle without a certificate: -EBADMSG");
        ok(strstr(why, "cannot read the host's CA bundle ") &&
                   strstr(why, ": no certificate in it"),
           "... saying why (%s)", why);

        X509_free(runca);
        tfiles_free(&f1);
        made_close(&m1);
        trust_certs_free(&host);
        free(text);
        unlink(nocert);
        for (int k = 0; k < 7; k++)
                unlink(copies[k]);
        DIR *d = opendir(cdir);
        for (struct dirent *e; d && (e = readdir(d));)
                if (e->d_name[0] != '.') {
                        snprintf(entry, sizeof entry, "%s/%s", cdir, e->d_name);
                        unlink(entry);
                }
        if (d)
                closedir(d);
        rmdir(cdir);
        rmdir(state);
}

/* Only the operations the egress process runs after lockdown, behind a
 * marker, for `strace -f` (docs/TLS.md lists the result). */
static int syscalls_mode(const char *bundle)
{
        struct rf_tls_trust *t;
        struct rf_tls_ca *ca;
        EVP_PKEY *cak = EVP_EC_gen("P-256"), *k = EVP_EC_gen("P-256");
        X509 *testca = make_cert("ringfence test CA", cak, NULL, NULL, true, -3600, 86400);
        struct upstream good = {make_cert("upstream.test", k, testca, cak, false, -3600, 86400), k};
        char reason[RF_TLS_REASON_MAX];
        if (!mkdtemp(tmpdir))
                return 1;
        char *capath = write_pem("test-ca.pem", testca);
        int lr = vt->trust_load(bundle, capath, &t);
        unlink(capath);
        free(capath);
        rmdir(tmpdir);
        if (lr < 0)
                return 1;
        /* the egress process is forked from the supervisor after the
         * module's init: OpenSSL sees a new pid and reseeds */
        pid_t pid = fork();
        if (pid < 0)
                return 1;
        if (pid > 0) {
                int st;
                waitpid(pid, &st, 0);
                vt->trust_free(t);
                X509_free(good.cert);
                X509_free(testca);
                EVP_PKEY_free(k);
                EVP_PKEY_free(cak);
                return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        }
        close(-77); /* marker */
        if (vt->ca_new(hosts, 2, 3600, &ca) < 0)
                return 1;
        SSL_CTX *cctx = client_ctx_trusting(ca);
        int r = server_session(ca, cctx, "api.example.test", NULL, 0, PRE_NONE, true);
        if (r == 0)
                r = server_session(ca, cctx, "api.example.test", NULL, 0, PRE_ALL, true);
        if (r == 0)
                r = server_session(ca, cctx, "api.example.test", NULL, 0, PRE_PART, true);
        SSL_CTX_free(cctx);
        if (r == 0)
                r = client_session(t, &good, reason, sizeof reason, false);
        vt->ca_free(ca);
        vt->trust_free(t);
        _exit(r == 0 ? 0 : 1);
}

int main(int argc, char **argv)
{
        const char *bundle = "/etc/ssl/certs/ca-certificates.crt";
        struct rf_tls_module m;
        struct rf_tls_ca *ca;

        int r = rf_tls_load(&m);
        if (r < 0) {
                printf("Bail out! cannot load the module: %s\n", strerror(-r));
                return 1;
        }
        vt = m.vt;
        if (argc > 1 && strcmp(argv[1], "--syscalls") == 0)
                return syscalls_mode(bundle);

        if (!mkdtemp(tmpdir)) {
                printf("Bail out! mkdtemp\n");
                return 1;
        }
        chmod(tmpdir, 0700);
        /* first: nothing of OpenSSL used yet but the module's init() */
        if (access(bundle, R_OK) == 0)
                test_seccomp(bundle);
        test_loader();

        const char *const bad_ip[] = {"10.0.0.1"};
        const char *const bad_chars[] = {"api.example.test,DNS:evil.test"};
        is_int(vt->ca_new(bad_ip, 1, 3600, &ca), -EINVAL, "CA refuses an IP literal as a host");
        is_int(vt->ca_new(bad_chars, 1, 3600, &ca), -EINVAL, "CA refuses a host with ',' and ':'");
        is_int(vt->ca_new(hosts, 0, 3600, &ca), -EINVAL, "CA needs at least one host");
        is_int(vt->ca_new(hosts, 2, 0, &ca), -EINVAL, "CA needs a lifetime");

        time_t t0 = time(NULL);
        is_int(vt->ca_new(hosts, 2, 3600, &ca), 0, "per-run CA for two hosts, one hour");
        test_ca(ca, t0);
        test_leaves(ca);
        test_server(ca);
        test_export(ca);
        if (access(bundle, R_OK) == 0) {
                test_client(ca, bundle);
                test_bundle(ca, bundle);
        } else {
                skip("no host bundle at /etc/ssl/certs/ca-certificates.crt");
        }
        test_pkcs12(ca, access(bundle, R_OK) == 0 ? bundle : NULL);
        test_real_clients(ca, access(bundle, R_OK) == 0 ? bundle : NULL);
        vt->ca_free(ca);

        /* the same batteries on the helper's CA (nettle), as imported */
        unsigned char *der = NULL;
        size_t der_len = 0;
        t0 = time(NULL);
        ca = runca_imported(&der, &der_len);
        if (ca) {
                test_ca(ca, t0);
                test_leaves(ca);
                test_server(ca);
                test_runca(der, der_len);
                test_runca_files(der, der_len, access(bundle, R_OK) == 0 ? bundle : NULL);
                test_trustmake(access(bundle, R_OK) == 0 ? bundle : NULL);
                test_real_clients(ca, access(bundle, R_OK) == 0 ? bundle : NULL);
                vt->ca_free(ca);
        }
        free(der);
        rf_tls_unload(&m);
        rmdir(tmpdir);
        return done();
}
