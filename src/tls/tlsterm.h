/*
 * tlsterm.h — the TLS-termination module's interface (one versioned vtable).
 *
 * What it is for: a run with a credential injection has its connections to
 * the injection hosts terminated by the egress process, which presents a leaf
 * certificate from a per-run CA toward the run and opens its own verified TLS
 * connection upstream (docs/TLS.md). That needs OpenSSL; the ringfence binary
 * links only libc, and runs without injection must not pay for OpenSSL. So the
 * TLS code lives in a shared object of its own, ringfence-tls.so (linked with
 * libssl/libcrypto), which exports exactly one symbol, RF_TLS_VTABLE_SYMBOL: a
 * `const struct rf_tls_vtable`. The egress process loads it with tls-load.c
 * (dlopen of a sealed snapshot of what the supervisor took of the file at a
 * path fixed at build time: tls/trustmake.h) before its lockdown, and after it, without open/exec,
 * only calls through it.
 *
 * Contract common to every entry:
 *   - returns >= 0 on success and -errno on failure (never sets errno for
 *     the caller to read); strings returned through out-parameters are
 *     malloc'ed and owned by the caller (free()).
 *   - handles are opaque and owned by the caller; every *_free accepts NULL.
 *   - no global state but OpenSSL's own (initialised by init()); every handle
 *     is independent; nothing is thread-safe (the egress process is one
 *     thread).
 *   - nothing logs; failures a peer can cause carry a reason string.
 *   - files are read only by init-time calls (trust_load): everything else
 *     works in memory, so it may run after the egress process's lockdown.
 *   - nothing here is on a run's start path: the supervisor makes the run
 *     CA and trust files without OpenSSL (runca.h, trustfmt.h) and hands
 *     the CA over as ca_export's bytes, which each egress process imports
 *     (ca_import) after init() and trust_load(). ca_new, ca_export,
 *     trust_bundle, ca_pem and pkcs12 make the same objects with OpenSSL
 *     (tests compare the two). trust_load does no X.509 parsing of the
 *     host's roots and no entry builds a TLS context before the first
 *     client_new / server_new (docs/TLS.md, "Cost at a run's start").
 *
 * Syscalls the egress process's seccomp filter must allow for the
 * post-lockdown entries: see RF_TLS_SECCOMP_NOTE below and docs/TLS.md.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bump when the vtable's layout or any entry's contract changes. */
#define RF_TLS_ABI_VERSION   3
#define RF_TLS_VTABLE_SYMBOL "rf_tls_vtable_v3"

/* Named limits (all of them are sizes a policy or a peer influences). */
#define RF_TLS_MAX_HOSTS      64               /* injection hosts in one run CA */
#define RF_TLS_HOST_MAX       253              /* a DNS name, without the final dot */
#define RF_TLS_LEAF_CACHE_MAX RF_TLS_MAX_HOSTS /* leaves kept per CA (one per host) */
#define RF_TLS_BUNDLE_MAX     (8u << 20)       /* a trust file read by trust_load */
#define RF_TLS_REASON_MAX     160              /* a failure's reason string */
#define RF_TLS_CA_EXPORT_MAX  (64u << 10) /* ca_export's bytes (a CA of 64 long names: ~35 KiB) */

/*
 * ca_export's layout (ca_import reads exactly this, nothing more, nothing
 * less): the magic (8 bytes, the ABI version in its last byte); the CA's
 * private scalar and the leaf key's (RF_TLS_CA_KEY_LEN bytes each,
 * big-endian, at fixed offsets); the leaf key's public point (65 bytes,
 * uncompressed); the certificate's DER (a 4-byte big-endian length, then
 * the bytes); the hosts (a count byte, then per host a length byte and the
 * name). The CA's public key is the certificate's.
 */
#define RF_TLS_CA_EXPORT_MAGIC    "rfca\0\0\0\3"
#define RF_TLS_CA_KEY_LEN         32
#define RF_TLS_CA_EXPORT_CA_KEY   8  /* offset of the CA's private scalar */
#define RF_TLS_CA_EXPORT_LEAF_KEY 40 /* offset of the leaf key's */

/*
 * Syscalls the post-lockdown entries make (ca_new, ca_export, ca_import,
 * leaf issuance, server and client sessions, read/write/shutdown, *_free;
 * including the work deferred
 * to first use: the trust's certificates parsed into the verification store
 * by the first client_new, a CA's server context made by its first
 * server_new, OpenSSL's error strings loaded by the first failure that
 * needs a reason), measured with strace over
 * `test_tlsterm --syscalls` (the operations in a child forked after init(),
 * as the egress process is) and enforced by test_tlsterm, which runs them
 * under a seccomp allowlist of exactly these (and kills on anything else):
 *   getrandom        OpenSSL reseeds its DRBG in a forked child (it notices
 *                    the new pid); without it the child dies (tested)
 *   getpid           OpenSSL's fork detection, on every RAND call
 *   read, write      the session's socket (SSL_set_fd: no send/recv)
 *   brk, mmap (never PROT_EXEC), munmap, mremap, madvise   malloc
 *   futex            OpenSSL's (uncontended) locks
 * (conn_free never closes the borrowed fd: no close.)
 * Every one of them is already in the egress process's filter
 * (src/egress/egress.c egress_filter): wiring the module in needs no new
 * syscall, PROVIDED init() and trust_load() run before the lockdown (they
 * open files: the CA bundles, and glibc's /etc/localtime at the first
 * gmtime_r, which init() triggers on purpose).
 */
#define RF_TLS_SECCOMP_NOTE "getrandom getpid read write brk mmap munmap mremap madvise futex"

struct rf_tls_trust; /* the host's trust store (+ --upstream-ca), parsed */
struct rf_tls_ca;    /* a per-run CA: key, certificate, leaf cache, server context */
struct rf_tls_conn;  /* one TLS session (server or client side) on one fd */

struct rf_tls_vtable {
        uint32_t abi_version; /* RF_TLS_ABI_VERSION */
        uint32_t size;        /* sizeof(struct rf_tls_vtable) */

        /* Initialise OpenSSL (no config file is read: the host's openssl.cnf
         * cannot weaken the settings below), seed its DRBG and fetch the
         * algorithms ca_new uses. OpenSSL's error strings are not loaded
         * here but by the first failure that needs a reason. Call once,
         * before lockdown. 0 or -EIO. */
        int (*init)(void);

        /* Read the host's bundle (PEM file, e.g.
         * /etc/ssl/certs/ca-certificates.crt) and optionally an extra CA file
         * (--upstream-ca; NULL for none): the trust for upstream
         * connections. Files larger than RF_TLS_BUNDLE_MAX are refused
         * (-EFBIG). The files are checked, not parsed: each must hold at
         * least one certificate block (BEGIN/END CERTIFICATE, also X509
         * CERTIFICATE and TRUSTED CERTIFICATE) and every such block must
         * end, its base64 decode and begin with one DER SEQUENCE that fits
         * (else -EBADMSG); the certificates themselves are parsed into the
         * verification store by the first client_new (which fails with a
         * reason if one does not parse). Call before lockdown. The host
         * bundle's text is kept for trust_bundle(), its certificates' DER
         * for pkcs12(). */
        int (*trust_load)(const char *bundle_path, const char *extra_ca_path,
                          struct rf_tls_trust **ret);
        void (*trust_free)(struct rf_tls_trust *t);

        /* A per-run CA for `hosts` (1..RF_TLS_MAX_HOSTS DNS names: lowercase
         * letters, digits, '-', '.', no IP literals, each <= RF_TLS_HOST_MAX;
         * otherwise -EINVAL), valid from one minute ago for `lifetime_s`
         * seconds (1 .. 10 years, else -EINVAL). The ECDSA P-256 key is
         * generated in memory and leaves the handle only through ca_export
         * (freed and wiped by ca_free). The certificate carries basicConstraints CA:TRUE and
         * keyUsage keyCertSign (both critical) and a CRITICAL nameConstraints
         * permitting dNSName subtrees = `hosts` and excluding every IPv4 and
         * IPv6 address. A second P-256 key, the leaf key, is made here too
         * (one per run: see docs/TLS.md). -ENOMEM/-EIO on OpenSSL failure. */
        int (*ca_new)(const char *const *hosts, size_t n_hosts, uint64_t lifetime_s,
                      struct rf_tls_ca **ret);
        void (*ca_free)(struct rf_tls_ca *ca);

        /* The CA certificate as PEM (malloc'ed, NUL-terminated; *len without
         * the NUL). */
        int (*ca_pem)(const struct rf_tls_ca *ca, char **ret, size_t *len);

        /* The leaf for `name` (one of the CA's hosts, compared
         * case-insensitively; another name is -EPERM) as PEM: SAN dNSName =
         * name, EKU serverAuth, validity = the CA's. Issued once and cached
         * (at most RF_TLS_LEAF_CACHE_MAX). Used by server_new; exposed for
         * inspection and tests. */
        int (*leaf_pem)(struct rf_tls_ca *ca, const char *name, char **ret, size_t *len);

        /* The run's trust bundle: the host bundle's text followed by the run
         * CA's PEM (to become the run's /etc/ssl/certs/ca-certificates.crt). */
        int (*trust_bundle)(const struct rf_tls_trust *t, const struct rf_tls_ca *ca, char **ret,
                            size_t *len);

        /* A PKCS12 trust store (DER) for the JVM: the run CA as a trusted
         * certificate entry (alias "ringfence-run-ca") and, when `t` is not
         * NULL, every certificate of t's host bundle (--upstream-ca not
         * included) as one too (aliases "host-ca-N"), so the store can stand
         * in for the JVM's cacerts; each with Java's trusted-key-usage
         * attribute 2.16.840.1.113894.746875.1.1 = anyExtendedKeyUsage, no
         * key, certificates unencrypted, integrity MAC with `password`
         * (HMAC-SHA256, PKCS#12 KDF, 8-byte random salt, OpenSSL's default
         * iteration count PKCS12_DEFAULT_ITER). The host certificates go in
         * as the DER trust_load decoded from the bundle's text, unparsed.
         * -EINVAL without a password or with one over 1024 bytes; -EFBIG
         * for a store over 64 MiB (cannot happen below RF_TLS_BUNDLE_MAX).
         * *ret is malloc'ed. */
        int (*pkcs12)(const struct rf_tls_ca *ca, const struct rf_tls_trust *t,
                      const char *password, unsigned char **ret, size_t *len);

        /* Server side on a connected socket `fd` (non-blocking; borrowed,
         * never closed here) for `name` (one of the CA's hosts: the CONNECT
         * target or the captured connection's SNI). `pre[0..pre_len)` are
         * bytes already read from fd (the ClientHello the egress process
         * judged): the session reads them first, then the socket (copied
         * here; pre may be NULL when pre_len is 0; at most 64 KiB, else
         * -EINVAL). Renegotiation is refused on every session. Presents the leaf for
         * `name`; a ClientHello whose SNI names another host is refused
         * (unrecognized_name); no SNI is accepted. TLS 1.2 and 1.3; ALPN:
         * http/1.1 is selected, a client offering only other protocols is
         * refused (no_application_protocol). -EPERM for a name outside the
         * CA. The first server session of a CA makes its TLS server
         * context (memory only; -ENOMEM/-EIO if OpenSSL fails). The
         * handshake happens in handshake(). */
        int (*server_new)(struct rf_tls_ca *ca, int fd, const char *name, const void *pre,
                          size_t pre_len, struct rf_tls_conn **ret);

        /* Client side (upstream) on a connected socket `fd` (non-blocking;
         * borrowed) toward `host` (a DNS name as ca_new accepts them, any
         * case; an IP literal or other junk is -EINVAL): TLS >= 1.2, SNI =
         * host, ALPN http/1.1, OpenSSL security level 2, the peer's chain
         * verified against `t` and its name against `host` (no partial
         * wildcards). `t` must outlive the session. The first client_new on
         * `t` parses its certificates into the verification store (memory
         * only: after the lockdown is fine). If one of them does not parse,
         * this and every later client_new on `t` return -EBADMSG and, in
         * that case only, set *ret to a session that carries nothing but
         * the reason ("the host's CA bundle could not be read: ..." or "the
         * upstream CA file could not be read: ..."): reason() gives it,
         * handshake/read/write/shutdown return -EPROTO, pending() 0,
         * version() "", sni() NULL; free it with conn_free. */
        int (*client_new)(struct rf_tls_trust *t, int fd, const char *host,
                          struct rf_tls_conn **ret);

        /* Drive the handshake: 0 when complete; -EAGAIN when it waits for the
         * socket (wait for want()); -EKEYREJECTED when the client side refused
         * the peer's certificate; -ECONNRESET when the peer went away; -EPROTO
         * for any other TLS failure. After a failure reason() says why. */
        int (*handshake)(struct rf_tls_conn *c);

        /* Application data. read: > 0 bytes, 0 at the peer's close_notify,
         * -EAGAIN (wait for want()), -ECONNRESET (peer went away without
         * close_notify: a truncation), -EPROTO. write: > 0 bytes written (may
         * be short), -EAGAIN, -EPIPE, -EPROTO; after -EAGAIN retry with the
         * same bytes (same length or more). */
        ssize_t (*read)(struct rf_tls_conn *c, void *buf, size_t len);
        ssize_t (*write)(struct rf_tls_conn *c, const void *buf, size_t len);

        /* Bytes buffered inside the session (decrypted, or read ahead from
         * the socket and not yet decrypted: then 1): a poll loop must read
         * again before waiting on the socket. */
        size_t (*pending)(const struct rf_tls_conn *c);

        /* Send close_notify: 0 done, -EAGAIN to be called again, -EPIPE/-EPROTO. */
        int (*shutdown)(struct rf_tls_conn *c);

        /* POLLIN or POLLOUT: what the last -EAGAIN waits for. */
        short (*want)(const struct rf_tls_conn *c);

        /* The last failure's reason ("" if none): for a client-side
         * verification failure it starts with one of "certificate expired",
         * "certificate not yet valid", "self-signed certificate",
         * "hostname mismatch", "untrusted certificate", "certificate
         * rejected" and gives OpenSSL's wording in parentheses. Owned by c. */
        const char *(*reason)(const struct rf_tls_conn *c);

        /* The negotiated protocol version ("TLSv1.3") and the SNI the client
         * sent (server side; NULL if none). Owned by c. */
        const char *(*version)(const struct rf_tls_conn *c);
        const char *(*sni)(const struct rf_tls_conn *c);

        void (*conn_free)(struct rf_tls_conn *c);

        /* Test builds only (NULL otherwise): a leaf for ANY name under the CA,
         * bypassing the host check, so tests can show that the name
         * constraint alone makes a verifier refuse it. */
        int (*test_forge_leaf_pem)(struct rf_tls_ca *ca, const char *name, char **ret, size_t *len);
        /* Test builds only (NULL otherwise): a server session presenting such
         * a forged leaf for `name`, to see which real clients honour the
         * CA's name constraint. */
        int (*test_server_new_forged)(struct rf_tls_ca *ca, int fd, const char *name,
                                      struct rf_tls_conn **ret);

        /* ---- ABI 3 ---- */

        /* The CA as bytes another process rebuilds it from (ca_import;
         * layout: RF_TLS_CA_EXPORT_MAGIC above): its certificate, hosts and
         * both private keys. So the supervisor can hold the CA between the
         * egress processes it forks in memory of its own choosing (secret,
         * wiped in every fork) and ca_free the handle: then no OpenSSL
         * object of its heap holds a key. buf NULL or size too small:
         * -ENOBUFS with *len = the size needed, nothing written; else 0
         * with buf[0..*len) written. The private scalars go straight from
         * the keys into buf (no copy of them is left in this module's
         * memory). -EIO if OpenSSL fails. */
        int (*ca_export)(const struct rf_tls_ca *ca, unsigned char *buf, size_t size, size_t *len);

        /* A CA rebuilt from ca_export's bytes buf[0..len): the same
         * certificate (so the same validity and name constraint), hosts and
         * keys; no leaf issued yet, no server context; nothing generated.
         * Bytes that are not an export — wrong magic, a length that does
         * not fit, bytes left over, a host ca_new would refuse, a key not on
         * P-256 or whose private and public halves differ, a CA key that is
         * not the certificate's — are -EBADMSG; -ENOMEM/-EIO if OpenSSL
         * fails. buf is read only (the caller wipes it). Memory only: works
         * after the lockdown (the egress process calls it before). */
        int (*ca_import)(const unsigned char *buf, size_t len, struct rf_tls_ca **ret);
};
