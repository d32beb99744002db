/*
 * test_runwire.c — the daemon's typed run request to its supervisor
 * (src/supervisor/runwire.c): a request with every field survives the
 * round trip field for field, the overlay as an equal policy; each
 * malformed document is refused at its key; the encoder refuses what the
 * decoder would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/binding.h"
#include "policy/policy.h"
#include "supervisor/runwire.h"
#include "tap.h"

#define RUN "0123abcd-4567-89ab-cdef-0123456789ab"

static struct rf_policy *overlay(void)
{
        struct rf_policy *o = policy_new();
        struct rf_error err = {0};
        struct policy_publish pp;
        const char *why = "";
        char *b = NULL, why_b[256] = "";
        ok(o && secret_binding_cli(SECRET_ENV, "TOKEN=store:tok", &b, why_b, sizeof why_b) == 0,
           "an overlay, a binding (%s)", why_b);
        ok(policy_set_string(&o->agent, "ci-bot", POLICY_IDENT_MAX, &err) == 0 &&
                   policy_set_string(&o->workspace, "/srv/ws", 4096, &err) == 0 &&
                   policy_set_limit(o, "limits.memory", "536870912", &err) == 0 &&
                   policy_set_limit(o, "limits.pids", "64", &err) == 0 &&
                   policy_set_limit(o, "limits.cpus", "1.500", &err) == 0 &&
                   policy_set_limit(o, "limits.timeout", "90000ms", &err) == 0 &&
                   policy_set_string(&o->task, "T-1 \"quoted\"", POLICY_IDENT_MAX, &err) == 0 &&
                   policy_add_net_rule(o, "api.example.test:443", &err) == 0 &&
                   policy_add_env(o, "GREETING", "a\tb\nc \xc3\xa9", &err) == 0 &&
                   policy_publish_parse("8080:80", 7, &pp, &why) == 0 &&
                   policy_add_publish(o, &pp, &err) == 0 &&
                   policy_add_path(&o->read_only, &o->n_read_only, "/srv/ref", &err) == 0 &&
                   policy_add_path(&o->read_write, &o->n_read_write, "/srv/out", &err) == 0 &&
                   policy_add_net_host(o, "db.internal:10.0.0.5", &err) == 0 &&
                   policy_add_secret(o, b, &err) == 0,
           "... with what a start sets (%s)", err.msg);
        return o;
}

static char *encode(struct run_wire *w)
{
        char *doc = NULL;
        int r = run_wire_to_json(w, &doc);
        ok(r == 0, "encoded (%d)", r);
        return doc;
}

/* The document `doc` with `from` replaced by `to` (once), parsed: its error. */
static int parse_edited(const char *doc, const char *from, const char *to, struct rf_error *err)
{
        const char *at = strstr(doc, from);
        if (!at)
                return 1;
        size_t n = strlen(doc) - strlen(from) + strlen(to) + 1;
        char *e = malloc(n);
        snprintf(e, n, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
        struct run_wire w;
        memset(err, 0, sizeof *err);
        int r = run_wire_parse(e, strlen(e), &w, err);
        run_wire_clear(&w);
        free(e);
        return r;
}

int main(void)
{
        char *argv[] = {"sh", "-c", "echo \"$GREETING\"", NULL};
        char *profiles[] = {"git", "node", NULL};
        struct run_wire w = {
                .state_dir = "/var/lib/ringfence",
                .caller_uid = 1000,
                .expect_ws = true,
                .ws_dev = 2049,
                .ws_ino = UINT64_MAX,
                .log_max = 64 << 20,
                .mask_output = true,
                .keep_state = true,
                .overlay = overlay(),
                .profiles = profiles,
                .n_profiles = 2,
                .argv = argv,
                .argc = 3,
        };
        memcpy(w.run_id, RUN, sizeof RUN);
        char *doc = encode(&w);

        /* ---- the round trip ---- */
        struct run_wire g;
        struct rf_error err = {0};
        is_int(run_wire_parse(doc, strlen(doc), &g, &err), 0, "parsed back (%s)", err.msg);
        is_str(g.run_id, RUN, "run id");
        is_str(g.state_dir, "/var/lib/ringfence", "state dir");
        ok(g.caller_uid == 1000, "caller uid");
        ok(g.expect_ws && g.ws_dev == 2049 && g.ws_ino == UINT64_MAX, "workspace inode");
        ok(g.log_max == 64 << 20 && g.mask_output && g.keep_state, "log cap, masking, kept state");
        ok(g.n_profiles == 2 && !strcmp(g.profiles[0], "git") && !strcmp(g.profiles[1], "node") &&
                   !g.profiles[2],
           "profiles, in order");
        ok(g.argc == 3 && !strcmp(g.argv[2], "echo \"$GREETING\"") && !g.argv[3],
           "argv, NULL-terminated");
        char *a = NULL, *b = NULL;
        ok(g.overlay && policy_to_json(w.overlay, &a) == 0 && policy_to_json(g.overlay, &b) == 0 &&
                   !strcmp(a, b),
           "the overlay: an equal policy (canonical forms equal)");
        ok(g.overlay && g.overlay->n_env == 1 &&
                   !strcmp(g.overlay->env_values[0], "a\tb\nc \xc3\xa9"),
           "... its environment value byte for byte");
        char *again = NULL;
        ok(run_wire_to_json(&g, &again) == 0 && !strcmp(again, doc),
           "re-encoding what was parsed gives the same document");
        free(a);
        free(b);
        free(again);
        run_wire_clear(&g);
        ok(!g.argv && !g.overlay && !g.state_dir, "cleared");

        /* ---- without the optional workspace inode ---- */
        w.expect_ws = false;
        char *doc2 = encode(&w);
        ok(!strstr(doc2, "workspace_inode"), "no workspace_inode for a root caller's start");
        is_int(run_wire_parse(doc2, strlen(doc2), &g, &err), 0, "... parsed");
        ok(!g.expect_ws, "... nothing expected of the workspace");
        run_wire_clear(&g);
        free(doc2);
        w.expect_ws = true;

        /* ---- refusals, each at its key ---- */
        static const struct {
                const char *from, *to, *key;
                int code;
        } bad[] = {
                {"{\"version\":1", "{\"version\":2", "version", -EINVAL},
                {"{\"version\":1", "{\"version\":\"1\"", "version", -EINVAL},
                {"\"run\":\"0123abcd", "\"run\":\"0123ABCD", "run", -EINVAL},
                {"\"run\":\"0123abcd-", "\"run\":\"0123abcd_", "run", -EINVAL},
                {"\"state_dir\":\"/", "\"state_dir\":\"", "state_dir", -EINVAL},
                {"\"caller_uid\":1000", "\"caller_uid\":4294967295", "caller_uid", -EINVAL},
                {"\"caller_uid\":1000", "\"caller_uid\":-1", "caller_uid", -EINVAL},
                {"\"caller_uid\":1000", "\"caller_uid\":1e3", "caller_uid", -EINVAL},
                {"{\"dev\":2049,", "{\"dev\":2049,\"x\":1,", "workspace_inode", -EINVAL},
                {"\"ino\":", "\"inode\":", "workspace_inode", -EINVAL},
                {"\"log_max\":67108864", "\"log_max\":0", "log_max", -EINVAL},
                {"\"mask_output\":true", "\"mask_output\":1", "mask_output", -EINVAL},
                {"\"keep_state\":true", "\"keep_state\":null", "keep_state", -EINVAL},
                {"\"policy\":{\"", "\"policy\":{\"bogus\":1,\"", "bogus", -EINVAL},
                {"\"profiles\":[\"git\"", "\"profiles\":[\"../git\"", "profiles", -EINVAL},
                {"\"profiles\":[\"git\"", "\"profiles\":[7", "profiles", -EINVAL},
                {"\"argv\":[\"sh\",\"-c\",\"echo \\\"$GREETING\\\"\"]", "\"argv\":[]", "argv",
                 -EINVAL},
                {"\"argv\":", "\"argw\":", "argw", -EINVAL},
                {",\"keep_state\":true", "", "keep_state", -EINVAL},
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                int r = parse_edited(doc, bad[i].from, bad[i].to, &err);
                ok(r == bad[i].code && strstr(err.keypath, bad[i].key),
                   "refused: %s -> %s (%d at \"%s\": %s)", bad[i].from, bad[i].to, r, err.keypath,
                   err.msg);
        }
        static const char min_ok[] =
                "{\"version\":1,\"run\":\"" RUN "\",\"state_dir\":\"/s\",\"caller_uid\":0,"
                "\"log_max\":1,\"mask_output\":false,\"keep_state\":false,"
                "\"policy\":{\"version\":1},\"profiles\":[],\"argv\":[\"true\"]}";
        is_int(run_wire_parse(min_ok, strlen(min_ok), &g, &err), 0,
               "the least request: parsed (%s)", err.msg);
        ok(g.caller_uid == 0 && g.argc == 1 && g.n_profiles == 0 && g.overlay && !g.expect_ws,
           "... root's, one argument, no profile, an empty overlay");
        run_wire_clear(&g);
        ok(parse_edited(min_ok, "{\"version\":1}", "[]", &err) == -EINVAL &&
                   !strcmp(err.keypath, "policy"),
           "a policy that is not an object: refused at policy (%s)", err.msg);
        ok(parse_edited(min_ok, "{\"version\":1}", "{}", &err) == -EINVAL &&
                   !strcmp(err.keypath, "version"),
           "a policy without its version: refused (%s)", err.msg);
        is_int(run_wire_parse("", 0, &g, &err), -EINVAL, "an empty document: refused");
        run_wire_clear(&g);
        is_int(run_wire_parse("[]", 2, &g, &err), -EINVAL, "an array: refused");
        run_wire_clear(&g);
        int r = run_wire_parse(doc, strlen(doc) - 1, &g, &err);
        is_int(r, -EINVAL, "a cut document: refused");
        run_wire_clear(&g);

        /* ---- too many elements: refused both ways ---- */
        char *many[RUN_WIRE_ARGV_MAX + 2];
        for (size_t i = 0; i < RUN_WIRE_ARGV_MAX + 1; i++)
                many[i] = "x";
        many[RUN_WIRE_ARGV_MAX + 1] = NULL;
        struct run_wire big = w;
        big.argv = many;
        big.argc = RUN_WIRE_ARGV_MAX + 1;
        char *bdoc = NULL;
        is_int(run_wire_to_json(&big, &bdoc), -E2BIG, "the encoder: more than %d arguments",
               RUN_WIRE_ARGV_MAX);
        big.argc = RUN_WIRE_ARGV_MAX;
        ok(run_wire_to_json(&big, &bdoc) == 0, "... %d pass", RUN_WIRE_ARGV_MAX);
        is_int(parse_edited(bdoc, "\"argv\":[", "\"argv\":[\"y\",", &err), -E2BIG,
               "the decoder: more than %d arguments", RUN_WIRE_ARGV_MAX);
        free(bdoc);

        /* ---- the encoder refuses what the decoder would ---- */
        struct run_wire e = w;
        e.caller_uid = UINT32_MAX;
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: uid -1");
        e = w;
        e.state_dir = "rel";
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: a relative state dir");
        e = w;
        e.run_id[0] = 'X';
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: a bad run id");
        e = w;
        e.argc = 0;
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: no command");
        char *bad_prof[] = {"../x", NULL};
        e = w;
        e.profiles = bad_prof;
        e.n_profiles = 1;
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: not a profile name");
        char bad_utf8[] = "\xff";
        char *bad_argv[] = {bad_utf8, NULL};
        e = w;
        e.argv = bad_argv;
        e.argc = 1;
        is_int(run_wire_to_json(&e, &bdoc), -EINVAL, "the encoder: an argument not UTF-8");

        free(doc);
        policy_free(w.overlay);
        return done();
}
