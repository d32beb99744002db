/*
 * test_plan.c — unit tests of the sandbox plan's pure path rules:
 * path_absolute (lexical normalisation), path_is_beneath, the workspace
 * rule (plan_check_workspace) and the run id format; and of plan_build's
 * TLS trust files (plan_input.tls_*): the ops, their order, the
 * environment, their content left to init (OPF_LATE), nothing of it
 * without tls_trust; and of a profile's tree list for the run's $HOME
 * (plan_home_file.tree): its ops and its refusals.
 * plan_build needs Landlock (it plans the rules); without it those checks
 * are skipped.
 */
#include <errno.h>
#include <limits.h>
#include <linux/landlock.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/plan.h"
#include "tap.h"

#define RUN_BUNDLE  "/run/ringfence/ca-certificates.crt"
#define RUN_CA      "/run/ringfence/run-ca.crt"
#define RUN_JAVA    "/run/ringfence/cacerts.p12"
#define HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define HOST_JAVA   "/etc/ssl/certs/java/cacerts"

static const char *const bundle_env[] = {"SSL_CERT_FILE",  "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                                         "GIT_SSL_CAINFO", "PIP_CERT",           "AWS_CA_BUNDLE"};

/* Index of the last op of `kind` at `dst`, or -1. */
static long find_op(const struct rf_plan *p, enum plan_op_kind kind, const char *dst)
{
        for (size_t i = p->n_ops; i-- > 0;)
                if (p->ops[i].kind == kind && strcmp(p->ops[i].dst, dst) == 0)
                        return (long)i;
        return -1;
}

static size_t count_op(const struct rf_plan *p, enum plan_op_kind kind, const char *dst)
{
        size_t n = 0;
        for (size_t i = 0; i < p->n_ops; i++)
                n += p->ops[i].kind == kind && strcmp(p->ops[i].dst, dst) == 0;
        return n;
}

static const char *env_get(const struct rf_plan *p, const char *name)
{
        size_t l = strlen(name);
        for (char **e = p->envp; *e; e++)
                if (strncmp(*e, name, l) == 0 && (*e)[l] == '=')
                        return *e + l + 1;
        return NULL;
}

/* Would the plan mount the run's file over this host file? (The rule the
 * plan applies, restated: a regular file reached without a symlink, in the
 * /etc/ssl directory that add_etc binds.) */
static bool host_overlayable(const char *path)
{
        char real[PATH_MAX];
        struct stat st;
        return lstat("/etc/ssl", &st) == 0 && S_ISDIR(st.st_mode) && lstat(path, &st) == 0 &&
               S_ISREG(st.st_mode) && realpath(path, real) && strcmp(real, path) == 0;
}

static uint64_t ll_access(const struct rf_plan *p, const char *path)
{
        for (size_t i = 0; i < p->landlock.n_rules; i++)
                if (strcmp(p->landlock.rules[i].path, path) == 0)
                        return p->landlock.rules[i].access;
        return 0;
}

static int build(struct rf_policy *pol, const char *ws, struct plan_input *in, struct rf_plan **p,
                 struct rf_error *err)
{
        static char *const argv[] = {"/bin/true", NULL};
        in->policy = pol;
        in->argv = argv;
        in->cwd = ws;
        in->state_dir = "/nonexistent/ringfence-test-state";
        *err = (struct rf_error){0};
        *p = NULL;
        return plan_build(in, p, err);
}

/* The trust files' memfd layout (sandbox/trustfiles.h), which init parses. */
static void test_trustfiles(void)
{
        /* the bundle: a source's 100 bytes + "-CA"; the CA: "CA"; the
         * store: "H" + 50 bytes of the other source from 48 + 40 bytes of
         * MacData (its MAC in them: the keeper's, init only copies) */
        struct trustfiles spec = {
                .f = {[TRUST_BUNDLE] = {.src = TRUST_SRC_BUNDLE, .src_len = 100, .post = 3},
                      [TRUST_CA] = {.pre = 2},
                      [TRUST_JAVA] = {.pre = 1,
                                      .src = TRUST_SRC_JVM,
                                      .src_off = 48,
                                      .src_len = 50,
                                      .post = 40}},
        };
        unsigned char hdr[TRUSTFILES_HDR];
        struct trustfiles t;
        uint64_t n = TRUSTFILES_HDR + 46;

        trustfiles_header(&spec, hdr);
        is_int(trustfiles_parse(hdr, n, 200, &t), 0, "trust files: the writer's layout parses");
        const struct trustfile *b = &t.f[TRUST_BUNDLE], *c = &t.f[TRUST_CA], *j = &t.f[TRUST_JAVA];
        ok(b->len == 103 && b->pre == 0 && b->src == TRUST_SRC_BUNDLE && b->src_off == 0 &&
                   b->src_len == 100 && b->post_off == TRUSTFILES_HDR && b->post == 3,
           "... the bundle: the source's bytes, then its own at the body's start");
        ok(c->len == 2 && c->pre_off == TRUSTFILES_HDR + 3 && c->pre == 2 && !c->src &&
                   !c->src_len && c->post == 0,
           "... the CA: its own bytes after the bundle's");
        ok(j->len == 91 && j->pre_off == TRUSTFILES_HDR + 5 && j->src == TRUST_SRC_JVM &&
                   j->src_off == 48 && j->src_len == 50 && j->post_off == TRUSTFILES_HDR + 6 &&
                   j->post == 40,
           "... the store: head, the other source's range, tail");
        is_int(trustfiles_parse(hdr, n, 60, &t), -EFBIG, "a file over the bound: -EFBIG");
        ok(!t.f[TRUST_CA].len && !t.f[TRUST_BUNDLE].src && !t.f[TRUST_JAVA].len,
           "... and nothing returned");
        is_int(trustfiles_parse(hdr, n - 1, 200, &t), -EBADMSG, "a byte short: -EBADMSG");
        is_int(trustfiles_parse(hdr, n + 1, 200, &t), -EBADMSG, "a byte left over: -EBADMSG");
        is_int(trustfiles_parse(hdr, TRUSTFILES_HDR - 1, 200, &t), -EBADMSG,
               "shorter than the header: -EBADMSG");
        hdr[0] ^= 1;
        is_int(trustfiles_parse(hdr, n, 200, &t), -EBADMSG, "a bad magic: -EBADMSG");

        struct trustfiles bad = spec;
        bad.f[TRUST_JAVA].src = TRUST_SOURCES;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, n, 200, &t), -EBADMSG, "a source out of range: -EBADMSG");
        bad = spec;
        bad.f[TRUST_JAVA].src_off = TRUSTFILES_SRC_OFF_MAX + 1;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, n, 200, &t), -EBADMSG,
               "a source offset past its bound: -EBADMSG");
        bad = spec;
        bad.f[TRUST_CA].src_len = 5;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, n, 200, &t), -EBADMSG,
               "a source range on a file without a source: -EBADMSG");
        bad = spec;
        bad.f[TRUST_JAVA].post = 41; /* one byte more than the memfd holds */
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, n, 200, &t), -EBADMSG,
               "a store's post bytes past the memfd's end: -EBADMSG");
        memcpy(hdr, "RFTRUST2", 8); /* the layout before: init made the MAC */
        is_int(trustfiles_parse(hdr, n + 1, 200, &t), -EBADMSG,
               "the older layout's magic: -EBADMSG");

        bad = spec;
        bad.f[TRUST_JAVA] = (struct trustfile){0};
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, TRUSTFILES_HDR + 5, 200, &t), 0, "no Java store: parses");
        ok(!t.f[TRUST_JAVA].len, "... and the store is absent");
        bad.f[TRUST_CA].pre = 0;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, TRUSTFILES_HDR + 3, 200, &t), -EBADMSG, "no run CA: -EBADMSG");
        bad.f[TRUST_CA].pre = 2;
        bad.f[TRUST_BUNDLE].src_len = UINT64_MAX;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, TRUSTFILES_HDR + 5, SIZE_MAX, &t), -EFBIG,
               "a length past 16 MiB, whatever the bound: -EFBIG (no overflow)");
        bad.f[TRUST_BUNDLE].src_len = TRUSTFILES_FILE_MAX;
        bad.f[TRUST_BUNDLE].post = TRUSTFILES_FILE_MAX;
        trustfiles_header(&bad, hdr);
        is_int(trustfiles_parse(hdr, TRUSTFILES_HDR + 5, SIZE_MAX, &t), -EFBIG,
               "parts within 16 MiB each but past it together: -EFBIG");
}

static void test_tls(void)
{
        char ws[] = "/tmp/rf-test-plan.XXXXXX";
        struct rf_error err = {0};
        struct rf_plan *p = NULL;
        int r;

        if (!mkdtemp(ws)) {
                ok(false, "mkdtemp: %m");
                return;
        }
        struct rf_policy *pol = policy_new();
        ok(pol && policy_set_path(&pol->workspace, ws, &err) == 0 &&
                   policy_add_env(pol, "SSL_CERT_FILE", "/policy/bundle.pem", &err) == 0 &&
                   policy_add_env(pol, "NODE_EXTRA_CA_CERTS", "/policy/extra.pem", &err) == 0 &&
                   policy_apply_defaults(pol) == 0,
           "a policy with its own SSL_CERT_FILE and NODE_EXTRA_CA_CERTS");

        /* without a bundle: nothing of TLS (no files, no env, no overlay) */
        struct plan_input in = {0};
        r = build(pol, ws, &in, &p, &err);
        if (r == -EOPNOTSUPP) {
                diag("skipping plan_build checks: %s", err.msg);
                policy_free(pol);
                rmdir(ws);
                return;
        }
        is_int(r, 0, "plan without TLS builds (%s)", err.msg);
        if (r < 0)
                goto out;
        ok(find_op(p, OP_DIR, "/run/ringfence") < 0, "no TLS: no /run/ringfence");
        ok(find_op(p, OP_FILE, RUN_BUNDLE) < 0 && find_op(p, OP_FILE, RUN_CA) < 0 &&
                   find_op(p, OP_FILE, RUN_JAVA) < 0,
           "no TLS: no trust files");
        bool in_root = false;
        for (size_t i = 0; i < p->n_ops; i++)
                in_root |= (p->ops[i].flags & OPF_IN_ROOT) != 0;
        ok(!in_root, "no TLS: no in-root bind");
        is_int((int)p->root_extra, 0, "no TLS: the root tmpfs keeps its size");
        is_str(env_get(p, "SSL_CERT_FILE"), "/policy/bundle.pem", "no TLS: the policy's value");
        is_str(env_get(p, "NODE_EXTRA_CA_CERTS"), "/policy/extra.pem",
               "no TLS: the policy's NODE_EXTRA_CA_CERTS");
        ok(!env_get(p, "CURL_CA_BUNDLE"), "no TLS: CURL_CA_BUNDLE unset");
        size_t plain_ops = p->n_ops;
        p = plan_free(p);

        /* with trust files, the Java store included: their names and bound
         * are planned, their content comes later (OPF_LATE, MSG_TRUST) */
        in = (struct plan_input){
                .tls_trust = true,
                .tls_java = true,
                .tls_bound = 300000,
                .identity_token = "token",
        };
        r = build(pol, ws, &in, &p, &err);
        is_int(r, 0, "plan with TLS builds (%s)", err.msg);
        if (r < 0)
                goto out;
        is_int((int)count_op(p, OP_DIR, "/run/ringfence"), 1,
               "/run/ringfence made once (identity token and TLS)");
        long fb = find_op(p, OP_FILE, RUN_BUNDLE), fc = find_op(p, OP_FILE, RUN_CA),
             fj = find_op(p, OP_FILE, RUN_JAVA), ssl = find_op(p, OP_BIND, "/etc/ssl"),
             dir = find_op(p, OP_DIR, "/run/ringfence");
        ok(fb >= 0 && fc >= 0 && fj >= 0, "the three trust files are planned");
        if (fb < 0 || fc < 0 || fj < 0)
                goto out;
        const struct plan_op *ob = &p->ops[fb], *oc = &p->ops[fc], *oj = &p->ops[fj];
        ok((ob->flags & OPF_LATE) && (oc->flags & OPF_LATE) && (oj->flags & OPF_LATE),
           "the three files' content comes late (OPF_LATE)");
        ok(ob->data_len == TRUST_BUNDLE && oc->data_len == TRUST_CA && oj->data_len == TRUST_JAVA,
           "each names its trust file");
        ok(!ob->data && !oc->data && !oj->data, "no content in the plan");
        ok(p->trust_late && p->trust_bound == 300000, "the plan waits for them, with the bound");
        ok(ob->mode == 0444 && oc->mode == 0444 && oj->mode == 0444, "trust files are 0444");
        ok(dir >= 0 && dir < fb && dir < fc && dir < fj, "/run/ringfence before its files");
        ok(p->root_extra >= 3 * 300000, "the root tmpfs grows by the trust files' bound");

        struct {
                const char *host, *run;
                long file;
        } ov[] = {{HOST_BUNDLE, RUN_BUNDLE, fb}, {HOST_JAVA, RUN_JAVA, fj}};
        size_t overlays = 0;
        for (size_t k = 0; k < ARRAY_SIZE(ov); k++) {
                long o = find_op(p, OP_BIND, ov[k].host);
                if (!host_overlayable(ov[k].host)) {
                        ok(o < 0, "%s: not a regular file here, not overlaid", ov[k].host);
                        continue;
                }
                overlays++;
                ok(o >= 0, "%s: overlaid", ov[k].host);
                if (o < 0)
                        continue;
                const struct plan_op *op = &p->ops[o];
                is_str(op->src, ov[k].run, "%s: from %s", ov[k].host, ov[k].run);
                is_int((int)op->flags, OPF_IN_ROOT | OPF_RDONLY | OPF_OPTIONAL,
                       "%s: in-root, read-only, optional (never verified on the host)", ov[k].host);
                ok(op->mode == S_IFREG, "%s: a file bind", ov[k].host);
                ok(ssl >= 0 && ssl < o, "%s: after the /etc/ssl bind", ov[k].host);
                ok(ov[k].file < o, "%s: after the file it clones", ov[k].host);
                ok(!(ll_access(p, ov[k].host) & LANDLOCK_ACCESS_FS_WRITE_FILE),
                   "%s: Landlock grants no write", ov[k].host);
        }
        ok(!(ll_access(p, RUN_BUNDLE) & LANDLOCK_ACCESS_FS_WRITE_FILE) &&
                   (ll_access(p, RUN_BUNDLE) & LANDLOCK_ACCESS_FS_READ_FILE),
           "Landlock: the bundle is readable, not writable");
        is_int((int)(p->n_ops - plain_ops), (int)(1 + 1 + 3 + overlays),
               "TLS adds /run/ringfence, the identity, 3 files and %zu overlays, nothing else",
               overlays);
        for (size_t k = 0; k < ARRAY_SIZE(bundle_env); k++)
                is_str(env_get(p, bundle_env[k]), RUN_BUNDLE, "%s names the run's bundle",
                       bundle_env[k]);
        is_str(env_get(p, "NODE_EXTRA_CA_CERTS"), RUN_CA, "NODE_EXTRA_CA_CERTS: the run CA");
        size_t n_ssl = 0;
        for (char **e = p->envp; *e; e++)
                n_ssl += strncmp(*e, "SSL_CERT_FILE=", 14) == 0;
        is_int((int)n_ssl, 1, "SSL_CERT_FILE once: the policy's value replaced");
        p = plan_free(p);

        /* no Java store: no p12 file, no Java overlay */
        in.tls_java = false;
        r = build(pol, ws, &in, &p, &err);
        is_int(r, 0, "plan with TLS, no Java store builds (%s)", err.msg);
        if (r == 0)
                ok(find_op(p, OP_FILE, RUN_JAVA) < 0 && find_op(p, OP_BIND, HOST_JAVA) < 0 &&
                           find_op(p, OP_FILE, RUN_BUNDLE) >= 0,
                   "no Java store: no cacerts.p12 and no Java overlay");
        p = plan_free(p);

        /* inconsistent or oversized input is refused */
        struct plan_input bad = {.tls_java = true, .tls_bound = 100};
        is_int(build(pol, ws, &bad, &p, &err), -EINVAL, "a Java store without the bundle: refused");
        bad = (struct plan_input){.tls_trust = true};
        is_int(build(pol, ws, &bad, &p, &err), -EINVAL, "trust files of no bound: refused");
        bad = in;
        bad.tls_bound = (16u << 20) + 1;
        is_int(build(pol, ws, &bad, &p, &err), -E2BIG, "a bound over 16 MiB: refused");

        /* a policy mount over /run: the trust files would not be the run's own */
        ok(policy_add_path(&pol->read_only, &pol->n_read_only, "/run", &err) == 0,
           "a policy binding /run");
        is_int(build(pol, ws, &in, &p, &err), -EPERM, "TLS with /run bound: refused (%s)", err.msg);
        in = (struct plan_input){0};
        is_int(build(pol, ws, &in, &p, &err), 0, "without TLS, /run bound as before");
        p = plan_free(p);
out:
        plan_free(p);
        policy_free(pol);
        rmdir(ws);
}

static void check_abs(const char *cwd, const char *in, const char *want)
{
        char out[4096];
        int r = path_absolute(cwd, in, out, sizeof out);
        if (!want) {
                ok(r < 0, "path_absolute(%s, %s) refused", cwd ? cwd : "NULL", in);
                return;
        }
        is_int(r, 0, "path_absolute(%s, %s) ok", cwd ? cwd : "NULL", in);
        is_str(out, want, "path_absolute(%s, %s) = %s", cwd ? cwd : "NULL", in, want);
}

static int ws(const char *w, bool explicit_ws, const char *home, const char *state)
{
        struct rf_error err = {0};
        int r = plan_check_workspace(w, explicit_ws, home, state, &err);
        if (r < 0)
                ok(err.msg[0] != '\0', "refusal of %s says why (%s)", w, err.msg);
        return r;
}

/* Append one tree entry (plan.h, plan_home_file.tree) to buf at *n. */
static void tree_add(char *buf, size_t *n, uint32_t kind, const char *name, const char *data)
{
        struct plan_home_entry e = {.kind = kind,
                                    .name_len = (uint32_t)strlen(name),
                                    .data_len = data ? strlen(data) : 0};
        memcpy(buf + *n, &e, sizeof e);
        *n += sizeof e;
        memcpy(buf + *n, name, e.name_len);
        *n += e.name_len;
        if (data)
                memcpy(buf + *n, data, e.data_len);
        *n += e.data_len;
}

/* A profile's tree list (the caller's agent directories, read-only in the
 * run): a tmpfs per directory, its files (0600, 0700 for a program), their
 * directories once, then the directory read-only with programs runnable;
 * a malformed list refused. */
static void test_home_tree(void)
{
        char ws[] = "/tmp/rf-test-plan.XXXXXX", buf[4096], path[PATH_MAX];
        struct rf_error err = {0};
        struct rf_plan *p = NULL;
        size_t n = 0;
        int r;

        if (!mkdtemp(ws)) {
                ok(false, "mkdtemp: %m");
                return;
        }
        struct rf_policy *pol = policy_new();
        ok(pol && policy_set_path(&pol->workspace, ws, &err) == 0 &&
                   policy_apply_defaults(pol) == 0,
           "home tree: a policy");
        tree_add(buf, &n, PLAN_HOME_RODIR, ".claude/commands", NULL);
        tree_add(buf, &n, PLAN_HOME_FILE, ".claude/commands/a.md", "a");
        tree_add(buf, &n, PLAN_HOME_FILE, ".claude/commands/sub/b.md", "b");
        tree_add(buf, &n, PLAN_HOME_EXEC, ".claude/commands/sub/run.sh", "#!/bin/sh\n");
        struct plan_home_file f = {
                .rel = ".claude/{commands}", .data = buf, .len = n, .tree = true};
        struct plan_input in = {.home_files = &f, .n_home_files = 1};
        r = build(pol, ws, &in, &p, &err);
        if (r == -EOPNOTSUPP) {
                diag("skipping plan_build checks: %s", err.msg);
                goto out;
        }
        is_int(r, 0, "home tree: the plan builds (%s)", err.msg);
        if (r < 0)
                goto out;
#define HP(rel) (snprintf(path, sizeof path, "%s/%s", p->home, rel), path)
        long tmpfs = find_op(p, OP_TMPFS, HP(".claude/commands"));
        ok(tmpfs >= 0 && p->ops[tmpfs].size == PLAN_HOME_RODIR_SIZE && p->ops[tmpfs].mode == 0700,
           "home tree: a tmpfs of its own at the directory");
        long a = find_op(p, OP_FILE, HP(".claude/commands/a.md"));
        long run = find_op(p, OP_FILE, HP(".claude/commands/sub/run.sh"));
        ok(a > tmpfs && p->ops[a].mode == 0600 && p->ops[a].data_len == 1 &&
                   !memcmp(p->ops[a].data, "a", 1),
           "home tree: a file in it, 0600, its bytes");
        ok(run > a && p->ops[run].mode == 0700, "home tree: a program 0700");
        is_int((int)count_op(p, OP_DIR, HP(".claude/commands/sub")), 1,
               "home tree: a subdirectory made once for its two files");
        long ro = find_op(p, OP_RO_SELF, HP(".claude/commands"));
        ok(ro > run && (p->ops[ro].flags & OPF_EXEC), "home tree: read-only after its files, "
                                                      "programs runnable (OPF_EXEC)");
        p = plan_free(p);

        static const struct {
                const char *name;
                uint32_t kind1, kind2;
                const char *dir, *file, *data1;
        } bad[] = {
                {"a file outside its directory", PLAN_HOME_RODIR, PLAN_HOME_FILE,
                 ".claude/commands", ".claude/other.md", NULL},
                {"a file before any directory", PLAN_HOME_FILE, PLAN_HOME_FILE, ".claude/x.md",
                 ".claude/y.md", "x"},
                {"a name with ..", PLAN_HOME_RODIR, PLAN_HOME_FILE, ".claude/commands",
                 ".claude/commands/../../x", NULL},
                {"a directory with data", PLAN_HOME_RODIR, PLAN_HOME_FILE, ".claude/commands",
                 ".claude/commands/a", "data"},
                {"an absolute name", PLAN_HOME_RODIR, PLAN_HOME_FILE, "/etc", "/etc/passwd", NULL},
                {"an unknown kind", PLAN_HOME_RODIR, 9, ".claude/commands", ".claude/commands/a",
                 NULL},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                n = 0;
                tree_add(buf, &n, bad[i].kind1, bad[i].dir, bad[i].data1);
                tree_add(buf, &n, bad[i].kind2, bad[i].file, "x");
                f.len = n;
                r = build(pol, ws, &in, &p, &err);
                is_int(r, -EINVAL, "home tree: %s: refused (%s)", bad[i].name, err.msg);
                p = plan_free(p);
        }
        n = 0;
        tree_add(buf, &n, PLAN_HOME_RODIR, ".claude/commands", NULL);
        tree_add(buf, &n, PLAN_HOME_FILE, ".claude/commands/a.md", "abc");
        f.len = n - 1;
        r = build(pol, ws, &in, &p, &err);
        is_int(r, -EINVAL, "home tree: an entry cut short: refused (%s)", err.msg);
        p = plan_free(p);
#undef HP
out:
        policy_free(pol);
        rmdir(ws);
}

int main(void)
{
        /* lexical normalisation */
        check_abs("/home/a", "proj", "/home/a/proj");
        check_abs("/home/a", "./proj/", "/home/a/proj");
        check_abs("/home/a", "../b//c/.", "/home/b/c");
        check_abs("/", "..", "/");
        check_abs("/x", "/abs/../y", "/y");
        check_abs("/x", "/", "/");
        check_abs("/x", "////", "/");
        check_abs(NULL, "rel", NULL);
        check_abs("relative-cwd", "rel", NULL);
        check_abs("/x", "", NULL);
        char small[4];
        is_int(path_absolute("/", "/abcdef", small, sizeof small), -ENAMETOOLONG,
               "path_absolute reports a result too long for the buffer");

        /* component-wise containment */
        ok(path_is_beneath("/a/b", "/a"), "/a/b is beneath /a");
        ok(path_is_beneath("/a", "/a"), "/a is beneath itself");
        ok(!path_is_beneath("/ab", "/a"), "/ab is not beneath /a");
        ok(!path_is_beneath("/a", "/a/b"), "/a is not beneath /a/b");
        ok(path_is_beneath("/anything", "/"), "everything is beneath /");

        /* the workspace rule */
        const char *home = "/home/alice", *state = "/home/alice/.local/state/ringfence";
        is_int(ws("/home/alice/src/web", false, home, state), 0, "a project dir is a default");
        is_int(ws("/tmp/job", false, home, state), 0, "a dir under /tmp is a default");
        ok(ws("/", false, home, state) < 0, "/ is never a default");
        ok(ws("/home/alice", false, home, state) < 0, "the home dir is never a default");
        ok(ws("/home", false, home, state) < 0, "an ancestor of home is never a default");
        ok(ws("/etc", false, home, state) < 0, "/etc is not a default");
        ok(ws("/etc/nginx", false, home, state) < 0, "a dir inside /etc is not a default");
        ok(ws("/usr/local/src", false, home, state) < 0, "a dir inside /usr is not a default");
        ok(ws("/var", false, home, state) < 0, "/var (system state) is not a default");
        is_int(ws("/var/tmp/job", false, home, state), 0, "a dir inside /var/tmp may be");
        is_int(ws("/home/alice", true, home, state), -EPERM,
               "even explicit, home contains the state dir here");
        is_int(ws("/home/alice", true, home, "/var/lib/ringfence"), 0,
               "an explicit home workspace is the user's intent");
        is_int(ws("/etc", true, home, state), 0, "an explicit /etc is the user's intent");
        is_int(ws(state, true, home, state), -EPERM, "the state dir itself: never");
        is_int(ws("/home/alice/.local/state/ringfence/audit", true, home, state), -EPERM,
               "inside the state dir: never");
        is_int(ws("/home/alice/.local", true, home, state), -EPERM,
               "containing the state dir: never");
        is_int(ws("/proc/self", true, home, state), -EINVAL, "/proc: never");
        is_int(ws("/dev/shm/x", true, home, state), -EINVAL, "/dev: never");
        is_int(ws("/sys", true, home, state), -EINVAL, "/sys: never");
        ok(ws("relative", true, home, state) < 0, "a relative workspace is refused");

        /* run ids: UUIDv7, time-sortable */
        char a[RF_RUN_ID_LEN + 1], b[RF_RUN_ID_LEN + 1];
        regex_t re;
        regcomp(&re, "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                REG_EXTENDED | REG_NOSUB);
        is_int(rf_run_id_new(a), 0, "a run id is made");
        ok(regexec(&re, a, 0, NULL, 0) == 0, "run id %s is a UUIDv7", a);
        is_int(rf_run_id_new(b), 0, "a second run id is made");
        ok(strcmp(a, b) != 0, "two run ids differ");
        ok(strncmp(a, b, 8) <= 0, "run ids sort by time (%s <= %s)", a, b);
        regfree(&re);

        test_tls();
        test_home_tree();
        test_trustfiles();
        return done();
}
