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
#include "daemon/wire.h"
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
        is_int(route("DELETE", "/v1/agents/claude/block", NULL, &r, why), 0, "DELETE .../block");
        is_int(r.op, API_UNBLOCK_AGENT, "... unblock");
        is_int(route("GET", "/v1/audit?follow=1", NULL, &r, why), 0, "GET /v1/audit?follow=1");
        ok(r.op == API_AUDIT && r.follow, "... follow");

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
        const char *few = "{\"version\":1,\"ceiling\":{\"runs_per_uid\":3}}";
        is_int(dconf_parse(few, strlen(few), &c, why, sizeof why), 0, "ceiling.runs_per_uid");
        is_int((int)c.runs_per_uid, 3, "... 3");
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

int main(void)
{
        test_routes();
        test_config();
        test_wire();
        return done();
}
