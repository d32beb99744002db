/*
 * run_tls.c — the TLS side of a run with credential injection (issue 15,
 * docs/TLS.md): load the TLS module, read the upstream trust, make the run
 * CA for the injection hosts and the run's trust files.
 *
 * Called by cmd_run before the plan is built (the trust files go into the
 * run's root) and only for runs with an injection: every other run never
 * maps OpenSSL. The CA's key stays in memory here (ringfence's own,
 * non-dumpable process, which holds the secret values anyway) and in the
 * egress process forked from it; it is never written anywhere and is
 * wiped when the run ends (run_tls_free).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "egress/addr.h"
#include "egress/inject.h"
#include "egress/rules.h"
#include "policy/policy.h"

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
        t->mod.vt->ca_free(t->ca); /* wipes the keys */
        t->mod.vt->trust_free(t->trust);
        rf_tls_unload(&t->mod);
        *t = (struct run_tls){0};
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
                                    "credential injection needs the TLS module %s, which could "
                                    "not be loaded: %s",
                                    path,
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
        if ((r = vt->ca_new(list, nl, life, &t->ca)) < 0 ||
            (r = vt->trust_bundle(t->trust, t->ca, &t->bundle, &t->bundle_len)) < 0 ||
            (r = vt->ca_pem(t->ca, &t->ca_pem, &t->ca_pem_len)) < 0 ||
            (regular_file(HOST_JAVA) &&
             (r = vt->pkcs12(t->ca, t->trust, "changeit", &t->java, &t->java_len)) < 0)) {
                rf_error_set(err, r, "cannot make the run's TLS authority: %s", strerror(-r));
                run_tls_free(t);
                return r;
        }
        return 0;
}
