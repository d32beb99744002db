/*
 * run_tls.c — the TLS side of a run with credential injection (issue 15,
 * docs/TLS.md) or HTTP rules (egress/httprule.h): load the TLS module,
 * read the upstream trust, make the run CA for the hosts to terminate
 * (the injection hosts and the hosts HTTP rules name) and the run's trust
 * files.
 *
 * Called by cmd_run before the plan is built (the trust files go into the
 * run's root) and only for runs with an injection or an HTTP rule: every
 * other run never maps OpenSSL.
 *
 * Where the CA's keys live: this process (the supervisor-to-be) makes the
 * CA, writes the trust files from it, exports it (certificate, hosts, both
 * private keys: tlsterm.h ca_export) into secret memory (secmem.h: locked,
 * out of core dumps, wiped in every fork) and frees the CA handle, which
 * clears the keys OpenSSL held. So when the run's init is cloned from this
 * process (a fork without exec) it inherits no key: only the wiped secret
 * memory. Each egress process gets the export through a mapping made for
 * its fork only and imports the CA from it (egress_spawn), so a replaced
 * egress process serves leaves of the same CA. The export is never
 * written anywhere and is wiped when the run ends (run_tls_free).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "egress/addr.h"
#include "egress/egress.h"
#include "egress/httprule.h"
#include "egress/inject.h"
#include "egress/rules.h"
#include "policy/policy.h"
#include "secrets/secmem.h"
#include "shared/macro.h"

#define HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define HOST_JAVA   "/etc/ssl/certs/java/cacerts"
/* a run without a timeout: the run CA's validity (its key dies with the run) */
#define CA_LIFETIME_DEFAULT_S (30ULL * 24 * 3600)

void run_tls_free(struct run_tls *t)
{
        if (!t->mod.vt) {
                rf_tls_unload(&t->mod);
                return;
        }
        free(t->bundle);
        free(t->ca_pem);
        free(t->java);
        secmem_free(t->ca); /* wipes the keys */
        t->mod.vt->trust_free(t->trust);
        rf_tls_unload(&t->mod);
        *t = (struct run_tls){0};
}

#ifdef RF_TEST_BUILD
/*
 * Test builds only: the run CA's private scalars, hex ("ca HEX\nleaf
 * HEX\n"), into the file RINGFENCE_TEST_CA_KEYS names (created, never
 * replaced), so inject_cakey.sh can look for them in the memory of the
 * run's processes from the host side. A release build has no such path.
 */
static void test_ca_keys_out(const struct egress_tls_ca *ca)
{
        const char *path = getenv("RINGFENCE_TEST_CA_KEYS");
        static const struct {
                const char *name;
                size_t off;
        } keys[] = {{"ca", RF_TLS_CA_EXPORT_CA_KEY}, {"leaf", RF_TLS_CA_EXPORT_LEAF_KEY}};
        if (!path || !path[0])
                return;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
                char line[16 + 2 * RF_TLS_CA_KEY_LEN];
                size_t n = (size_t)snprintf(line, sizeof line, "%s ", keys[k].name);
                for (size_t i = 0; i < RF_TLS_CA_KEY_LEN; i++)
                        n += (size_t)snprintf(line + n, sizeof line - n, "%02x",
                                              ca->bytes[keys[k].off + i]);
                line[n++] = '\n';
                (void)!write(fd, line, n);
        }
        close(fd);
}
#endif

/*
 * The CA kept as its export in secret memory (*ret), for the egress
 * processes to import. 0, or -errno (secret memory refused: RLIMIT_MEMLOCK).
 */
static int ca_keep(const struct rf_tls_vtable *vt, const struct rf_tls_ca *ca,
                   struct egress_tls_ca **ret)
{
        size_t len = 0;
        int r = vt->ca_export(ca, NULL, 0, &len);
        if (r != -ENOBUFS)
                return r < 0 ? r : -EIO;
        struct egress_tls_ca *k = secmem_alloc(sizeof *k + len);
        if (!k)
                return negative_errno();
        if ((r = vt->ca_export(ca, k->bytes, len, &k->len)) < 0) {
                secmem_free(k);
                return r;
        }
#ifdef RF_TEST_BUILD
        test_ca_keys_out(k);
#endif
        *ret = k;
        return 0;
}

static bool regular_file(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int run_tls_setup(const struct rf_policy *pol, const struct inject_secret *inj, size_t n,
                  struct run_tls *t, struct rf_error *err)
{
        static char names[RF_TLS_MAX_HOSTS][SECRET_INJECT_HOST_MAX + 1];
        const char *list[RF_TLS_MAX_HOSTS];
        size_t k = inject_tls_names(inj, n, names, RF_TLS_MAX_HOSTS), nl = 0;
        int r;

        *t = (struct run_tls){0};
        if (k > RF_TLS_MAX_HOSTS)
                return rf_error_set(err, -E2BIG, "more than %d injection hosts in one run",
                                    RF_TLS_MAX_HOSTS);
        /* the hosts HTTP rules name: their requests are read in the egress
         * process too (names only: a rule never names an address) */
        for (size_t i = 0; i < pol->n_net_http; i++) {
                struct http_rule hr;
                const char *why = "invalid";
                if (httprule_parse(pol->net_http[i], strlen(pol->net_http[i]), &hr, &why) < 0)
                        return rf_error_set(err, -EINVAL, "HTTP rule %.200s: %s", pol->net_http[i],
                                            why);
                if (httprule_names(&hr, 1, names, &k, RF_TLS_MAX_HOSTS) < 0)
                        return rf_error_set(err, -E2BIG,
                                            "more than %d hosts to terminate TLS for (injections "
                                            "and HTTP rules) in one run",
                                            RF_TLS_MAX_HOSTS);
        }
        for (size_t i = 0; i < k; i++) {
                uint8_t a[16];
                int fam;
                /* an address has no name to issue a leaf for: plaintext only */
                if (net_ip_parse(names[i], strlen(names[i]), false, a, &fam) < 0)
                        list[nl++] = names[i];
        }
        if (nl == 0)
                return 0; /* no name to terminate TLS for */
        if ((r = rf_tls_load(&t->mod)) < 0) {
                char path[256] = "ringfence-tls.so";
                (void)rf_tls_module_path(path, sizeof path);
                return rf_error_set(err, r,
                                    "%s needs the TLS module %s, which could not be loaded: %s",
                                    n ? "credential injection" : "an HTTP rule", path,
                                    r == -ENOENT   ? "it is not installed"
                                    : r == -EPERM  ? "it is writable by others than root"
                                    : r == -EPROTO ? "it is of another version"
                                                   : strerror(-r));
        }
        const struct rf_tls_vtable *vt = t->mod.vt;
        r = vt->trust_load(HOST_BUNDLE, pol->net_upstream_ca, &t->trust);
        if (r < 0) {
                const char *what = pol->net_upstream_ca ? "the host's CA bundle " HOST_BUNDLE
                                                          " or the upstream CA file"
                                                        : "the host's CA bundle " HOST_BUNDLE;
                rf_error_set(err, r, "cannot read %s%s%s: %s", what,
                             pol->net_upstream_ca ? " " : "",
                             pol->net_upstream_ca ? pol->net_upstream_ca : "",
                             r == -EBADMSG ? "no certificate in it"
                             : r == -EFBIG ? "too large"
                                           : strerror(-r));
                run_tls_free(t);
                return r;
        }
        uint64_t life = pol->timeout_ms ? pol->timeout_ms / 1000 + 120 : CA_LIFETIME_DEFAULT_S;
        struct rf_tls_ca *ca = NULL;
        if ((r = vt->ca_new(list, nl, life, &ca)) < 0 ||
            (r = vt->trust_bundle(t->trust, ca, &t->bundle, &t->bundle_len)) < 0 ||
            (r = vt->ca_pem(ca, &t->ca_pem, &t->ca_pem_len)) < 0 ||
            (regular_file(HOST_JAVA) &&
             (r = vt->pkcs12(ca, t->trust, "changeit", &t->java, &t->java_len)) < 0) ||
            (r = ca_keep(vt, ca, &t->ca)) < 0) {
                vt->ca_free(ca);
                rf_error_set(err, r, "cannot make the run's TLS authority: %s%s", strerror(-r),
                             r == -EPERM || r == -EAGAIN
                                     ? " (its keys go into locked memory: RLIMIT_MEMLOCK)"
                                     : "");
                run_tls_free(t);
                return r;
        }
        /* from here on the keys are in secret memory only: the handle goes,
         * OpenSSL clearing what it held of them */
        vt->ca_free(ca);
        return 0;
}
