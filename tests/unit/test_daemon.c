/*
 * test_daemon.c — the daemon's pure parts: API routes and request bodies
 * (status codes and messages), the operator configuration and its
 * authorisation rules, the parser's wire format (round trip; tampered
 * messages refused).
 */
#include <errno.h>
#include <string.h>

#include "daemon/api.h"
#include "daemon/config.h"
#include "daemon/scope.h"
#include "daemon/wire.h"
#include "shared/json.h"
#include "tap.h"

static int route(const char *m, const char *t, const char *body, struct api_req *r, char *why)
{
        return api_route(m, strlen(m), t, strlen(t), body, body ? strlen(body) : 0, r, why, 256);
}

static void test_routes(void)
{
        struct api_req r;
        char why[256];
        const char *id = "01a22cbe-7447-79cf-8a48-7ea8d9c44033";
        char t[128];

        is_int(route("GET", "/v1/runs", NULL, &r, why), 0, "GET /v1/runs");
        is_int(r.op, API_LIST_RUNS, "... list");
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"sh\",\"-c\",\"true\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"secrets\":[\"gh\"],\"allow_hosts\":[\"x.test:443\"],\"timeout\":\"5m\"}",
                     &r, why),
               0, "POST /v1/runs with a body");
        ok(r.op == API_START_RUN && r.argc == 3 && !strcmp(r.argv[2], "true") && r.n_secrets == 1 &&
                   r.n_allow_hosts == 1 && !strcmp(r.timeout, "5m"),
           "... argv, secrets, hosts, timeout");
        api_req_clear(&r);
        snprintf(t, sizeof t, "/v1/runs/%s", id);
        is_int(route("GET", t, NULL, &r, why), 0, "GET /v1/runs/RUN");
        ok(r.op == API_GET_RUN && !strcmp(r.run, id), "... the run id");
        snprintf(t, sizeof t, "/v1/runs/%s/kill", id);
        is_int(route("POST", t, "{\"reason\":\"stop\"}", &r, why), 0, "POST .../kill");
        ok(r.op == API_KILL_RUN && !strcmp(r.reason, "stop"), "... with its reason");
        is_int(route("POST", "/v1/agents/claude/kill", "{\"block\":true}", &r, why), 0,
               "POST /v1/agents/A/kill");
        ok(r.op == API_KILL_AGENT && r.block && !strcmp(r.agent, "claude"), "... block, agent");
        snprintf(t, sizeof t, "/v1/runs/%s/grant", id);
        is_int(route("POST", t, "{\"revoke_host\":\"api.test:443\"}", &r, why), 0,
               "POST .../grant");
        ok(r.op == API_GRANT_RUN && !r.allow && !strcmp(r.rule, "api.test:443"),
           "... revoke_host and its rule");
        is_int(route("POST", t, "{\"allow\":\"x\"}", &r, why), 400, "... another key: 400");
        /* a policy proposal: the rule exactly as the console proposes one */
        snprintf(t, sizeof t, "/v1/runs/%s/proposal", id);
        is_int(route("POST", t, "{\"rule\":\"denied.test:443\"}", &r, why), 0,
               "POST .../proposal (%s)", why);
        ok(r.op == API_PROPOSE_RUN && !strcmp(r.rule, "denied.test:443") && !strcmp(r.run, id),
           "... its rule and run");
        is_int(route("POST", t, "{\"rule\":\"[fd00::1]:8443\"}", &r, why), 0,
               "... an IPv6 destination in brackets");
        {
                static const char *const bad[] = {"{\"rule\":\"a\\\"<b:443\"}",
                                                  "{\"rule\":\"x.test\"}",
                                                  "{\"rule\":\"x.test:0\"}",
                                                  "{\"rule\":\"x.test:65536\"}",
                                                  "{\"rule\":\"x.test:0443\"}",
                                                  "{\"rule\":\"X.test:443\"}",
                                                  "{\"rule\":\"fd00::1:443\"}",
                                                  "{\"rule\":\"[x.test]:443\"}",
                                                  "{\"rule\":\":443\"}",
                                                  "{\"rule\":1}",
                                                  "{\"rule\":\"x.test:443\",\"why\":\"x\"}",
                                                  "{\"host\":\"x.test:443\"}",
                                                  "{}"};
                for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                        is_int(route("POST", t, bad[i], &r, why), 400, "a proposal %s: 400",
                               bad[i]);
        }
        is_int(route("POST", t, NULL, &r, why), 400, "... no body: 400");
        is_int(route("GET", t, NULL, &r, why), 405, "GET .../proposal: 405");
        /* a run's output: the end of its log, ?tail=N bounded */
        snprintf(t, sizeof t, "/v1/runs/%s/output", id);
        is_int(route("GET", t, NULL, &r, why), 0, "GET .../output");
        ok(r.op == API_RUN_OUTPUT && r.tail == API_TAIL_DEFAULT && !strcmp(r.run, id),
           "... the run, the default tail");
        snprintf(t, sizeof t, "/v1/runs/%s/output?tail=65536", id);
        is_int(route("GET", t, NULL, &r, why), 0, "GET .../output?tail=65536");
        is_int((int)r.tail, API_TAIL_MAX, "... the most");
        {
                static char wbuf[WIRE_MAX];
                struct wire_head h = {.conn = 7, .kind = WIRE_REQUEST}, h2;
                struct api_req r2;
                int n = wire_pack(&h, &r, wbuf, sizeof wbuf);
                ok(n > 0 && wire_unpack(wbuf, (size_t)n, &h2, &r2) == 0 &&
                           r2.op == API_RUN_OUTPUT && r2.tail == API_TAIL_MAX,
                   "... and across the parser's wire");
                api_req_clear(&r2);
                ((struct wire_head *)wbuf)->tail = API_TAIL_MAX + 1;
                ok(wire_unpack(wbuf, (size_t)n, &h2, &r2) == -EBADMSG,
                   "... a tail past the most, from the parser: refused");
                ((struct wire_head *)wbuf)->tail = 0;
                ok(wire_unpack(wbuf, (size_t)n, &h2, &r2) == -EBADMSG, "... and none at all");
        }
        {
                static const char *const bad[] = {
                        "?tail=65537",    "?tail=0",  "?tail=",    "?tail=-1",
                        "?tail=1&tail=2", "?tail=01", "?follow=1", "?tail=99999999999"};
                for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                        snprintf(t, sizeof t, "/v1/runs/%s/output%s", id, bad[i]);
                        is_int(route("GET", t, NULL, &r, why), 400, "output%s: 400", bad[i]);
                }
        }
        snprintf(t, sizeof t, "/v1/runs/%s/output", id);
        is_int(route("POST", t, NULL, &r, why), 405, "POST .../output: 405");
        /* the daemon's verification of its log */
        is_int(route("GET", "/v1/audit/verify", NULL, &r, why), 0, "GET /v1/audit/verify");
        is_int(r.op, API_AUDIT_VERIFY, "... the verification");
        is_int(route("POST", "/v1/audit/verify", NULL, &r, why), 405, "POST /v1/audit/verify: 405");
        is_int(route("GET", "/v1/audit/verify?follow=1", NULL, &r, why), 404,
               "GET /v1/audit/verify?follow=1: 404");
        is_int(route("GET", "/v1/audit/other", NULL, &r, why), 404, "GET /v1/audit/other: 404");
        {
                bool named = true;
                for (int op = 0; op < _API_OP_MAX; op++)
                        named &= strcmp(api_op_name((enum api_op)op), "?") != 0;
                ok(named, "every route has an action name (the config's actions)");
                ok(!strcmp(api_op_name(API_PROPOSE_RUN), "get-run") &&
                           !strcmp(api_op_name(API_RUN_OUTPUT), "get-run") &&
                           !strcmp(api_op_name(API_AUDIT_VERIFY), "audit"),
                   "... proposal and output need get-run, the verification audit");
        }
        is_int(route("DELETE", "/v1/agents/claude/block", NULL, &r, why), 0, "DELETE .../block");
        is_int(r.op, API_UNBLOCK_AGENT, "... unblock");
        is_int(route("GET", "/v1/audit?follow=1", NULL, &r, why), 0, "GET /v1/audit?follow=1");
        ok(r.op == API_AUDIT && r.follow, "... follow");
        api_req_clear(&r);
        is_int(route("GET", "/v1/daemon", NULL, &r, why), 0, "GET /v1/daemon");
        is_int(r.op, API_DAEMON_STATUS, "... the daemon's state");
        api_req_clear(&r);
        is_int(route("POST", "/v1/daemon", NULL, &r, why), 405, "POST /v1/daemon: 405");
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"memory\":\"512M\",\"pids\":64,\"cpus\":\"1.5\"}",
                     &r, why),
               0, "a start asking for memory, pids and cpus (%s)", why);
        ok(!strcmp(r.memory, "512M") && !strcmp(r.pids, "64") && !strcmp(r.cpus, "1.5"),
           "... kept as given, for the daemon to hold to the ceiling");
        {
                static char wbuf[WIRE_MAX];
                struct wire_head h = {.conn = 7, .kind = WIRE_REQUEST}, h2;
                struct api_req r2;
                int n = wire_pack(&h, &r, wbuf, sizeof wbuf);
                ok(n > 0 && wire_unpack(wbuf, (size_t)n, &h2, &r2) == 0 &&
                           !strcmp(r2.memory, "512M") && !strcmp(r2.pids, "64") &&
                           !strcmp(r2.cpus, "1.5"),
                   "... and across the parser's wire");
                api_req_clear(&r2);
        }
        api_req_clear(&r);
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\",\"memory\":[1]}", &r,
                     why),
               400, "memory: not a string or number: 400");
        /* publish (issue 16): checked and kept canonical, across the wire */
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"publish\":[\"1455:1455\",\"[::1]:8080:3000\"]}",
                     &r, why),
               0, "a start with publish (%s)", why);
        ok(r.n_publish == 2 && !strcmp(r.publish[0], "127.0.0.1:1455:1455") &&
                   !strcmp(r.publish[1], "[::1]:8080:3000"),
           "... kept canonical");
        {
                static char wbuf[WIRE_MAX];
                struct wire_head h = {.conn = 7, .kind = WIRE_REQUEST}, h2;
                struct api_req r2;
                int n = wire_pack(&h, &r, wbuf, sizeof wbuf);
                ok(n > 0 && wire_unpack(wbuf, (size_t)n, &h2, &r2) == 0 && r2.n_publish == 2 &&
                           !strcmp(r2.publish[1], "[::1]:8080:3000"),
                   "... and across the parser's wire");
                api_req_clear(&r2);
        }
        api_req_clear(&r);
        /* ro, rw, profiles, add_hosts (issue 16): checked, across the wire */
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"ro\":[\"/home/u/.npmrc\"],\"rw\":[\"/home/u/out\",\"/o2\"],"
                     "\"profiles\":[\"claude-code\"],\"add_hosts\":[\"a.test:10.0.0.1\"],"
                     "\"keep_state\":true}",
                     &r, why),
               0, "a start with ro, rw, profiles and add_hosts (%s)", why);
        {
                static char wbuf[WIRE_MAX];
                struct wire_head h = {.conn = 7, .kind = WIRE_REQUEST}, h2;
                struct api_req r2;
                int n = wire_pack(&h, &r, wbuf, sizeof wbuf);
                ok(n > 0 && wire_unpack(wbuf, (size_t)n, &h2, &r2) == 0 && r2.n_ro == 1 &&
                           r2.n_rw == 2 && !strcmp(r2.rw[1], "/o2") && r2.n_profiles == 1 &&
                           !strcmp(r2.profiles[0], "claude-code") && r2.n_add_hosts == 1 &&
                           !strcmp(r2.add_hosts[0], "a.test:10.0.0.1") && r2.keep_state,
                   "... across the parser's wire");
                api_req_clear(&r2);
        }
        api_req_clear(&r);
        static const char *const bad_start[][2] = {
                {"\"ro\":[\"relative/path\"]", "ro[0]: an absolute path"},
                {"\"rw\":[1]", "rw[0]: a string"},
                {"\"profiles\":[\"../x\"]", "profiles[0]: a profile name"},
                {"\"profiles\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]",
                 "profiles: an array of at most 8"},
                {"\"add_hosts\":[\"no-address\"]", "add_hosts[0]: NAME:IP"},
                {"\"keep_state\":1", "keep_state: true or false"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad_start); i++) {
                char body[512];
                snprintf(body, sizeof body,
                         "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\",%s}",
                         bad_start[i][0]);
                is_int(route("POST", "/v1/runs", body, &r, why), 400, "%s: 400", bad_start[i][0]);
                ok(strstr(why, bad_start[i][1]) != NULL, "... saying %s (%s)", bad_start[i][1],
                   why);
                api_req_clear(&r);
        }
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"publish\":[\"0.0.0.0:80:80\"]}",
                     &r, why),
               400, "publish of a non-loopback address: 400");
        ok(strstr(why, "publish[0]: only the host's loopback"), "... saying why: %s", why);
        api_req_clear(&r);
        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\","
                     "\"publish\":[\"1:1\",\"2:1\",\"3:1\",\"4:1\",\"5:1\",\"6:1\",\"7:1\",\"8:1\","
                     "\"9:1\"]}",
                     &r, why),
               400, "more than 8 published ports: 400");
        api_req_clear(&r);

        static const struct {
                const char *m, *t, *body;
                int status;
        } bad[] = {
                {"GET", "/v2/runs", NULL, 404},
                {"GET", "/v1/nothing", NULL, 404},
                {"PUT", "/v1/runs", NULL, 405},
                {"GET", "/v1/runs/nope", NULL, 404},
                {"GET", "/v1/runs/01A22CBE-7447-79CF-8A48-7EA8D9C44033", NULL, 404},
                {"POST", "/v1/runs", "{bad", 400},
                {"POST", "/v1/runs", "[1]", 400},
                {"POST", "/v1/runs", "{\"argv\":[\"x\"],\"workspace\":\"/w\"}", 400},
                {"POST", "/v1/runs", "{\"argv\":[],\"agent\":\"a\",\"workspace\":\"/w\"}", 400},
                {"POST", "/v1/runs", "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"w\"}", 400},
                {"POST", "/v1/runs",
                 "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\",\"exec\":[\"vault\"]}",
                 400},
                {"POST", "/v1/runs",
                 "{\"argv\":[\"x\"],\"agent\":\"a\",\"workspace\":\"/w\",\"secrets\":[\"../k\"]}",
                 400},
                {"POST", "/v1/agents/a%2fb/kill", NULL, 400},
                /* an agent no URL could name (kill or block it by agent) */
                {"POST", "/v1/runs", "{\"argv\":[\"x\"],\"agent\":\"x y\",\"workspace\":\"/w\"}",
                 400},
                {"POST", "/v1/runs", "{\"argv\":[\"x\"],\"agent\":\"a/b\",\"workspace\":\"/w\"}",
                 400},
                {"GET", "/v1/agents/a/kill", NULL, 405},
                {"GET", "/v1/audit?follow=2", NULL, 400},
                {"POST", "/v1/agents/a/kill", "{\"reason\":\"\\u001b[2J\"}", 400},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                is_int(route(bad[i].m, bad[i].t, bad[i].body, &r, why), bad[i].status, "%s %s: %s",
                       bad[i].m, bad[i].t, why);
        char big[API_BODY_MAX + 2];
        memset(big, ' ', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        is_int(route("POST", "/v1/runs", big, &r, why), 413, "a body over 64 KiB: 413");
}

static void test_config(void)
{
        struct dconf c;
        char why[256];
        const char *text =
                "{\"version\":1,\"socket\":\"/run/rf.sock\",\"socket_mode\":\"0666\","
                "\"grants\":[{\"uid\":1000,\"agents\":[\"claude\"],\"actions\":[\"start-run\","
                "\"kill\",\"list-runs\"]},{\"gid\":50,\"agents\":[\"*\"],\"actions\":[\"audit\"]}],"
                "\"ceiling\":{\"allow_hosts\":[\"api.test:443\"],\"max_timeout\":\"1h\"},"
                "\"secrets\":{\"gh\":{\"name\":\"GH\",\"deliver\":\"env\",\"from\":\"store:gh\","
                "\"agents\":[\"claude\"],\"uids\":[1000]},"
                "\"v\":{\"name\":\"V\",\"deliver\":\"broker\",\"exec\":[\"vault\",\"kv\"],"
                "\"uids\":[0]}}}";
        is_int(dconf_parse(text, strlen(text), &c, why, sizeof why), 0, "a configuration (%s)",
               why);
        is_int((int)c.socket_mode, 0666, "socket_mode");
        is_int((int)c.runs_per_uid, DCONF_RUNS_PER_UID, "runs_per_uid: the default");
        gid_t g50 = 50, g1 = 1;
        ok(dconf_allowed(&c, 1000, &g1, 1, API_START_RUN, "claude"), "uid 1000 starts claude runs");
        ok(!dconf_allowed(&c, 1000, &g1, 1, API_START_RUN, "other"), "... not other's");
        ok(dconf_allowed(&c, 1000, &g1, 1, API_KILL_AGENT, "claude"), "... kills claude runs");
        ok(!dconf_allowed(&c, 1000, &g1, 1, API_PAUSE_RUN, "claude"), "... may not pause them");
        ok(!dconf_allowed(&c, 1001, &g1, 1, API_LIST_RUNS, "claude"), "uid 1001: nothing");
        ok(dconf_allowed(&c, 1001, &g50, 1, API_AUDIT, NULL), "group 50 reads the audit log");
        ok(dconf_allowed(&c, 0, NULL, 0, API_BLOCK_AGENT, "x"), "root may do everything");
        ok(dconf_secret_for(&c, "gh", "claude", 1000) != NULL, "gh: claude and uid 1000");
        ok(dconf_secret_for(&c, "gh", "other", 1000) == NULL, "gh: not for another agent");
        ok(dconf_secret_for(&c, "gh", "claude", 1001) == NULL, "gh: not for another uid");
        ok(dconf_secret_for(&c, "v", "claude", 1000) == NULL, "v: root only");
        ok(c.secrets[1].binding && strstr(c.secrets[1].binding, "\"exec\":[\"vault\",\"kv\"]"),
           "an exec provider from the operator's configuration");
        dconf_clear(&c);
        const char *few = "{\"version\":1,\"ceiling\":{\"runs_per_uid\":3,"
                          "\"profiles\":[\"claude-code\",\"git\"],\"add_hosts\":[\"a:10.0.0.1\"]}}";
        is_int(dconf_parse(few, strlen(few), &c, why, sizeof why), 0, "ceiling.runs_per_uid");
        is_int((int)c.runs_per_uid, 3, "... 3");
        ok(c.n_profiles == 2 && !strcmp(c.profiles[1], "git") && c.n_add_hosts == 1 &&
                   !strcmp(c.add_hosts[0], "a:10.0.0.1"),
           "ceiling.profiles and ceiling.add_hosts");
        dconf_clear(&c);

        static const char *const bad[] = {
                "{}",
                "{\"version\":2}",
                "{\"version\":1,\"grants\":[{\"uid\":1,\"agents\":[\"a\"],\"actions\":[\"rm\"]}]}",
                "{\"version\":1,\"grants\":[{\"agents\":[\"a\"],\"actions\":[\"kill\"]}]}",
                "{\"version\":1,\"socket\":\"relative\"}",
                "{\"version\":1,\"socket_mode\":\"777\"}",
                ("{\"version\":1,\"secrets\":{\"x\":{\"name\":\"X\",\"deliver\":\"env\","
                 "\"from\":\"store:x\"}}}"),
                "{\"version\":1,\"colour\":1}",
                "{\"version\":1,\"ceiling\":{\"runs_per_uid\":0}}",
                "{\"version\":1,\"ceiling\":{\"runs_per_uid\":4097}}",
                "{\"version\":1,\"ceiling\":{\"runs_per_uid\":\"10\"}}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ok(dconf_parse(bad[i], strlen(bad[i]), &c, why, sizeof why) < 0, "refused: %s (%s)",
                   bad[i], why);
}

static void test_wire(void)
{
        struct api_req r, r2;
        struct wire_head h = {.conn = 7, .kind = WIRE_REQUEST}, h2;
        char why[256], buf[WIRE_MAX];

        is_int(route("POST", "/v1/runs",
                     "{\"argv\":[\"a\",\"b\"],\"agent\":\"x\",\"workspace\":\"/w\","
                     "\"secrets\":[\"s\"]}",
                     &r, why),
               0, "a start request");
        int n = wire_pack(&h, &r, buf, sizeof buf);
        ok(n > 0, "packed (%d bytes)", n);
        is_int(wire_unpack(buf, (size_t)n, &h2, &r2), 0, "unpacked");
        ok(h2.conn == 7 && r2.op == API_START_RUN && r2.argc == 2 && !strcmp(r2.argv[1], "b") &&
                   r2.n_secrets == 1 && !strcmp(r2.agent, "x"),
           "... the same request");
        api_req_clear(&r2);
        is_int(wire_unpack(buf, (size_t)n - 1, &h2, &r2), -EBADMSG, "truncated: refused");
        struct wire_head *w = (struct wire_head *)buf;
        w->argc = 3;
        is_int(wire_unpack(buf, (size_t)n, &h2, &r2), -EBADMSG, "a count that lies: refused");
        w->argc = 2;
        memset(w->agent, 'x', sizeof w->agent);
        is_int(wire_unpack(buf, (size_t)n, &h2, &r2), -EBADMSG, "an unterminated field: refused");
        api_req_clear(&r);
}

/* Resource limits: defaults, the ceiling's, a grant's key by key. */
static void test_limits(void)
{
        struct dconf c;
        char why[256];
        const char *text =
                "{\"version\":1,\"ceiling\":{\"memory\":\"1G\",\"log_bytes\":\"8M\"},"
                "\"grants\":[{\"uid\":1000,\"agents\":[\"a\"],\"actions\":[\"start-run\"],"
                "\"limits\":{\"memory\":\"128M\",\"pids\":64,\"cpus\":\"1.5\","
                "\"timeout\":\"10m\",\"state_bytes\":\"24K\"}}]}";
        is_int(dconf_parse(text, strlen(text), &c, why, sizeof why), 0, "limits (%s)", why);
        struct dconf_limits l = dconf_limits_for(&c, 1000, NULL, 0, "a");
        ok(l.memory == 128ULL << 20 && l.pids == 64 && l.cpus_milli == 1500 &&
                   l.timeout_ms == 600000 && l.state_bytes == 24576,
           "a grant's limits replace the ceiling's");
        ok(l.log_bytes == 8ULL << 20, "... key by key (log_bytes: the ceiling's)");
        l = dconf_limits_for(&c, 0, NULL, 0, "a");
        ok(l.memory == 1ULL << 30 && l.pids == DCONF_DEFAULT_PIDS && !l.cpus_milli,
           "root: the ceiling's, defaults where it names none");
        l = dconf_limits_for(&c, 1000, NULL, 0, "b");
        ok(l.memory == 1ULL << 30, "another agent's start (no grant): the ceiling's");
        dconf_clear(&c);
        const char *none = "{\"version\":1}";
        is_int(dconf_parse(none, strlen(none), &c, why, sizeof why), 0, "no ceiling");
        l = dconf_limits_for(&c, 0, NULL, 0, "a");
        ok(l.memory == DCONF_DEFAULT_MEMORY && l.log_bytes == 4ULL << 20 &&
                   l.state_bytes == DCONF_DEFAULT_STATE_BYTES,
           "... safe defaults: a memory limit, a 4 MiB log, a state dir share");
        ok(c.state_reserve == DCONF_DEFAULT_RESERVE && !c.reserve_pct &&
                   dconf_reserve_bytes(&c, 1ULL << 40) == 64ULL << 20,
           "... and a reserve of 64 MiB kept for root on the state dir's file system");
        ok(!l.cpus_milli && !l.timeout_ms, "... no cpus and no timeout ceiling unless set");
        dconf_clear(&c);
        /* ceiling.state_reserve: a size, "0" (none) or a share */
        const char *res = "{\"version\":1,\"ceiling\":{\"state_reserve\":\"128M\"}}";
        is_int(dconf_parse(res, strlen(res), &c, why, sizeof why), 0, "state_reserve 128M");
        ok(c.state_reserve == 128ULL << 20 && dconf_reserve_bytes(&c, 1ULL << 30) == 128ULL << 20,
           "... 128 MiB whatever the file system's size");
        dconf_clear(&c);
        res = "{\"version\":1,\"ceiling\":{\"state_reserve\":\"5%\"}}";
        is_int(dconf_parse(res, strlen(res), &c, why, sizeof why), 0, "state_reserve 5%%");
        ok(c.reserve_pct == 5 && !c.state_reserve &&
                   dconf_reserve_bytes(&c, 100ULL << 30) == 5ULL << 30 &&
                   dconf_reserve_bytes(&c, 199) == 9 && dconf_reserve_bytes(&c, 0) == 0,
           "... 5%% of the file system (100 GiB: 5 GiB; 199 bytes: 9)");
        ok(dconf_reserve_bytes(&c, UINT64_MAX) == UINT64_MAX / 100 * 5 + UINT64_MAX % 100 * 5 / 100,
           "... without overflow on the largest size");
        dconf_clear(&c);
        res = "{\"version\":1,\"ceiling\":{\"state_reserve\":\"0\"}}";
        is_int(dconf_parse(res, strlen(res), &c, why, sizeof why), 0, "state_reserve 0");
        ok(dconf_reserve_bytes(&c, 1ULL << 30) == 0, "... turns the reserve off");
        dconf_clear(&c);
        static const char *const bad[] = {
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"lots\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"0%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"51%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"-1%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"1.5%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"100%\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"-64M\"}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":true}}",
                "{\"version\":1,\"ceiling\":{\"state_reserve\":\"99999999999999999999\"}}",
                ("{\"version\":1,\"grants\":[{\"uid\":1,\"agents\":[\"a\"],\"actions\":"
                 "[\"kill\"],\"limits\":{\"state_reserve\":\"1G\"}}]}"),
                "{\"version\":1,\"ceiling\":{\"memory\":\"lots\"}}",
                "{\"version\":1,\"ceiling\":{\"log_bytes\":\"1\"}}",
                "{\"version\":1,\"ceiling\":{\"timeout\":\"1h\"}}",
                ("{\"version\":1,\"grants\":[{\"uid\":1,\"agents\":[\"a\"],\"actions\":"
                 "[\"kill\"],\"limits\":{\"disk\":\"1G\"}}]}"),
                ("{\"version\":1,\"grants\":[{\"uid\":1,\"agents\":[\"a\"],\"actions\":"
                 "[\"kill\"],\"all_uids\":1}]}"),
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ok(dconf_parse(bad[i], strlen(bad[i]), &c, why, sizeof why) < 0, "refused: %s (%s)",
                   bad[i], why);
}

static bool sees(struct audit_scope *s, const char *line)
{
        struct json_node *o = NULL;
        struct rf_error err = {0};
        if (json_parse(line, strlen(line), &o, &err) < 0)
                return false;
        bool v = audit_scope_visible(s, o);
        json_node_free(o);
        return v;
}

/* Audit read scopes: the grants' agents, the caller's own runs. */
static void test_scope(void)
{
        struct dconf c;
        char why[256];
        const char *text = "{\"version\":1,\"grants\":["
                           "{\"uid\":1000,\"agents\":[\"x\"],\"actions\":[\"audit\"]},"
                           "{\"gid\":50,\"agents\":[\"z\"],\"actions\":[\"audit\"],"
                           "\"all_uids\":true}]}";
        is_int(dconf_parse(text, strlen(text), &c, why, sizeof why), 0, "audit grants (%s)", why);
        struct json_buf j = {0};
        ok(!dconf_audit_scope(&c, 0, NULL, 0, &j), "root: no scope");
        gid_t g50 = 50;
        ok(dconf_audit_scope(&c, 1000, &g50, 1, &j) && !j.error, "uid 1000 in group 50: a scope");
        is_str(j.data, "{\"uid\":1000,\"own\":[\"x\"],\"all\":[\"z\"]}", "... its text");
        struct audit_scope *s = NULL;
        is_int(audit_scope_parse(j.data, j.len, &s), 0, "... parses");
        json_buf_done(&j);
        dconf_clear(&c);
        /* uid 1000's run of x (through the daemon), uid 2000's run of x,
         * a CLI run of x by uid 1000, a run of y, one of z by anyone */
        ok(sees(s,
                "{\"event\":\"control.start\",\"run\":\"r1\",\"agent\":\"x\",\"actor_uid\":1000}"),
           "its own run of x: control.start");
        ok(sees(s, "{\"event\":\"run.start\",\"run\":\"r1\",\"agent\":\"x\",\"started_by\":\"uid:0("
                   "root)\"}"),
           "... its run.start (started by the daemon, as root)");
        ok(sees(s, "{\"event\":\"egress.deny\",\"run\":\"r1\"}"), "... and its other records");
        ok(!sees(s,
                 "{\"event\":\"control.start\",\"run\":\"r2\",\"agent\":\"x\",\"actor_uid\":2000}"),
           "another uid's run of x: not shown");
        ok(!sees(s, "{\"event\":\"run.start\",\"run\":\"r2\",\"agent\":\"x\",\"started_by\":\"uid:"
                    "0(root)\"}"),
           "... nor its run.start");
        ok(!sees(s, "{\"event\":\"egress.deny\",\"run\":\"r2\"}"), "... nor its other records");
        ok(sees(s, "{\"event\":\"run.start\",\"run\":\"r3\",\"agent\":\"x\",\"started_by\":\"uid:"
                   "1000(me)\"}"),
           "its command-line run of x");
        ok(!sees(s,
                 "{\"event\":\"control.start\",\"run\":\"r4\",\"agent\":\"y\",\"actor_uid\":1000}"),
           "its run of an agent no grant names: not shown");
        ok(sees(s,
                "{\"event\":\"control.start\",\"run\":\"r5\",\"agent\":\"z\",\"actor_uid\":2000}"),
           "all_uids: another uid's run of z");
        ok(!sees(s, "{\"event\":\"egress.deny\",\"run\":\"r9\"}"),
           "a run never seen start: not shown");
        ok(sees(s, "{\"event\":\"control.block\",\"agent\":\"z\"}"),
           "a record of no run naming an all_uids agent: shown");
        ok(!sees(s, "{\"event\":\"control.block\",\"agent\":\"x\"}"),
           "... naming an own-runs agent: not shown");
        ok(!sees(s, "{\"event\":\"secret.set\",\"name\":\"k\"}"), "... naming none: not shown");
        s = audit_scope_free(s);
        static const char *const bad[] = {"{}", "{\"uid\":1,\"own\":[1]}", "{\"uid\":1,\"x\":[]}",
                                          "[]"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                ok(audit_scope_parse(bad[i], strlen(bad[i]), &s) < 0 && !s, "scope refused: %s",
                   bad[i]);
}

int main(void)
{
        test_routes();
        test_config();
        test_wire();
        test_limits();
        test_scope();
        return done();
}
