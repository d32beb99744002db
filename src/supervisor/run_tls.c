/*
 * run_tls.c — the TLS side of a run with credential injection (issue 15,
 * docs/TLS.md) or HTTP rules (policy/httprule.h): the hosts to terminate,
 * the run CA for them and the run's trust files, made off the start path.
 *
 * Called by run_start (start.c: run_tls_begin before the plan is built;
 * run_tls_start through supervisor_run's trust_begin callback right after
 * init is cloned; run_tls_finish through its trust callback once the run
 * is registered) and only for runs with an injection or an HTTP rule.
 *
 * Design: the supervisor never maps OpenSSL. run_tls_begin checks what can
 * be checked cheaply (the module file, the trust files it will read) and
 * keeps the trust files open; run_tls_start, right after init is cloned
 * and while init builds the run's root on the other CPU, makes the run CA
 * and the trust files in this process (tls/trustmake.h: nettle for the CA,
 * the host's part from the state dir's cache) and sends them to init at
 * once (MSG_TRUST: init takes them at its first trust-file op), before the
 * run is vetted and registered; run_tls_finish collects the rest. Each
 * egress process loads the module itself before its lockdown and imports
 * the CA (egress_spawn).
 *
 * Where the CA's keys live: made straight into this process's secret
 * memory (secmem.h: locked, out of core dumps, wiped in every fork: the
 * run's init, cloned before the keys exist, never had them; a provider
 * command or later fork inherits wiped pages) — besides nettle's key
 * objects while they are made, which runca.c wipes — and in each egress
 * process. The export is never written anywhere and is wiped when the run
 * ends (run_tls_free).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/start-internal.h"
#include "supervisor/start.h"
#include "tls/tls-load.h"
#include "policy/addr.h"
#include "egress/egress.h"
#include "policy/httprule.h"
#include "egress/inject.h"
#include "policy/rules.h"
#include "policy/policy.h"
#include "sandbox/msg.h"
#include "sandbox/plan.h"
#include "sandbox/trustfiles.h"
#include "secrets/secmem.h"
#include "shared/macro.h"
#include "shared/memfd.h"
#include "tls/trustmake.h"

/* a run without a timeout: the run CA's validity (its key dies with the run) */
#define CA_LIFETIME_DEFAULT_S (30ULL * 24 * 3600)
/* what a trust file may add to the files it is made from (the run CA's
 * certificate, PKCS#12 bags), beyond twice their size */
#define TRUST_SLACK ((size_t)64 << 10)

static void job_free(struct run_tls_job *j);

void run_tls_free(struct run_tls *t)
{
        job_free(t->job); /* made, not collected (the run was refused meanwhile) */
        if (t->on) {
                safe_close(t->module);
                safe_close(t->bundle);
                safe_close(t->upstream);
                safe_close(t->bundle_src);
                safe_close(t->upstream_src);
        }
        for (size_t i = 0; t->hosts && i < t->n_hosts; i++)
                free(t->hosts[i]);
        free(t->hosts);
        secmem_free(t->ca); /* wipes the keys */
        *t = (struct run_tls){.module = -1,
                              .bundle = -1,
                              .upstream = -1,
                              .bundle_src = -1,
                              .upstream_src = -1,
                              .chan = -1};
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

/* ---- the supervisor's side ---------------------------------------------------------- */

/* A trust file run_tls_finish will read: open and readable now (a missing
 * or unreadable one refuses the run before it starts; O_NONBLOCK: a FIFO is
 * refused, never waited on), its size added to *total. An fd or -errno. */
static int trust_source(const char *path, size_t *total)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t)st.st_size > RF_TLS_BUNDLE_MAX)
                return -EFBIG;
        *total += (size_t)st.st_size;
        return TAKE_FD(fd);
}

static bool regular_file(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int run_tls_begin(const struct rf_policy *pol, const struct inject_secret *inj, size_t n,
                  const char *state_dir, struct run_tls *t, struct rf_error *err)
{
        static char names[RF_TLS_MAX_HOSTS][SECRET_INJECT_HOST_MAX + 1];
        size_t k = inject_tls_names(inj, n, names, RF_TLS_MAX_HOSTS);
        int r;

        *t = (struct run_tls){.module = -1,
                              .bundle = -1,
                              .upstream = -1,
                              .bundle_src = -1,
                              .upstream_src = -1,
                              .chan = -1};
        if (k > RF_TLS_MAX_HOSTS)
                return rf_error_set(err, -E2BIG, "more than %d injection hosts in one run",
                                    RF_TLS_MAX_HOSTS);
        /* the hosts of HTTP rules are terminated too (names only: a rule
         * never names an address) */
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
        if (!(t->hosts = calloc(k ? k : 1, sizeof *t->hosts)))
                return rf_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < k; i++) {
                uint8_t a[16];
                int fam;
                /* an address has no name to issue a leaf for: plaintext only */
                if (net_ip_parse(names[i], strlen(names[i]), false, a, &fam) == 0)
                        continue;
                if (!(t->hosts[t->n_hosts] = strdup(names[i])))
                        return rf_error_set(err, -ENOMEM, "out of memory");
                t->name_bytes += strlen(names[i]);
                t->n_hosts++;
        }
        if (t->n_hosts == 0)
                return 0; /* no name to terminate TLS for */
        t->what = n ? "credential injection" : "an HTTP rule";

        char path[256] = "ringfence-tls.so";
        if ((r = rf_tls_module_check(path, sizeof path)) < 0)
                return rf_error_set(err, r,
                                    "%s needs the TLS module %s, which could not be loaded: %s",
                                    t->what, path, rf_tls_file_why(r));
        size_t sources = 0;
        t->on = true; /* the fds are run_tls_free's from here on */
        if ((r = t->bundle_src = trust_source(RF_TLS_HOST_BUNDLE, &sources)) < 0 ||
            (pol->net_upstream_ca &&
             (r = t->upstream_src = trust_source(pol->net_upstream_ca, &sources)) < 0)) {
                const char *what = pol->net_upstream_ca
                                           ? "the host's CA bundle " RF_TLS_HOST_BUNDLE
                                             " or the upstream CA file"
                                           : "the host's CA bundle " RF_TLS_HOST_BUNDLE;
                return rf_error_set(err, r, "cannot read %s%s%s: %s", what,
                                    pol->net_upstream_ca ? " " : "",
                                    pol->net_upstream_ca ? pol->net_upstream_ca : "",
                                    r == -EFBIG ? "too large" : strerror(-r));
        }
        t->upstream_path = pol->net_upstream_ca;
        t->state_dir = state_dir;
        t->java = regular_file(RF_TLS_HOST_JAVA);
        t->bound = 2 * sources + TRUST_SLACK;
        if (t->bound > PLAN_TLS_FILE_MAX)
                t->bound = PLAN_TLS_FILE_MAX;
        t->lifetime_s = pol->timeout_ms ? pol->timeout_ms / 1000 + 120 : CA_LIFETIME_DEFAULT_S;
        return 0;
}

/* One making of a run's trust: the job, the export's secret memory and the
 * result, made by run_tls_start (or run_tls_finish) and collected by
 * run_tls_finish. */
struct run_tls_job {
        struct trust_job job;
        struct egress_tls_ca *ca; /* secret memory, sized for the export */
        size_t max;
        struct trust_made made;
        int r;
        char why[RF_ERROR_MSG_MAX];
        bool send_lost; /* init could not take them */
};

/* The job for t, its export's secret memory allocated: NULL with errno. */
static struct run_tls_job *job_new(struct run_tls *t)
{
        struct run_tls_job *j = calloc(1, sizeof *j);
        if (!j)
                return NULL;
        /* the export straight into secret memory, as large as it can be */
        j->max = TRUST_EXPORT_BOUND(t->n_hosts, t->name_bytes);
        if (j->max > RF_TLS_CA_EXPORT_MAX)
                j->max = RF_TLS_CA_EXPORT_MAX;
        if (!(j->ca = secmem_alloc(sizeof *j->ca + j->max))) {
                int e = errno;
                free(j);
                errno = e;
                return NULL;
        }
        j->job = (struct trust_job){
                .hosts = (const char *const *)t->hosts,
                .n_hosts = t->n_hosts,
                .bundle = t->bundle_src,
                .upstream = t->upstream_src,
                .upstream_path = t->upstream_path,
                .lifetime_s = t->lifetime_s,
                .java = t->java,
                .bound = t->bound,
                .state_dir = t->state_dir,
        };
        j->made = (struct trust_made){
                .files = -1, .module = -1, .bundle = -1, .jvm = -1, .upstream = -1};
        return j;
}

/* The job freed: its result's fds closed, its export wiped, unless
 * run_tls_finish took them. */
static void job_free(struct run_tls_job *j)
{
        if (!j)
                return;
        safe_close(j->made.files);
        safe_close(j->made.module);
        safe_close(j->made.bundle);
        safe_close(j->made.jvm);
        safe_close(j->made.upstream);
        secmem_free(j->ca);
        free(j);
}

/* Make the trust and hand the files to init on chan at once
 * (sandbox/trustfiles.h): the host's parts it copies from (MSG_TRUST, value
 * = the source), then the memfd (value 0). */
static void job_make(struct run_tls_job *j, int chan)
{
        j->r = trust_make(&j->job, j->ca->bytes, j->max, &j->made, j->why, sizeof j->why);
        if (j->r < 0)
                return;
        struct rf_msg m = {.type = MSG_TRUST, .value = TRUST_SRC_BUNDLE};
        bool sent = rf_msg_send(chan, &m, j->made.bundle) == 0;
        if (sent && j->made.jvm >= 0) {
                m.value = TRUST_SRC_JVM;
                sent = rf_msg_send(chan, &m, j->made.jvm) == 0;
        }
        m.value = 0;
        if (!sent || rf_msg_send(chan, &m, j->made.files) < 0)
                j->send_lost = true;
        j->made.files = safe_close(j->made.files);
        j->made.jvm = safe_close(j->made.jvm);
}

void run_tls_start(struct run_tls *t, int chan)
{
        if (!t->on || t->job || t->ca)
                return;
        t->chan = chan;
        if (!(t->job = job_new(t)))
                return; /* run_tls_finish tries again, and says why */
        job_make(t->job, chan);
}

int run_tls_finish(struct run_tls *t, struct rf_error *err)
{
        if (!t->on || t->ca)
                return rf_error_set(err, -EINVAL, "no TLS trust to make (internal error)");
        struct run_tls_job *j = t->job;
        t->job = NULL;
        if (!j) {
                if (t->chan < 0)
                        return rf_error_set(err, -EINVAL,
                                            "no channel to the run's init (internal error)");
                if (!(j = job_new(t)))
                        return rf_error_set(err, negative_errno(),
                                            "cannot keep the run's TLS authority: %m (its keys "
                                            "go into locked memory: RLIMIT_MEMLOCK)");
                job_make(j, t->chan);
        }
        /* the sources are read: the snapshots stand for them now */
        t->bundle_src = safe_close(t->bundle_src);
        t->upstream_src = safe_close(t->upstream_src);
        if (j->r < 0) {
                int r = rf_error_set(err, j->r, "%s: %s", t->what, j->why);
                job_free(j);
                return r;
        }
        j->ca->len = j->made.ca_len;
#ifdef RF_TEST_BUILD
        test_ca_keys_out(j->ca);
#endif
        t->ca = TAKE_PTR(j->ca);
        t->module = TAKE_FD(j->made.module);
        t->bundle = TAKE_FD(j->made.bundle);
        t->upstream = TAKE_FD(j->made.upstream);
        bool lost = j->send_lost;
        job_free(j);
        return lost ? 1 : 0;
}
