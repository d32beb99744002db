/*
 * test_policy.c — unit tests for src/policy: parsing good and bad policies
 * (every error path with its exact file:line:col, key path and message),
 * sizes/durations/cpus including overflow, the CLI setters, merge, limits,
 * defaults, loading files, and the canonical JSON output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/binding.h"
#include "policy/policy.h"
#include "shared/json.h"
#include "tap.h"

static struct rf_policy *parse_ok(const char *doc, const char *name)
{
        struct rf_policy *p = NULL;
        struct rf_error e = {0};
        int r = policy_parse(doc, strlen(doc), "p.json", &p, &e);

        if (!is_int(r, 0, "%s: parses", name)) {
                char line[1024];
                rf_error_format(&e, line, sizeof line);
                diag("%s", line);
        }
        return p;
}

/* Parse `doc` (length given, so embedded NULs count), expect failure `code` and the formatted line
 * `want`. */
static void check_fail_len(const char *doc, size_t len, int code, const char *want)
{
        struct rf_policy *p = (struct rf_policy *)0x1;
        struct rf_error e = {0};
        char got[1024];
        int r;

        r = policy_parse(doc, len, "p.json", &p, &e);
        is_int(r, code, "%s: return code", want);
        rf_error_format(&e, got, sizeof got);
        is_str(got, want, "%s", want);
        ok(p == (struct rf_policy *)0x1, "%s: *ret untouched", want);
        ok(!strchr(got, '\n') && !strchr(got, '\x1b'), "%s: one printable line", want);
}

#define FAIL(doc, code, want) check_fail_len((doc), sizeof(doc) - 1, (code), (want))

static const char *full_policy =
        "{\n"
        "  \"version\": 1,\n"
        "  \"identity\": {\"agent\": \"claude\", \"on_behalf_of\": \"alice@example.com\",\n"
        "               \"task\": \"T-1\", \"project\": \"web\", \"triggered_by\": \"run:42\"},\n"
        "  \"workspace\": \"/abs//path/\",\n"
        "  \"filesystem\": {\"read_only\": [\"/opt/tools\", \"/usr/share//doc/\"],\n"
        "                 \"read_write\": [\"/var/cache/x\"],\n"
        "                 \"tmp_size\": \"512M\", \"home_size\": 1048576, \"shm_size\": \"64k\"},\n"
        "  \"env\": {\"LANG\": \"C.UTF-8\", \"MULTI\": \"a\\nb\", \"A_1\": \"\"},\n"
        "  \"limits\": {\"timeout\": \"30m\", \"memory\": \"2G\", \"pids\": 512, \"cpus\": 1.5,\n"
        "             \"nofile\": 1024}\n"
        "}\n";

static void test_parse_good(void)
{
        struct rf_policy *p = parse_ok(full_policy, "full policy");
        if (!p) {
                ok(false, "cannot check fields");
                return;
        }
        is_int(p->version, 1, "version");
        is_str(p->agent, "claude", "agent");
        is_str(p->on_behalf_of, "alice@example.com", "on_behalf_of");
        is_str(p->task, "T-1", "task");
        is_str(p->project, "web", "project");
        is_str(p->triggered_by, "run:42", "triggered_by");
        is_str(p->workspace, "/abs/path", "workspace normalised");
        is_int(p->n_read_only, 2, "two read_only paths");
        is_str(p->read_only[0], "/opt/tools", "read_only[0]");
        is_str(p->read_only[1], "/usr/share/doc", "read_only[1] normalised");
        is_int(p->n_read_write, 1, "one read_write path");
        is_str(p->read_write[0], "/var/cache/x", "read_write[0]");
        ok(p->tmp_size == 512ULL << 20, "tmp_size 512M");
        ok(p->home_size == 1048576, "home_size as integer bytes");
        ok(p->shm_size == 64ULL << 10, "shm_size 64k (suffix case-insensitive)");
        is_int(p->n_env, 3, "three env entries");
        is_str(p->env_names[0], "LANG", "env name 0 (document order)");
        is_str(p->env_values[0], "C.UTF-8", "env value 0");
        is_str(p->env_values[1], "a\nb", "env value may hold a newline");
        is_str(p->env_values[2], "", "env value may be empty");
        ok(p->timeout_ms == 30 * 60 * 1000, "timeout 30m");
        ok(p->memory == 2ULL << 30, "memory 2G");
        ok(p->pids == 512, "pids");
        ok(p->cpus_milli == 1500, "cpus 1.5 -> 1500");
        ok(p->nofile == 1024, "nofile");
        policy_free(p);

        p = parse_ok("{\"version\":1}", "minimal policy");
        ok(p && !p->agent && !p->workspace && p->n_read_only == 0 && p->n_env == 0 &&
                   p->memory == 0 && p->tmp_size == 0,
           "minimal policy leaves everything unset");
        is_int(policy_apply_defaults(p), 0, "apply defaults");
        is_str(p ? p->agent : NULL, "agent", "default agent");
        ok(p && p->tmp_size == POLICY_DEFAULT_TMP_SIZE &&
                   p->home_size == POLICY_DEFAULT_HOME_SIZE &&
                   p->shm_size == POLICY_DEFAULT_SHM_SIZE,
           "default tmpfs sizes");
        policy_free(p);

        p = parse_ok("{\"identity\":{},\"filesystem\":{\"read_only\":[]},\"env\":{},\"limits\":{},"
                     "\"version\":1}",
                     "empty sections, version last");
        policy_free(p);

        p = parse_ok("{\"version\":1,\"filesystem\":{\"read_only\":[\"/a\",\"/a/\",\"//a\"]}}",
                     "duplicate paths");
        is_int(p ? p->n_read_only : 0, 1, "duplicate paths (after normalising) are kept once");
        policy_free(p);

        p = parse_ok(
                "{\"version\":1,\"filesystem\":{\"read_only\":[\"/a\"],\"read_write\":[\"/a/b\"]}}",
                "nested ro/rw");
        ok(p && p->n_read_only == 1 && p->n_read_write == 1, "nested paths in ro and rw are fine");
        policy_free(p);

        p = parse_ok("{\"version\":1,\"workspace\":\"/\",\"limits\":{\"cpus\":2,\"pids\":4194304,"
                     "\"nofile\":1073741824,\"memory\":1}}",
                     "edge values");
        ok(p && p->cpus_milli == 2000 && p->pids == POLICY_PIDS_MAX &&
                   p->nofile == POLICY_NOFILE_MAX && p->memory == 1,
           "maximum pids/nofile, integer cpus, 1-byte memory");
        is_str(p ? p->workspace : NULL, "/", "workspace / stays /");
        policy_free(p);

        p = parse_ok("{\"version\":1,\"limits\":{\"cpus\":0.001}}", "smallest cpus");
        ok(p && p->cpus_milli == 1, "cpus 0.001 -> 1");
        policy_free(p);
        p = parse_ok("{\"version\":1,\"limits\":{\"cpus\":15e-1}}", "cpus with exponent");
        ok(p && p->cpus_milli == 1500, "cpus 15e-1 -> 1500");
        policy_free(p);
        p = parse_ok("{\"version\":1,\"identity\":{\"agent\":\"Zoë \\\"the\\\" agent/日本\"}}",
                     "UTF-8 and quotes in identity");
        is_str(p ? p->agent : NULL, "Zoë \"the\" agent/日本", "identity keeps UTF-8 and quotes");
        policy_free(p);
}

static void test_top_level_errors(void)
{
        FAIL("", -EINVAL, "p.json:1:1: unexpected end of input, expected a value");
        FAIL("[]", -EINVAL, "p.json:1:1: expected a JSON object at the top level, got an array");
        FAIL("\"x\"", -EINVAL, "p.json:1:1: expected a JSON object at the top level, got a string");
        FAIL("{}", -EINVAL,
             "p.json:1:1: version: missing required key (this ringfence reads version 1)");
        FAIL("\n  {\"limits\": {}}", -EINVAL,
             "p.json:2:3: version: missing required key (this ringfence reads version 1)");
        FAIL("{\"version\": 2}", -EINVAL,
             "p.json:1:13: version: unsupported policy version 2 (this ringfence reads version "
             "1)");
        FAIL("{\"version\": 0}", -EINVAL,
             "p.json:1:13: version: unsupported policy version 0 (this ringfence reads version "
             "1)");
        FAIL("{\"version\": -1}", -EINVAL,
             "p.json:1:13: version: unsupported policy version -1 (this ringfence reads version "
             "1)");
        FAIL("{\"version\": 99999999999999999999}", -EINVAL,
             "p.json:1:13: version: unsupported policy version 99999999999999999999 (this "
             "ringfence reads version 1)");
        FAIL("{\"version\": \"1\"}", -EINVAL,
             "p.json:1:13: version: expected an integer, got a string");
        FAIL("{\"version\": 1.0}", -EINVAL, "p.json:1:13: version: expected an integer, got 1.0");
        FAIL("{\"version\": null}", -EINVAL, "p.json:1:13: version: expected an integer, got null");
        /* the version is judged before any other key */
        FAIL("{\"network\": {}, \"bogus\": 1, \"version\": 2}", -EINVAL,
             "p.json:1:40: version: unsupported policy version 2 (this ringfence reads version "
             "1)");
        FAIL("{\"version\": 1, \"verison\": 1}", -EINVAL,
             "p.json:1:16: verison: unknown key (expected one of: version, identity, workspace, "
             "filesystem, env, limits, audit, network, secrets)");
        FAIL("{\"version\": 1,\n \"network\": {\"allow\": [\"exa mple.com\"]}}", -EINVAL,
             "p.json:2:24: network.allow[0]: \"exa mple.com\": space or control character in host "
             "name");
        FAIL("{\"version\": 1, \"secrets\": {}}", -EINVAL,
             "p.json:1:27: secrets: expected an array of bindings, got an object");
        FAIL("{\"version\": 1, \"secrets\": [{\"name\": \"T\", \"deliver\": \"env\", "
             "\"from\": \"store:a\", \"exec\": [\"x\"]}]}",
             -EINVAL, "p.json:1:28: secrets[0]: exactly one of \"from\" and \"exec\"");
        FAIL("{\"version\": 1, \"version\": 1}", -EINVAL,
             "p.json:1:16: version: duplicate key (first at line 1, column 2)");
        FAIL("{\"version\": 1} x", -EINVAL, "p.json:1:16: trailing data after the JSON document");
        FAIL("{\"version\": 1, // comment\n}", -EINVAL,
             "p.json:1:16: comments are not allowed in JSON");
        FAIL("{\"version\": 1,}", -EINVAL, "p.json:1:15: trailing comma in object");
        FAIL("{\"version\": 1, \"\\u001b[2J\": 1}", -EINVAL,
             "p.json:1:16: [\"\\u001b[2J\"]: unknown key (expected one of: version, identity, "
             "workspace, filesystem, env, limits, audit, network, secrets)");
        FAIL("{\"version\":1,\"identity\":[]}", -EINVAL,
             "p.json:1:25: identity: expected an object, got an array");
        FAIL("{\"version\":1,\"filesystem\":\"rw\"}", -EINVAL,
             "p.json:1:27: filesystem: expected an object, got a string");
        FAIL("{\"version\":1,\"limits\":null}", -EINVAL,
             "p.json:1:23: limits: expected an object, got null");
}

static void test_identity_errors(void)
{
        FAIL("{\"version\":1,\"identity\":{\"agnet\":\"x\"}}", -EINVAL,
             "p.json:1:26: identity.agnet: unknown key (expected one of: agent, on_behalf_of, "
             "task, project, triggered_by, audience)");
        FAIL("{\"version\":1,\"identity\":{\"agent\":\"\"}}", -EINVAL,
             "p.json:1:34: identity.agent: must not be empty");
        FAIL("{\"version\":1,\"identity\":{\"task\":42}}", -EINVAL,
             "p.json:1:33: identity.task: expected a string, got a number");
        FAIL("{\"version\":1,\"identity\":{\"project\":\"a\\u0007b\"}}", -EINVAL,
             "p.json:1:36: identity.project: contains a control, invisible or bidirectional "
             "character");
        FAIL("{\"version\":1,\"identity\":{\"on_behalf_of\":\"ad\\u202emin\"}}", -EINVAL,
             "p.json:1:41: identity.on_behalf_of: contains a control, invisible or bidirectional "
             "character");
        FAIL("{\"version\":1,\"identity\":{\"agent\":\"a\\u200bb\"}}", -EINVAL,
             "p.json:1:34: identity.agent: contains a control, invisible or bidirectional "
             "character");

        char doc[600];
        char big[POLICY_IDENT_MAX + 2];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"identity\":{\"triggered_by\":\"%s\"}}", big);
        check_fail_len(doc, strlen(doc), -EINVAL,
                       "p.json:1:41: identity.triggered_by: longer than 256 bytes");
        big[POLICY_IDENT_MAX] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"identity\":{\"triggered_by\":\"%s\"}}", big);
        struct rf_policy *p = parse_ok(doc, "identity of exactly 256 bytes");
        policy_free(p);
}

static void test_path_errors(void)
{
        FAIL("{\"version\":1,\"workspace\":\"rel/dir\"}", -EINVAL,
             "p.json:1:26: workspace: \"rel/dir\" is not an absolute path");
        FAIL("{\"version\":1,\"workspace\":\"\"}", -EINVAL,
             "p.json:1:26: workspace: \"\" is not an absolute path");
        FAIL("{\"version\":1,\"workspace\":\"/a/../etc\"}", -EINVAL,
             "p.json:1:26: workspace: \"/a/../etc\" must not contain \".\" or \"..\" components");
        FAIL("{\"version\":1,\"workspace\":\"/a/./b\"}", -EINVAL,
             "p.json:1:26: workspace: \"/a/./b\" must not contain \".\" or \"..\" components");
        FAIL("{\"version\":1,\"workspace\":\"/..\"}", -EINVAL,
             "p.json:1:26: workspace: \"/..\" must not contain \".\" or \"..\" components");
        FAIL("{\"version\":1,\"workspace\":\"/a/\\nb\"}", -EINVAL,
             "p.json:1:26: workspace: \"/a/\\nb\" contains a control character");
        FAIL("{\"version\":1,\"workspace\":[\"/a\"]}", -EINVAL,
             "p.json:1:26: workspace: expected a string (an absolute path), got an array");
        FAIL("{\"version\":1,\"filesystem\":{\"read_onyl\":[]}}", -EINVAL,
             "p.json:1:28: filesystem.read_onyl: unknown key (expected one of: read_only, "
             "read_write, protected, rootfs, tmp_size, home_size, shm_size)");
        FAIL("{\"version\":1,\"filesystem\":{\"read_only\":\"/opt\"}}", -EINVAL,
             "p.json:1:40: filesystem.read_only: expected an array of absolute paths, got a "
             "string");
        FAIL("{\"version\":1,\"filesystem\":{\"read_only\":[\"/ok\",\n    \"opt\"]}}", -EINVAL,
             "p.json:2:5: filesystem.read_only[1]: \"opt\" is not an absolute path");
        FAIL("{\"version\":1,\"filesystem\":{\"read_write\":[\"/ok\", 7]}}", -EINVAL,
             "p.json:1:49: filesystem.read_write[1]: expected a string (an absolute path), got a "
             "number");
        FAIL("{\"version\":1,\"filesystem\":{\"read_only\":[\"/x\"],\"read_write\":[\"/y\",\"/x/"
             "\"]}}",
             -EINVAL,
             "p.json:1:66: filesystem.read_write[1]: \"/x/\" is also in filesystem.read_only");
        FAIL("{\"version\":1,\"filesystem\":{\"read_write\":[\"/x\"],\"read_only\":[\"//x\"]}}",
             -EINVAL,
             "p.json:1:61: filesystem.read_only[0]: \"//x\" is also in filesystem.read_write");

        /* a long hostile path is shortened in the message, the line stays one line */
        char doc[5000];
        char path[4000];
        memset(path, 'a', sizeof path - 1);
        path[sizeof path - 1] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", path);
        struct rf_policy *p = NULL;
        struct rf_error e = {0};
        is_int(policy_parse(doc, strlen(doc), "p.json", &p, &e), -EINVAL, "long relative path");
        ok(strlen(e.msg) < 200 && strstr(e.msg, "...\" is not an absolute path"),
           "long value is truncated in the message: %s", e.msg);

        /* a value that just fits is shown whole; one byte more and it is cut */
        memset(path, 'a', 127);
        path[127] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", path);
        e = (struct rf_error){0};
        policy_parse(doc, strlen(doc), "p.json", &p, &e);
        ok(!strstr(e.msg, "...") && strstr(e.msg, path), "127-byte value fits: not cut");
        memset(path, 'a', 128);
        path[128] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", path);
        e = (struct rf_error){0};
        policy_parse(doc, strlen(doc), "p.json", &p, &e);
        ok(strstr(e.msg, "aaa...\" is not") != NULL, "128-byte value is cut: %s", e.msg);
        /* never cut inside a UTF-8 character */
        strcpy(path, "r");
        for (int i = 0; i < 70; i++)
                strcat(path, "é");
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", path);
        e = (struct rf_error){0};
        policy_parse(doc, strlen(doc), "p.json", &p, &e);
        ok(json_utf8_valid(e.msg, strlen(e.msg), NULL), "cut message is valid UTF-8");

        /* path length limit */
        char *big = malloc(POLICY_PATH_MAX + 64);
        if (!big)
                abort();
        big[0] = '/';
        memset(big + 1, 'b', POLICY_PATH_MAX);
        big[POLICY_PATH_MAX + 1] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", big);
        e = (struct rf_error){0};
        is_int(policy_parse(doc, strlen(doc), "p.json", &p, &e), -EINVAL, "path over the limit");
        ok(strstr(e.msg, "is too long") != NULL, "path too long message");
        big[POLICY_PATH_MAX] = '\0';
        snprintf(doc, sizeof doc, "{\"version\":1,\"workspace\":\"%s\"}", big);
        p = parse_ok(doc, "path of exactly POLICY_PATH_MAX bytes");
        policy_free(p);
        free(big);

        /* entry limit */
        size_t cap = 32 + (POLICY_PATHS_MAX + 1) * 12;
        char *list = malloc(cap);
        if (!list)
                abort();
        size_t used = (size_t)snprintf(list, cap, "{\"version\":1,\"filesystem\":{\"read_only\":[");
        for (int i = 0; i < POLICY_PATHS_MAX; i++)
                used += (size_t)snprintf(list + used, cap - used, "%s\"/p%d\"", i ? "," : "", i);
        snprintf(list + used, cap - used, "]}}");
        p = parse_ok(list, "256 read_only paths");
        policy_free(p);
        snprintf(list + used, cap - used, ",\"/extra\"]}}");
        e = (struct rf_error){0};
        p = NULL;
        is_int(policy_parse(list, strlen(list), "p.json", &p, &e), -E2BIG, "257 paths refused");
        is_str(e.keypath, "filesystem.read_only[256]", "limit keypath names the extra entry");
        is_str(e.msg, "more than 256 paths", "path limit message");
        is_int(e.col, used + 2, "path limit at the extra entry");
        free(list);
}

static void test_size_errors(void)
{
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"2X\"}}", -EINVAL,
             "p.json:1:33: limits.memory: invalid size \"2X\" (expected N, NK, NM or NG, e.g. "
             "\"512M\")");
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"2 G\"}}", -EINVAL,
             "p.json:1:33: limits.memory: invalid size \"2 G\" (expected N, NK, NM or NG, e.g. "
             "\"512M\")");
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"1T\"}}", -EINVAL,
             "p.json:1:33: limits.memory: invalid size \"1T\" (expected N, NK, NM or NG, e.g. "
             "\"512M\")");
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"17179869184G\"}}", -EINVAL,
             "p.json:1:33: limits.memory: size \"17179869184G\" is too large");
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"99999999999999999999999\"}}", -EINVAL,
             "p.json:1:33: limits.memory: size \"99999999999999999999999\" is too large");
        FAIL("{\"version\":1,\"limits\":{\"memory\":\"0\"}}", -EINVAL,
             "p.json:1:33: limits.memory: must be greater than zero");
        FAIL("{\"version\":1,\"limits\":{\"memory\":0}}", -EINVAL,
             "p.json:1:33: limits.memory: must be greater than zero");
        FAIL("{\"version\":1,\"limits\":{\"memory\":-5}}", -EINVAL,
             "p.json:1:33: limits.memory: -5 is out of range");
        FAIL("{\"version\":1,\"limits\":{\"memory\":18446744073709551616}}", -EINVAL,
             "p.json:1:33: limits.memory: 18446744073709551616 is out of range");
        FAIL("{\"version\":1,\"limits\":{\"memory\":1.5}}", -EINVAL,
             "p.json:1:33: limits.memory: expected an integer number of bytes or a string like "
             "\"512M\", got 1.5");
        FAIL("{\"version\":1,\"filesystem\":{\"tmp_size\":true}}", -EINVAL,
             "p.json:1:39: filesystem.tmp_size: expected a size (a string like \"512M\" or an "
             "integer number of bytes), got a boolean");
        FAIL("{\"version\":1,\"filesystem\":{\"shm_size\":\"\\u001b]0;x\"}}", -EINVAL,
             "p.json:1:39: filesystem.shm_size: invalid size \"\\u001b]0;x\" (expected N, NK, NM "
             "or NG, e.g. \"512M\")");
}

static void test_limit_errors(void)
{
        FAIL("{\"version\":1,\"limits\":{\"timeout\":\"30\"}}", -EINVAL,
             "p.json:1:34: limits.timeout: invalid duration \"30\" (expected N followed by ms, s, "
             "m or h, e.g. \"30m\")");
        FAIL("{\"version\":1,\"limits\":{\"timeout\":30}}", -EINVAL,
             "p.json:1:34: limits.timeout: expected a duration string like \"30m\" (units ms, s, "
             "m, h), got a number");
        FAIL("{\"version\":1,\"limits\":{\"timeout\":\"30M\"}}", -EINVAL,
             "p.json:1:34: limits.timeout: invalid duration \"30M\" (expected N followed by ms, "
             "s, m or h, e.g. \"30m\")");
        FAIL("{\"version\":1,\"limits\":{\"timeout\":\"0s\"}}", -EINVAL,
             "p.json:1:34: limits.timeout: must be greater than zero");
        FAIL("{\"version\":1,\"limits\":{\"timeout\":\"5124095576030432h\"}}", -EINVAL,
             "p.json:1:34: limits.timeout: duration \"5124095576030432h\" is too large");
        FAIL("{\"version\":1,\"limits\":{\"pids\":\"512\"}}", -EINVAL,
             "p.json:1:31: limits.pids: expected an integer, got a string");
        FAIL("{\"version\":1,\"limits\":{\"pids\":{}}}", -EINVAL,
             "p.json:1:31: limits.pids: expected an integer, got an object");
        FAIL("{\"version\":1,\"limits\":{\"pids\":1.5}}", -EINVAL,
             "p.json:1:31: limits.pids: expected an integer, got 1.5");
        FAIL("{\"version\":1,\"limits\":{\"pids\":1e3}}", -EINVAL,
             "p.json:1:31: limits.pids: expected an integer, got 1e3");
        FAIL("{\"version\":1,\"limits\":{\"pids\":0}}", -EINVAL,
             "p.json:1:31: limits.pids: must be between 1 and 4194304");
        FAIL("{\"version\":1,\"limits\":{\"pids\":-1}}", -EINVAL,
             "p.json:1:31: limits.pids: must be between 1 and 4194304");
        FAIL("{\"version\":1,\"limits\":{\"pids\":4194305}}", -EINVAL,
             "p.json:1:31: limits.pids: must be between 1 and 4194304");
        FAIL("{\"version\":1,\"limits\":{\"pids\":99999999999999999999999}}", -EINVAL,
             "p.json:1:31: limits.pids: must be between 1 and 4194304");
        FAIL("{\"version\":1,\"limits\":{\"nofile\":1073741825}}", -EINVAL,
             "p.json:1:33: limits.nofile: must be between 1 and 1073741824");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":1.2345}}", -EINVAL,
             "p.json:1:31: limits.cpus: at most 3 decimal places are allowed, got 1.2345");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":0}}", -EINVAL,
             "p.json:1:31: limits.cpus: must be greater than 0 and at most 4096");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":0.0}}", -EINVAL,
             "p.json:1:31: limits.cpus: must be greater than 0 and at most 4096");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":-1}}", -EINVAL,
             "p.json:1:31: limits.cpus: must be greater than 0 and at most 4096");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":4096.001}}", -EINVAL,
             "p.json:1:31: limits.cpus: must be greater than 0 and at most 4096");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":1e300}}", -EINVAL,
             "p.json:1:31: limits.cpus: must be greater than 0 and at most 4096");
        FAIL("{\"version\":1,\"limits\":{\"cpus\":\"1.5\"}}", -EINVAL,
             "p.json:1:31: limits.cpus: expected a number, got a string");
        FAIL("{\"version\":1,\"limits\":{\"disk\":\"1G\"}}", -EINVAL,
             "p.json:1:24: limits.disk: unknown key (expected one of: timeout, memory, pids, "
             "cpus, nofile, egress_bytes, egress_connections)");
}

static void test_env_errors(void)
{
        FAIL("{\"version\":1,\"env\":[]}", -EINVAL,
             "p.json:1:20: env: expected an object of NAME: \"value\", got an array");
        FAIL("{\"version\":1,\"env\":{\"1X\":\"v\"}}", -EINVAL,
             "p.json:1:21: env.1X: invalid environment variable name (expected "
             "[A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)");
        FAIL("{\"version\":1,\"env\":{\"A-B\":\"v\"}}", -EINVAL,
             "p.json:1:21: env.A-B: invalid environment variable name (expected "
             "[A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)");
        FAIL("{\"version\":1,\"env\":{\"A=B\":\"v\"}}", -EINVAL,
             "p.json:1:21: env[\"A=B\"]: invalid environment variable name (expected "
             "[A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)");
        FAIL("{\"version\":1,\"env\":{\"\":\"v\"}}", -EINVAL,
             "p.json:1:21: env[\"\"]: invalid environment variable name (expected "
             "[A-Za-z_][A-Za-z0-9_]*, at most 128 bytes)");
        FAIL("{\"version\":1,\"env\":{\"RINGFENCE_RUN_ID\":\"forged\"}}", -EINVAL,
             "p.json:1:21: env.RINGFENCE_RUN_ID: names starting with RINGFENCE_ are reserved for "
             "ringfence");
        FAIL("{\"version\":1,\"env\":{\"A\":1}}", -EINVAL,
             "p.json:1:25: env.A: expected a string, got a number");
        FAIL("{\"version\":1,\"env\":{\"A\":null}}", -EINVAL,
             "p.json:1:25: env.A: expected a string, got null");
        FAIL("{\"version\":1,\"env\":{\"A\":\"1\",\"A\":\"2\"}}", -EINVAL,
             "p.json:1:29: env.A: duplicate key (first at line 1, column 21)");

        struct rf_policy *p = parse_ok("{\"version\":1,\"env\":{\"HOME\":\"/h\",\"PATH\":\"/bin\","
                                       "\"ringfence_x\":\"lower case is not reserved\"}}",
                                       "HOME, PATH and lower-case ringfence_ are allowed");
        is_int(p ? p->n_env : 0, 3, "three env entries");
        policy_free(p);

        size_t cap = 64 + (POLICY_ENV_MAX + 1) * 16;
        char *doc = malloc(cap);
        if (!doc)
                abort();
        size_t used = (size_t)snprintf(doc, cap, "{\"version\":1,\"env\":{");
        for (int i = 0; i < POLICY_ENV_MAX; i++)
                used += (size_t)snprintf(doc + used, cap - used, "%s\"V%d\":\"x\"", i ? "," : "",
                                         i);
        snprintf(doc + used, cap - used, "}}");
        p = parse_ok(doc, "256 env entries");
        policy_free(p);
        snprintf(doc + used, cap - used, ",\"EXTRA\":\"x\"}}");
        struct rf_error e = {0};
        p = NULL;
        is_int(policy_parse(doc, strlen(doc), "p.json", &p, &e), -E2BIG, "257 env entries refused");
        is_str(e.keypath, "env.EXTRA", "env limit keypath");
        is_str(e.msg, "more than 256 environment variables", "env limit message");
        is_int(e.col, used + 2, "env limit at the extra key");
        free(doc);
}

static void test_misc_parse(void)
{
        struct rf_policy *p = NULL;
        struct rf_error e = {0};
        char line[1024];

        /* no file name */
        is_int(policy_parse("{}", 2, NULL, &p, &e), -EINVAL, "NULL filename");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "version: missing required key (this ringfence reads version 1)",
               "without a file name there is no position prefix");
        is_str(e.file, "", "err->file empty");
        is_int(e.line, 1, "but line is still set");

        /* err may be NULL */
        is_int(policy_parse("{", 1, "x", &p, NULL), -EINVAL, "NULL err on syntax error");
        is_int(policy_parse("{\"version\":3}", 13, "x", &p, NULL), -EINVAL,
               "NULL err on semantic error");

        /* size limit */
        char *big = malloc(POLICY_FILE_MAX + 1);
        if (!big)
                abort();
        memset(big, ' ', POLICY_FILE_MAX + 1);
        memcpy(big, "{\"version\":1}", 13);
        e = (struct rf_error){0};
        is_int(policy_parse(big, POLICY_FILE_MAX + 1, "big.json", &p, &e), -E2BIG,
               "policy over POLICY_FILE_MAX refused");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "big.json: policy file larger than 1048576 bytes", "file size message");
        p = NULL;
        is_int(policy_parse(big, POLICY_FILE_MAX, "big.json", &p, NULL), 0,
               "exactly POLICY_FILE_MAX is fine");
        policy_free(p);
        free(big);

        /* input need not be NUL-terminated */
        char buf[16];
        memcpy(buf, "{\"version\":1}XXX", 16);
        p = NULL;
        is_int(policy_parse(buf, 13, "x", &p, NULL), 0, "length, not NUL, ends the input");
        policy_free(p);
        FAIL("{\"version\":1}\0", -EINVAL, "p.json:1:14: trailing data after the JSON document");
        FAIL("{\"version\":1,\"identity\":{\"agent\":\"a\\u0000b\"}}", -EINVAL,
             "p.json:1:36: identity.agent: NUL (\\u0000) is not allowed in strings");
}

static void test_units(void)
{
        static const struct {
                const char *s;
                int r;
                uint64_t v;
        } sizes[] = {
                {"0", 0, 0},
                {"1", 0, 1},
                {"1K", 0, 1024},
                {"1k", 0, 1024},
                {"512M", 0, 512ULL << 20},
                {"2g", 0, 2ULL << 30},
                {"007", 0, 7},
                {"18446744073709551615", 0, UINT64_MAX},
                {"17179869183G", 0, 17179869183ULL << 30},
                {"18446744073709551616", -ERANGE, 0},
                {"17179869184G", -ERANGE, 0},
                {"18014398509481984K", -ERANGE, 0},
                {"", -EINVAL, 0},
                {"K", -EINVAL, 0},
                {"1KB", -EINVAL, 0},
                {"1T", -EINVAL, 0},
                {"1.5G", -EINVAL, 0},
                {" 1K", -EINVAL, 0},
                {"1K ", -EINVAL, 0},
                {"-1", -EINVAL, 0},
                {"+1", -EINVAL, 0},
                {"1 K", -EINVAL, 0},
                {"0x10", -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                uint64_t v = 0;
                int r = parse_size(sizes[i].s, &v);
                is_int(r, sizes[i].r, "parse_size(\"%s\") -> %d", sizes[i].s, sizes[i].r);
                if (r == 0)
                        ok(v == sizes[i].v, "parse_size(\"%s\") value", sizes[i].s);
        }
        uint64_t v;
        is_int(parse_size(NULL, &v), -EINVAL, "parse_size(NULL)");

        static const struct {
                const char *s;
                int r;
                uint64_t v;
        } durations[] = {
                {"500ms", 0, 500},
                {"5s", 0, 5000},
                {"30m", 0, 1800000},
                {"2h", 0, 7200000},
                {"0s", 0, 0},
                {"18446744073709551615ms", 0, UINT64_MAX},
                {"18446744073709551s", 0, 18446744073709551000ULL},
                {"18446744073709552s", -ERANGE, 0},
                {"5124095576030h", 0, 5124095576030ULL * 3600000},
                {"5124095576031h", -ERANGE, 0},
                {"99999999999999999999ms", -ERANGE, 0},
                {"30", -EINVAL, 0},
                {"", -EINVAL, 0},
                {"m", -EINVAL, 0},
                {"30M", -EINVAL, 0},
                {"30S", -EINVAL, 0},
                {"1.5h", -EINVAL, 0},
                {"1d", -EINVAL, 0},
                {"30 m", -EINVAL, 0},
                {"30mm", -EINVAL, 0},
                {"30msx", -EINVAL, 0},
                {"-1s", -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(durations); i++) {
                v = 0;
                int r = parse_duration(durations[i].s, &v);
                is_int(r, durations[i].r, "parse_duration(\"%s\") -> %d", durations[i].s,
                       durations[i].r);
                if (r == 0)
                        ok(v == durations[i].v, "parse_duration(\"%s\") value", durations[i].s);
        }
        is_int(parse_duration(NULL, &v), -EINVAL, "parse_duration(NULL)");

        static const struct {
                const char *s;
                int r;
                uint64_t v;
        } cpus[] = {
                {"1", 0, 1000},
                {"1.5", 0, 1500},
                {"0.25", 0, 250},
                {"0.001", 0, 1},
                {"2.000", 0, 2000},
                {"0", 0, 0},
                {"18446744073709551", 0, 18446744073709551000ULL},
                {"18446744073709551.615", 0, UINT64_MAX},
                {"18446744073709551.616", -ERANGE, 0},
                {"18446744073709552", -ERANGE, 0},
                {"1.2345", -EINVAL, 0},
                {"1.0000", -EINVAL, 0},
                {".5", -EINVAL, 0},
                {"1.", -EINVAL, 0},
                {"-1", -EINVAL, 0},
                {"1e3", -EINVAL, 0},
                {"1,5", -EINVAL, 0},
                {"", -EINVAL, 0},
                {" 1", -EINVAL, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cpus); i++) {
                v = 0;
                int r = parse_cpus(cpus[i].s, &v);
                is_int(r, cpus[i].r, "parse_cpus(\"%s\") -> %d", cpus[i].s, cpus[i].r);
                if (r == 0)
                        ok(v == cpus[i].v, "parse_cpus(\"%s\") value", cpus[i].s);
        }
        is_int(parse_cpus(NULL, &v), -EINVAL, "parse_cpus(NULL)");

        ok(env_name_valid("A"), "env A");
        ok(env_name_valid("_"), "env _");
        ok(env_name_valid("a1_B2"), "env a1_B2");
        ok(!env_name_valid("1A"), "env 1A");
        ok(!env_name_valid(""), "env empty");
        ok(!env_name_valid(NULL), "env NULL");
        ok(!env_name_valid("A-B"), "env A-B");
        ok(!env_name_valid("A=B"), "env A=B");
        ok(!env_name_valid("Ä"), "env non-ASCII");
        char name[POLICY_ENV_NAME_MAX + 2];
        memset(name, 'N', sizeof name - 1);
        name[sizeof name - 1] = '\0';
        ok(!env_name_valid(name), "env name of 129 bytes is invalid");
        name[POLICY_ENV_NAME_MAX] = '\0';
        ok(env_name_valid(name), "env name of 128 bytes is valid");
        ok(env_name_reserved("RINGFENCE_RUN_ID"), "RINGFENCE_RUN_ID reserved");
        ok(env_name_reserved("RINGFENCE_"), "RINGFENCE_ reserved");
        ok(!env_name_reserved("RINGFENCE"), "RINGFENCE (no underscore) not reserved");
        ok(!env_name_reserved("ringfence_x"), "lower case not reserved");
        ok(!env_name_reserved("HOME"), "HOME not reserved");
        ok(!env_name_reserved(NULL), "NULL not reserved");
}

static void test_paths(void)
{
        static const struct {
                const char *in;
                const char *out; /* NULL = rejected */
        } cases[] = {
                {"/", "/"},
                {"//", "/"},
                {"///", "/"},
                {"/a", "/a"},
                {"/a/", "/a"},
                {"//a//b//", "/a/b"},
                {"/a/b.c/..d/...", "/a/b.c/..d/..."},
                {"/.hidden", "/.hidden"},
                {"/a b/ü", "/a b/ü"},
                {"", NULL},
                {"a", NULL},
                {"./a", NULL},
                {"/.", NULL},
                {"/./", NULL},
                {"/a/.", NULL},
                {"/a/..", NULL},
                {"/../a", NULL},
                {"/a/\t", NULL},
                {"/a/\x7f", NULL},
                {"/\xff", NULL},
                {"/\xc0\xaf", NULL},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *out = NULL;
                const char *why = NULL;
                int r = policy_path_normalize(cases[i].in, strlen(cases[i].in), &out, &why);
                if (cases[i].out) {
                        is_int(r, 0, "path '%s' accepted", cases[i].in);
                        is_str(out, cases[i].out, "path '%s' normalised", cases[i].in);
                } else {
                        is_int(r, -EINVAL, "path '%s' rejected (%s)", cases[i].in, why ? why : "?");
                        ok(out == NULL, "no output for a rejected path");
                }
                free(out);
        }
        char *out = NULL;
        is_int(policy_path_normalize("/a\0b", 4, &out, NULL), -EINVAL, "embedded NUL rejected");
}

static void test_setters(void)
{
        struct rf_error e = {0};
        char *s = NULL;

        is_int(policy_set_string(&s, "alice", POLICY_IDENT_MAX, &e), 0, "set_string");
        is_str(s, "alice", "set_string value");
        is_int(policy_set_string(&s, "bob", POLICY_IDENT_MAX, &e), 0, "set_string replaces");
        is_str(s, "bob", "replaced value");
        is_int(policy_set_string(&s, "", POLICY_IDENT_MAX, &e), -EINVAL, "empty refused");
        is_str(e.msg, "must not be empty", "empty message");
        is_str(s, "bob", "unchanged on failure");
        is_int(policy_set_string(&s, "abcd", 3, &e), -EINVAL, "too long refused");
        is_int(policy_set_string(&s, "a\nb", 10, &e), -EINVAL, "newline refused");
        is_int(policy_set_string(&s, "a\xff", 10, &e), -EINVAL, "invalid UTF-8 refused");
        is_str(e.msg, "is not valid UTF-8", "invalid UTF-8 message");
        is_int(policy_set_string(&s, NULL, 10, &e), -EINVAL, "NULL refused");
        free(s);
        s = NULL;

        is_int(policy_set_path(&s, "/w//x/", &e), 0, "set_path");
        is_str(s, "/w/x", "set_path normalises");
        is_int(policy_set_path(&s, "w", &e), -EINVAL, "set_path relative refused");
        is_str(e.msg, "path is not an absolute path", "set_path message");
        is_str(s, "/w/x", "unchanged on failure");
        free(s);

        struct rf_policy *p = policy_new();
        ok(p && p->version == POLICY_VERSION && !p->agent, "policy_new");
        if (!p)
                return;
        is_int(policy_add_path(&p->read_only, &p->n_read_only, "/a/", &e), 0, "add_path");
        is_int(policy_add_path(&p->read_only, &p->n_read_only, "//a", &e), 0, "add same path");
        is_int(p->n_read_only, 1, "same path added once");
        is_int(policy_add_path(&p->read_only, &p->n_read_only, "a", &e), -EINVAL,
               "add relative refused");
        for (int i = 1; i < POLICY_PATHS_MAX; i++) {
                char path[32];
                snprintf(path, sizeof path, "/p%d", i);
                if (policy_add_path(&p->read_only, &p->n_read_only, path, &e) < 0)
                        break;
        }
        is_int(p->n_read_only, POLICY_PATHS_MAX, "filled to the limit");
        is_int(policy_add_path(&p->read_only, &p->n_read_only, "/over", &e), -E2BIG,
               "one more is -E2BIG");
        is_str(e.msg, "more than 256 paths", "path limit message");
        is_int(policy_add_path(&p->read_only, &p->n_read_only, "/a", &e), 0,
               "a duplicate at the limit is still fine");

        is_int(policy_add_env(p, "A", "1", &e), 0, "add_env");
        is_int(policy_add_env(p, "A", "2", &e), 0, "add_env replace");
        is_int(p->n_env, 1, "replace does not add");
        is_str(p->env_values[0], "2", "replaced value");
        is_int(policy_add_env(p, "RINGFENCE_RUN_ID", "x", &e), -EINVAL, "reserved env refused");
        is_str(e.msg, "names starting with RINGFENCE_ are reserved for ringfence",
               "reserved message");
        is_int(policy_add_env(p, "A B", "x", &e), -EINVAL, "bad env name refused");
        is_int(policy_add_env(p, "B", "\xff", &e), -EINVAL, "non-UTF-8 value refused");
        is_str(e.msg, "value is not valid UTF-8", "value message");
        is_int(policy_add_env(p, "B", "line1\nline2", &e), 0, "newline in value allowed");
        char *longv = malloc(POLICY_STRING_MAX + 2);
        if (!longv)
                abort();
        memset(longv, 'v', POLICY_STRING_MAX + 1);
        longv[POLICY_STRING_MAX + 1] = '\0';
        is_int(policy_add_env(p, "C", longv, &e), -EINVAL, "value over POLICY_STRING_MAX refused");
        longv[POLICY_STRING_MAX] = '\0';
        is_int(policy_add_env(p, "C", longv, &e), 0, "value of POLICY_STRING_MAX accepted");
        free(longv);
        for (int i = 0; p->n_env < POLICY_ENV_MAX; i++) {
                char name[32];
                snprintf(name, sizeof name, "E%d", i);
                if (policy_add_env(p, name, "x", &e) < 0)
                        break;
        }
        is_int(p->n_env, POLICY_ENV_MAX, "env filled to the limit");
        is_int(policy_add_env(p, "ONE_MORE", "x", &e), -E2BIG, "one more env is -E2BIG");
        is_int(policy_add_env(p, "A", "3", &e), 0, "replacing at the limit is fine");
        policy_free(p);
        ok(policy_free(NULL) == NULL, "policy_free(NULL)");

        static const struct {
                const char *key, *value;
                int r;
                const char *msg; /* on failure */
        } limits[] = {
                {"limits.timeout", "30m", 0, NULL},
                {"limits.timeout", "30", -EINVAL,
                 "invalid duration \"30\" (expected N followed by ms, s, m or h, e.g. \"30m\")"},
                {"limits.timeout", "0s", -EINVAL, "must be greater than zero"},
                {"limits.timeout", "99999999999999999999h", -EINVAL,
                 "duration \"99999999999999999999h\" is too large"},
                {"limits.memory", "2G", 0, NULL},
                {"limits.memory", "2GB", -EINVAL,
                 "invalid size \"2GB\" (expected N, NK, NM or NG, e.g. \"512M\")"},
                {"limits.memory", "0", -EINVAL, "must be greater than zero"},
                {"limits.memory", "17179869184G", -EINVAL, "size \"17179869184G\" is too large"},
                {"limits.pids", "512", 0, NULL},
                {"limits.pids", "512K", -EINVAL, "expected an integer, got \"512K\""},
                {"limits.pids", "-1", -EINVAL, "expected an integer, got \"-1\""},
                {"limits.pids", "", -EINVAL, "expected an integer, got \"\""},
                {"limits.pids", "0", -EINVAL, "must be between 1 and 4194304"},
                {"limits.pids", "4194305", -EINVAL, "must be between 1 and 4194304"},
                {"limits.pids", "99999999999999999999999", -EINVAL,
                 "must be between 1 and 4194304"},
                {"limits.nofile", "1024", 0, NULL},
                {"limits.nofile", "1073741825", -EINVAL, "must be between 1 and 1073741824"},
                {"limits.cpus", "1.5", 0, NULL},
                {"limits.cpus", "0", -EINVAL, "must be greater than 0 and at most 4096"},
                {"limits.cpus", "4097", -EINVAL, "must be greater than 0 and at most 4096"},
                {"limits.cpus", "1.2345", -EINVAL,
                 "invalid CPU count \"1.2345\" (expected a number with at most 3 decimals, e.g. "
                 "1.5)"},
                {"limits.cpus", "\x1b[31m", -EINVAL,
                 "invalid CPU count \"\\u001b[31m\" (expected a number with at most 3 decimals, "
                 "e.g. 1.5)"},
                {"filesystem.tmp_size", "1G", 0, NULL},
                {"filesystem.home_size", "1G", 0, NULL},
                {"filesystem.shm_size", "1M", 0, NULL},
                {"limits.disk", "1G", -EINVAL, "unknown setting"},
                {"pids", "1", -EINVAL, "unknown setting"},
        };
        p = policy_new();
        for (size_t i = 0; p && i < ARRAY_SIZE(limits); i++) {
                e = (struct rf_error){0};
                int r = policy_set_limit(p, limits[i].key, limits[i].value, &e);
                is_int(r, limits[i].r, "set_limit %s=%s", limits[i].key, limits[i].value);
                if (r < 0)
                        is_str(e.msg, limits[i].msg, "set_limit %s=%s message", limits[i].key,
                               limits[i].value);
        }
        ok(p && p->timeout_ms == 1800000 && p->memory == 2ULL << 30 && p->pids == 512 &&
                   p->nofile == 1024 && p->cpus_milli == 1500 && p->tmp_size == 1ULL << 30 &&
                   p->home_size == 1ULL << 30 && p->shm_size == 1ULL << 20,
           "set_limit stored the valid values, failures changed nothing");
        is_int(policy_set_limit(p, NULL, "1", NULL), -EINVAL, "set_limit NULL key");
        policy_free(p);
}

static char *to_json(const struct rf_policy *p)
{
        char *s = NULL;
        if (policy_to_json(p, &s) < 0)
                return NULL;
        return s;
}

/* ------------------------------------------------------------------------ */
/* filesystem.protected                                                      */

static void test_protected_normalize(void)
{
        static const struct {
                const char *in;
                const char *out; /* NULL = rejected */
                bool dir;
                const char *why; /* when rejected */
        } cases[] = {
                {".git/hooks/", ".git/hooks", true, NULL},
                {".git/config", ".git/config", false, NULL},
                {"a", "a", false, NULL},
                {"a/", "a", true, NULL},
                {"a//", "a", true, NULL},
                {"a//b", "a/b", false, NULL},
                {"a///b//", "a/b", true, NULL},
                {".bashrc", ".bashrc", false, NULL},
                {"...", "...", false, NULL},
                {"..a/.b/c..", "..a/.b/c..", false, NULL},
                {"a b/ü", "a b/ü", false, NULL},
                {"", NULL, false, "is empty"},
                {"/", NULL, false,
                 "is an absolute path (protected paths are relative to the workspace)"},
                {"/a", NULL, false,
                 "is an absolute path (protected paths are relative to the workspace)"},
                {"//a", NULL, false,
                 "is an absolute path (protected paths are relative to the workspace)"},
                {".", NULL, false, "must not contain \".\" or \"..\" components"},
                {"./", NULL, false, "must not contain \".\" or \"..\" components"},
                {"./a", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a/.", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a/./b", NULL, false, "must not contain \".\" or \"..\" components"},
                {"..", NULL, false, "must not contain \".\" or \"..\" components"},
                {"../a", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a/../b", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a/..", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a/../", NULL, false, "must not contain \".\" or \"..\" components"},
                {"a\tb", NULL, false, "contains a control character"},
                {"a\nb", NULL, false, "contains a control character"},
                {"a\x1b[0m", NULL, false, "contains a control character"},
                {"a\x7f", NULL, false, "contains a control character"},
                {"\xff", NULL, false, "is not valid UTF-8"},
                {"a/\xc0\xaf", NULL, false, "is not valid UTF-8"},
                {"\xed\xa0\x80", NULL, false, "is not valid UTF-8"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char *out = NULL;
                const char *why = NULL;
                bool dir = !cases[i].dir;
                int r = policy_protected_normalize(cases[i].in, strlen(cases[i].in), &out, &dir,
                                                   &why);
                if (cases[i].out) {
                        is_int(r, 0, "protected '%s' accepted", cases[i].in);
                        is_str(out, cases[i].out, "protected '%s' normalised", cases[i].in);
                        ok(dir == cases[i].dir, "protected '%s' dir=%d", cases[i].in, cases[i].dir);
                } else {
                        is_int(r, -EINVAL, "protected '%s' rejected", cases[i].in);
                        is_str(why, cases[i].why, "protected '%s': why", cases[i].in);
                        ok(out == NULL, "no output for a rejected protected path");
                }
                free(out);
        }
        char *out = NULL;
        is_int(policy_protected_normalize("a\0b", 3, &out, NULL, NULL), -EINVAL,
               "embedded NUL rejected (NULL why and dir are fine)");
        ok(out == NULL, "no output for embedded NUL");
        const char *why = NULL;
        is_int(policy_protected_normalize("a\0b", 3, &out, NULL, &why), -EINVAL,
               "embedded NUL rejected");
        is_str(why, "contains a NUL byte", "embedded NUL: why");

        /* length: POLICY_PATH_MAX bytes as written, before collapsing */
        char *big = malloc(POLICY_PATH_MAX + 2);
        if (!big)
                abort();
        memset(big, 'p', POLICY_PATH_MAX + 1);
        big[POLICY_PATH_MAX + 1] = '\0';
        is_int(policy_protected_normalize(big, POLICY_PATH_MAX + 1, &out, NULL, &why), -EINVAL,
               "protected path over POLICY_PATH_MAX");
        is_str(why, "is too long", "too long: why");
        big[POLICY_PATH_MAX - 1] = '/';
        is_int(policy_protected_normalize(big, POLICY_PATH_MAX, &out, NULL, NULL), 0,
               "protected path of exactly POLICY_PATH_MAX bytes");
        ok(out && strlen(out) == POLICY_PATH_MAX - 1, "its trailing slash is dropped");
        free(out);
        free(big);

        /* the absolute normaliser is unchanged by the shared code */
        out = NULL;
        is_int(policy_path_normalize("a/b", 3, &out, &why), -EINVAL, "absolute: relative refused");
        is_str(why, "is not an absolute path", "absolute: why");
}

static void test_protected_parse(void)
{
        struct rf_policy *p;

        p = parse_ok(
                "{\"version\":1,\"filesystem\":{\"protected\":[\".git/hooks/\",\".git/config\","
                "\"a//b\",\".bashrc\",\"a/b/\",\".git/config\",\".claude/\",\".git//hooks\"]}}",
                "protected list");
        is_int(p ? p->n_protected : 0, 5, "duplicates (after normalising) kept once");
        if (p && p->n_protected == 5) {
                ok(p->protected_set, "protected_set");
                is_str(p->protected[0], ".git/hooks", "protected[0] without trailing slash");
                ok(p->protected_dir[0], "protected[0] is a directory");
                is_str(p->protected[1], ".git/config", "protected[1]");
                ok(!p->protected_dir[1], "protected[1] is not a directory");
                is_str(p->protected[2], "a/b", "protected[2] normalised, at its first position");
                ok(p->protected_dir[2], "a later \"a/b/\" marks it a directory (dir wins)");
                is_str(p->protected[3], ".bashrc", "protected[3]");
                ok(!p->protected_dir[3], "protected[3] is not a directory");
                is_str(p->protected[4], ".claude", "protected[4]");
                ok(p->protected_dir[4], "protected[4] is a directory");
        }
        policy_free(p);

        p = parse_ok("{\"version\":1}", "no protected key");
        ok(p && !p->protected_set && p->n_protected == 0 && !p->protected,
           "absent key: protected_set false (the sandbox's defaults apply)");
        policy_free(p);
        p = parse_ok("{\"version\":1,\"filesystem\":{\"tmp_size\":\"1M\"}}", "filesystem, no key");
        ok(p && !p->protected_set, "filesystem without protected: unset");
        policy_free(p);
        p = parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[]}}", "protected []");
        ok(p && p->protected_set && p->n_protected == 0, "explicit []: set, no entries");
        policy_free(p);

        /* entry limit: 256 distinct entries are fine, the 257th is not */
        size_t cap = 64 + (POLICY_PATHS_MAX + 1) * 12;
        char *list = malloc(cap);
        if (!list)
                abort();
        size_t used = (size_t)snprintf(list, cap, "{\"version\":1,\"filesystem\":{\"protected\":[");
        for (int i = 0; i < POLICY_PATHS_MAX; i++)
                used += (size_t)snprintf(list + used, cap - used, "%s\"p%d/\"", i ? "," : "", i);
        snprintf(list + used, cap - used, "]}}");
        p = parse_ok(list, "256 protected paths");
        is_int(p ? p->n_protected : 0, POLICY_PATHS_MAX, "256 protected entries");
        policy_free(p);
        snprintf(list + used, cap - used, ",\"extra\"]}}");
        struct rf_error e = {0};
        p = NULL;
        is_int(policy_parse(list, strlen(list), "p.json", &p, &e), -E2BIG,
               "257 protected paths refused");
        is_str(e.keypath, "filesystem.protected[256]", "limit keypath names the extra entry");
        is_str(e.msg, "more than 256 paths", "protected limit message");
        is_int(e.line, 1, "protected limit line");
        is_int(e.col, used + 2, "protected limit at the extra entry");
        ok(p == NULL, "*ret untouched");
        free(list);

        /* length limit in a document */
        char *doc = malloc(POLICY_PATH_MAX + 128);
        char *path = malloc(POLICY_PATH_MAX + 2);
        if (!doc || !path)
                abort();
        memset(path, 'q', POLICY_PATH_MAX + 1);
        path[POLICY_PATH_MAX + 1] = '\0';
        snprintf(doc, POLICY_PATH_MAX + 128,
                 "{\"version\":1,\"filesystem\":{\"protected\":[\"%s\"]}}", path);
        e = (struct rf_error){0};
        is_int(policy_parse(doc, strlen(doc), "p.json", &p, &e), -EINVAL,
               "protected path over the limit");
        is_str(e.keypath, "filesystem.protected[0]", "too long: keypath");
        is_int(e.col, 41, "too long: column of the value");
        ok(strstr(e.msg, "...\" is too long") != NULL, "too long: message (value cut): %s", e.msg);
        path[POLICY_PATH_MAX] = '\0';
        snprintf(doc, POLICY_PATH_MAX + 128,
                 "{\"version\":1,\"filesystem\":{\"protected\":[\"%s\"]}}", path);
        p = parse_ok(doc, "protected path of exactly POLICY_PATH_MAX bytes");
        policy_free(p);
        free(path);
        free(doc);
}

static void test_protected_errors(void)
{
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":\".git\"}}", -EINVAL,
             "p.json:1:40: filesystem.protected: expected an array of paths relative to the "
             "workspace, got a string");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":null}}", -EINVAL,
             "p.json:1:40: filesystem.protected: expected an array of paths relative to the "
             "workspace, got null");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":{\".git\":true}}}", -EINVAL,
             "p.json:1:40: filesystem.protected: expected an array of paths relative to the "
             "workspace, got an object");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\", 1]}}", -EINVAL,
             "p.json:1:46: filesystem.protected[1]: expected a string (a path relative to the "
             "workspace), got a number");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[[\"a\"]]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: expected a string (a path relative to the "
             "workspace), got an array");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"\" is empty");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"/etc/passwd\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"/etc/passwd\" is an absolute path "
             "(protected paths are relative to the workspace)");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"ok\",\"//x\"]}}", -EINVAL,
             "p.json:1:46: filesystem.protected[1]: \"//x\" is an absolute path (protected "
             "paths are relative to the workspace)");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\".\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \".\" must not contain \".\" or \"..\" "
             "components");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"./.git\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"./.git\" must not contain \".\" or \"..\" "
             "components");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\".git/hooks/..\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \".git/hooks/..\" must not contain \".\" or "
             "\"..\" components");
        FAIL("{\"version\":1,\n \"filesystem\": {\"protected\": [\".git/hooks/\",\n    "
             "\"../outside\"]}}",
             -EINVAL,
             "p.json:3:5: filesystem.protected[1]: \"../outside\" must not contain \".\" or "
             "\"..\" components");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\\nb\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"a\\nb\" contains a control character");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"\\u001b[2J\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"\\u001b[2J\" contains a control character");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\\u007f\"]}}", -EINVAL,
             "p.json:1:41: filesystem.protected[0]: \"a\\u007f\" contains a control character");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\\u0000b\"]}}", -EINVAL,
             "p.json:1:43: filesystem.protected[0]: NUL (\\u0000) is not allowed in strings");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\xff\"]}}", -EINVAL,
             "p.json:1:43: filesystem.protected[0]: invalid UTF-8 in string (byte 0xff)");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[\"a\",]}}", -EINVAL,
             "p.json:1:45: filesystem.protected[1]: trailing comma in array");
        FAIL("{\"version\":1,\"filesystem\":{\"protected\":[],\"protected\":[\"a\"]}}", -EINVAL,
             "p.json:1:43: filesystem.protected: duplicate key (first at line 1, column 28)");
        FAIL("{\"version\":1,\"protected\":[\".git\"]}", -EINVAL,
             "p.json:1:14: protected: unknown key (expected one of: version, identity, "
             "workspace, filesystem, env, limits, audit, network, secrets)");
}

static void test_protected_setter(void)
{
        struct rf_policy *p = policy_new();
        struct rf_error e = {0};

        if (!p) {
                ok(false, "policy_new");
                return;
        }
        is_int(policy_add_protected(p, "/etc", &e), -EINVAL, "add_protected absolute refused");
        is_str(e.msg, "path is an absolute path (protected paths are relative to the workspace)",
               "add_protected absolute message");
        is_int(policy_add_protected(p, "a/../b", &e), -EINVAL, "add_protected .. refused");
        is_str(e.msg, "path must not contain \".\" or \"..\" components",
               "add_protected .. message");
        is_int(policy_add_protected(p, "", &e), -EINVAL, "add_protected empty refused");
        is_str(e.msg, "path is empty", "add_protected empty message");
        is_int(policy_add_protected(p, NULL, &e), -EINVAL, "add_protected NULL refused");
        is_str(e.msg, "missing value", "add_protected NULL message");
        is_int(policy_add_protected(p, "a\x1b", NULL), -EINVAL, "add_protected with NULL err");
        ok(!p->protected_set && p->n_protected == 0, "failures leave the policy unchanged");

        is_int(policy_add_protected(p, ".envrc", &e), 0, "add_protected file");
        ok(p->protected_set, "add_protected sets protected_set");
        is_int(policy_add_protected(p, "x//y", &e), 0, "add_protected x//y");
        is_int(policy_add_protected(p, "x/y/", &e), 0, "add_protected same path as a directory");
        is_int(policy_add_protected(p, "x/y", &e), 0, "add_protected same path as a file");
        is_int(p->n_protected, 2, "same path added once");
        is_str(p->protected[1], "x/y", "normalised");
        ok(p->protected_dir[1], "dir flag wins, and stays");
        ok(!p->protected_dir[0], ".envrc is a file");

        for (int i = 0; p->n_protected < POLICY_PATHS_MAX; i++) {
                char path[32];
                snprintf(path, sizeof path, "p%d", i);
                if (policy_add_protected(p, path, &e) < 0)
                        break;
        }
        is_int(p->n_protected, POLICY_PATHS_MAX, "protected filled to the limit");
        e = (struct rf_error){0};
        is_int(policy_add_protected(p, "over", &e), -E2BIG, "one more is -E2BIG");
        is_str(e.msg, "more than 256 paths", "protected limit message");
        is_int(policy_add_protected(p, ".envrc/", &e), 0, "a duplicate at the limit is fine");
        ok(p->protected_dir[0], "and can still mark the entry a directory");
        is_int(p->n_protected, POLICY_PATHS_MAX, "still at the limit");
        policy_free(p);
}

static void test_protected_merge_dup_json(void)
{
        struct rf_error e = {0};
        char line[1024];
        char *s, *t;

        /* merge: append, dedupe (dir wins), order kept */
        struct rf_policy *base =
                parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[\".git/hooks/\",\"a\"]}}",
                         "protected merge base");
        struct rf_policy *over = policy_new();
        if (!base || !over) {
                ok(false, "protected merge setup");
                policy_free(base);
                policy_free(over);
                return;
        }
        policy_add_protected(over, "b", &e);
        policy_add_protected(over, "a/", &e);
        policy_add_protected(over, ".git/hooks", &e);
        is_int(policy_merge(base, over, &e), 0, "merge protected");
        is_int(base->n_protected, 3, "appended, duplicates skipped");
        if (base->n_protected == 3) {
                is_str(base->protected[0], ".git/hooks", "merge keeps base order [0]");
                ok(base->protected_dir[0],
                   "a file entry in the overlay does not unmark a directory");
                is_str(base->protected[1], "a", "merge keeps base order [1]");
                ok(base->protected_dir[1], "a directory entry in the overlay wins");
                is_str(base->protected[2], "b", "overlay entry appended");
                ok(!base->protected_dir[2], "appended entry is a file");
        }
        ok(base->protected_set, "protected_set after merge");
        s = to_json(base);
        is_str(s, "{\"filesystem\":{\"protected\":[\".git/hooks/\",\"a/\",\"b\"]},\"version\":1}",
               "canonical form of the merged list");
        free(s);
        policy_free(base);
        policy_free(over);

        /* merge: protected_set is ORed */
        struct rf_policy *unset = policy_new(), *empty = NULL, *unset2 = policy_new();
        empty = parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[]}}", "empty list");
        if (!unset || !empty || !unset2) {
                ok(false, "protected_set merge setup");
                return;
        }
        is_int(policy_merge(unset, unset2, &e), 0, "merge unset + unset");
        ok(!unset->protected_set, "unset + unset stays unset");
        is_int(policy_merge(unset, empty, &e), 0, "merge unset + []");
        ok(unset->protected_set && unset->n_protected == 0, "unset + [] is set and empty");
        is_int(policy_merge(empty, unset2, &e), 0, "merge [] + unset");
        ok(empty->protected_set && empty->n_protected == 0, "[] + unset stays set");
        policy_free(unset);
        policy_free(unset2);

        /* merge: limit, base unchanged */
        struct rf_policy *big = policy_new();
        if (!big)
                abort();
        for (int i = 0; i < POLICY_PATHS_MAX; i++) {
                char path[32];
                snprintf(path, sizeof path, "many/%d/", i);
                policy_add_protected(big, path, &e);
        }
        policy_add_protected(empty, "first", &e);
        policy_set_string(&big->agent, "mallory", POLICY_IDENT_MAX, &e);
        char *before = to_json(empty);
        e = (struct rf_error){0};
        is_int(policy_merge(empty, big, &e), -E2BIG, "protected limit refused in merge");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "filesystem.protected: more than 256 paths", "protected merge limit message");
        char *after = to_json(empty);
        is_str(after, before, "base unchanged after a failed protected merge");
        free(before);
        free(after);
        policy_free(empty);

        /* dup */
        struct rf_policy *c = NULL;
        is_int(policy_dup(big, &c), 0, "dup with protected paths");
        s = to_json(big);
        t = c ? to_json(c) : NULL;
        is_str(t, s, "dup is equal");
        ok(c && c->protected != big->protected && c->protected_dir != big->protected_dir &&
                   c->protected[0] != big->protected[0] && c->protected_set,
           "dup owns its protected list");
        ok(c && c->protected_dir[POLICY_PATHS_MAX - 1], "dup copies the dir flags");
        free(s);
        free(t);
        policy_free(c);
        policy_free(big);
        c = NULL;
        struct rf_policy *z = policy_new();
        if (!z)
                abort();
        z->protected_set = true;
        is_int(policy_dup(z, &c), 0, "dup of an explicit empty list");
        ok(c && c->protected_set && c->n_protected == 0 && !c->protected && !c->protected_dir,
           "dup keeps protected_set with no entries");
        policy_free(c);
        policy_free(z);

        /* canonical form: [] is kept, absent is left out, order and dir slashes kept */
        struct rf_policy *p = parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[]}}", "[]");
        s = p ? to_json(p) : NULL;
        is_str(s, "{\"filesystem\":{\"protected\":[]},\"version\":1}", "[] is written");
        struct rf_policy *q = s ? parse_ok(s, "[] re-parses") : NULL;
        ok(q && q->protected_set && q->n_protected == 0, "[] round-trips as set and empty");
        policy_free(q);
        free(s);
        policy_free(p);

        p = parse_ok("{\"version\":1,\"filesystem\":{\"tmp_size\":\"1M\",\"protected\":[\"z//\","
                     "\"b\",\".git/hooks/\",\"\\\"q\\\\\",\"é/\"],\"read_only\":[\"/o\"],"
                     "\"home_size\":\"1M\"}}",
                     "protected canonical source");
        s = p ? to_json(p) : NULL;
        is_str(s,
               "{\"filesystem\":{\"home_size\":\"1M\",\"protected\":[\"z/\",\"b\",\".git/hooks/\","
               "\"\\\"q\\\\\",\"é/\"],\"read_only\":[\"/o\"],\"tmp_size\":\"1M\"},\"version\":1}",
               "protected sorted among the filesystem keys, entries in order, dirs with a slash");
        q = s ? parse_ok(s, "protected canonical re-parses") : NULL;
        t = q ? to_json(q) : NULL;
        is_str(t, s, "protected canonical output is a fixed point");
        ok(q && q->n_protected == 5 && q->protected_dir[0] && !q->protected_dir[1] &&
                   q->protected_dir[2] && !q->protected_dir[3] && q->protected_dir[4],
           "dir flags survive the round trip");
        free(t);
        policy_free(q);
        free(s);
        policy_free(p);

        p = parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[\"a\"]}}", "order a");
        q = parse_ok("{\"version\":1,\"filesystem\":{\"protected\":[\"a//\",\"a\"]}}", "order b");
        s = p ? to_json(p) : NULL;
        t = q ? to_json(q) : NULL;
        ok(s && t && strcmp(s, t) != 0, "a file and a directory differ");
        is_str(t, "{\"filesystem\":{\"protected\":[\"a/\"]},\"version\":1}",
               "a duplicate spelt as a directory is one directory entry");
        free(s);
        free(t);
        policy_free(p);
        policy_free(q);

        p = policy_new();
        s = p ? to_json(p) : NULL;
        is_str(s, "{\"version\":1}", "no protected key when unset");
        free(s);
        if (p) {
                policy_apply_defaults(p);
                ok(!p->protected_set, "policy_apply_defaults leaves protection to the sandbox");
        }
        policy_free(p);
}

static void test_merge(void)
{
        struct rf_error e = {0};
        struct rf_policy *base = parse_ok(full_policy, "merge base");
        struct rf_policy *over = policy_new();
        if (!base || !over) {
                ok(false, "merge setup");
                return;
        }

        /* an empty overlay changes nothing */
        char *before = to_json(base);
        is_int(policy_merge(base, over, &e), 0, "merge empty overlay");
        char *after = to_json(base);
        is_str(after, before, "empty overlay is a no-op");
        free(after);

        policy_set_string(&over->agent, "codex", POLICY_IDENT_MAX, &e);
        policy_set_string(&over->task, "T-2", POLICY_IDENT_MAX, &e);
        policy_set_path(&over->workspace, "/other", &e);
        policy_add_path(&over->read_only, &over->n_read_only, "/extra", &e);
        policy_add_path(&over->read_only, &over->n_read_only, "/opt/tools", &e);
        policy_add_path(&over->read_write, &over->n_read_write, "/rw2", &e);
        policy_add_env(over, "LANG", "en_US.UTF-8", &e);
        policy_add_env(over, "NEW", "1", &e);
        over->memory = 1ULL << 30;
        over->cpus_milli = 250;
        over->timeout_ms = 1000;
        over->tmp_size = 1 << 20;

        is_int(policy_merge(base, over, &e), 0, "merge");
        is_str(base->agent, "codex", "scalar replaced");
        is_str(base->task, "T-2", "scalar replaced (task)");
        is_str(base->on_behalf_of, "alice@example.com", "unset overlay scalar keeps base");
        is_str(base->workspace, "/other", "workspace replaced");
        is_int(base->n_read_only, 3, "lists appended, duplicates skipped");
        is_str(base->read_only[2], "/extra", "appended at the end");
        is_int(base->n_read_write, 2, "read_write appended");
        is_int(base->n_env, 4, "env: one replaced, one added");
        is_str(base->env_values[0], "en_US.UTF-8", "env replaced in place");
        is_str(base->env_names[3], "NEW", "env added at the end");
        ok(base->memory == 1ULL << 30 && base->cpus_milli == 250 && base->timeout_ms == 1000,
           "limits replaced");
        ok(base->pids == 512 && base->nofile == 1024, "unset limits keep base");
        ok(base->tmp_size == 1 << 20 && base->home_size == 1048576, "sizes merged");

        /* failure: conflict — base unchanged */
        before = (free(before), to_json(base));
        struct rf_policy *bad = policy_new();
        policy_add_path(&bad->read_write, &bad->n_read_write, "/opt/tools", &e);
        policy_set_string(&bad->agent, "mallory", POLICY_IDENT_MAX, &e);
        e = (struct rf_error){0};
        is_int(policy_merge(base, bad, &e), -EINVAL, "ro/rw conflict refused");
        char line[1024];
        rf_error_format(&e, line, sizeof line);
        is_str(line, "filesystem: \"/opt/tools\" is both read-only and read-write",
               "conflict message");
        after = to_json(base);
        is_str(after, before, "base unchanged after a failed merge");
        free(after);
        policy_free(bad);

        /* failure: list limit — base unchanged */
        bad = policy_new();
        for (int i = 0; i < POLICY_PATHS_MAX; i++) {
                char path[32];
                snprintf(path, sizeof path, "/many/%d", i);
                policy_add_path(&bad->read_only, &bad->n_read_only, path, &e);
        }
        policy_set_string(&bad->agent, "mallory", POLICY_IDENT_MAX, &e);
        e = (struct rf_error){0};
        is_int(policy_merge(base, bad, &e), -E2BIG, "list limit refused");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "filesystem.read_only: more than 256 paths", "list limit message");
        after = to_json(base);
        is_str(after, before, "base unchanged after -E2BIG");
        free(after);
        policy_free(bad);

        /* failure: env limit */
        bad = policy_new();
        for (int i = 0; i < POLICY_ENV_MAX; i++) {
                char name[32];
                snprintf(name, sizeof name, "X%d", i);
                policy_add_env(bad, name, "v", &e);
        }
        e = (struct rf_error){0};
        is_int(policy_merge(base, bad, &e), -E2BIG, "env limit refused");
        is_str(e.keypath, "env", "env limit keypath");
        after = to_json(base);
        is_str(after, before, "base unchanged after env -E2BIG");
        free(after);
        policy_free(bad);

        free(before);
        policy_free(over);
        policy_free(base);
}

static void test_dup(void)
{
        struct rf_policy *p = parse_ok(full_policy, "dup source");
        struct rf_policy *c = NULL;

        is_int(policy_dup(p, &c), 0, "policy_dup");
        char *a = to_json(p), *b = to_json(c);
        is_str(b, a, "copy is equal");
        ok(c && p && c->read_only != p->read_only && c->agent != p->agent, "copy owns its memory");
        free(a);
        free(b);
        policy_free(c);
        policy_free(p);
}

static void test_to_json(void)
{
        struct rf_policy *p = parse_ok(full_policy, "canonical source");
        char *s = to_json(p);
        is_str(s,
               "{\"env\":{\"A_1\":\"\",\"LANG\":\"C.UTF-8\",\"MULTI\":\"a\\nb\"},"
               "\"filesystem\":{\"home_size\":\"1M\",\"read_only\":[\"/opt/tools\","
               "\"/usr/share/doc\"],\"read_write\":[\"/var/cache/x\"],\"shm_size\":\"64K\","
               "\"tmp_size\":\"512M\"},"
               "\"identity\":{\"agent\":\"claude\",\"on_behalf_of\":\"alice@example.com\","
               "\"project\":\"web\",\"task\":\"T-1\",\"triggered_by\":\"run:42\"},"
               "\"limits\":{\"cpus\":1.5,\"memory\":\"2G\",\"nofile\":1024,\"pids\":512,"
               "\"timeout\":\"30m\"},"
               "\"version\":1,\"workspace\":\"/abs/path\"}",
               "canonical JSON of the full policy");

        /* round trip: the output is a policy that gives the same output */
        struct rf_policy *q = s ? parse_ok(s, "canonical output re-parses") : NULL;
        char *t = q ? to_json(q) : NULL;
        is_str(t, s, "canonical output is a fixed point");
        free(t);
        policy_free(q);
        free(s);
        policy_free(p);

        /* order and spelling in the input do not matter */
        struct rf_policy *a =
                parse_ok("{\"limits\":{\"memory\":1073741824,\"timeout\":\"3600s\",\"cpus\":2.000},"
                         "\"env\":{\"B\":\"2\",\"A\":\"1\"},\"version\":1}",
                         "spelling A");
        struct rf_policy *b =
                parse_ok("{\"version\":1,\"env\":{\"A\":\"1\",\"B\":\"2\"},"
                         "\"limits\":{\"cpus\":2,\"timeout\":\"1h\",\"memory\":\"1024M\"},"
                         "\"identity\":{},\"filesystem\":{\"read_only\":[]}}",
                         "spelling B");
        char *sa = a ? to_json(a) : NULL, *sb = b ? to_json(b) : NULL;
        is_str(sa,
               "{\"env\":{\"A\":\"1\",\"B\":\"2\"},\"limits\":{\"cpus\":2,\"memory\":\"1G\","
               "\"timeout\":\"1h\"},\"version\":1}",
               "canonical spelling");
        is_str(sb, sa, "equal policies give identical bytes");
        free(sa);
        free(sb);
        policy_free(a);
        policy_free(b);

        p = policy_new();
        s = to_json(p);
        is_str(s, "{\"version\":1}", "empty policy");
        free(s);
        policy_apply_defaults(p);
        s = to_json(p);
        is_str(s,
               "{\"filesystem\":{\"home_size\":\"512M\",\"shm_size\":\"64M\",\"tmp_size\":\"512M\"}"
               ","
               "\"identity\":{\"agent\":\"agent\"},\"version\":1}",
               "defaults are part of the effective policy");
        free(s);

        /* odd values keep exact spellings */
        p->timeout_ms = 1500;
        p->memory = 1025;
        p->cpus_milli = 1;
        p->home_size = 3ULL << 40;
        policy_add_env(p, "CTRL", "\x01\x1f\"\\\t", NULL);
        s = to_json(p);
        ok(s && strstr(s, "\"timeout\":\"1500ms\""), "timeout in ms when not whole seconds");
        ok(s && strstr(s, "\"memory\":\"1025\""), "size in bytes when not whole K");
        ok(s && strstr(s, "\"cpus\":0.001"), "cpus 0.001");
        ok(s && strstr(s, "\"home_size\":\"3072G\""), "no T unit: 3072G");
        ok(s && strstr(s, "\"CTRL\":\"\\u0001\\u001f\\\"\\\\\\t\""), "control escapes");
        q = s ? parse_ok(s, "odd values re-parse") : NULL;
        t = q ? to_json(q) : NULL;
        is_str(t, s, "odd values round-trip");
        free(t);
        policy_free(q);
        free(s);

        /* a hand-filled struct with invalid UTF-8 cannot be serialised */
        free(p->agent);
        p->agent = strdup("\xff");
        s = NULL;
        is_int(policy_to_json(p, &s), -EINVAL, "invalid UTF-8 in a hand-filled struct");
        ok(s == NULL, "no output on failure");
        policy_free(p);
}

static void test_load_file(void)
{
        struct rf_policy *p = NULL;
        struct rf_error e = {0};
        char line[1024];
        char dir[] = "/tmp/rf-test-policy-XXXXXX";

        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp");
                return;
        }
        char path[256];
        snprintf(path, sizeof path, "%s/p.json", dir);

        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ok(fd >= 0, "create policy file");
        const char *doc = "{\"version\":1,\n \"limits\":{\"pids\":\"x\"}}";
        ok(write(fd, doc, strlen(doc)) == (ssize_t)strlen(doc), "write policy file");
        close(fd);
        is_int(policy_load_file(path, &p, &e), -EINVAL, "load bad file");
        rf_error_format(&e, line, sizeof line);
        char want[1024];
        snprintf(want, sizeof want, "%s:2:19: limits.pids: expected an integer, got a string",
                 path);
        is_str(line, want, "file name in the error");

        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ok(write(fd, full_policy, strlen(full_policy)) == (ssize_t)strlen(full_policy),
           "write good file");
        close(fd);
        is_int(policy_load_file(path, &p, &e), 0, "load good file");
        is_str(p ? p->agent : NULL, "claude", "loaded content");
        policy_free(p);

        /* too big */
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ok(ftruncate(fd, POLICY_FILE_MAX + 1) == 0, "grow file past the limit");
        close(fd);
        e = (struct rf_error){0};
        is_int(policy_load_file(path, &p, &e), -E2BIG, "load oversized file");
        rf_error_format(&e, line, sizeof line);
        snprintf(want, sizeof want, "%s: policy file larger than 1048576 bytes", path);
        is_str(line, want, "oversized file message");
        unlink(path);

        e = (struct rf_error){0};
        is_int(policy_load_file(path, &p, &e), -ENOENT, "missing file");
        rf_error_format(&e, line, sizeof line);
        snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
        is_str(line, want, "missing file message");

        e = (struct rf_error){0};
        is_int(policy_load_file(dir, &p, &e), -EISDIR, "directory");
        rf_error_format(&e, line, sizeof line);
        snprintf(want, sizeof want, "%s: is a directory", dir);
        is_str(line, want, "directory message");
        rmdir(dir);

        e = (struct rf_error){0};
        is_int(policy_load_file("/dev/null", &p, &e), -EINVAL, "empty file");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "/dev/null:1:1: unexpected end of input, expected a value",
               "empty file message");
        is_int(policy_load_file(NULL, &p, &e), -EINVAL, "NULL path");

        /* not a regular file: read until one byte past the limit, then stop */
        e = (struct rf_error){0};
        is_int(policy_load_file("/dev/zero", &p, &e), -E2BIG, "endless character device");
        rf_error_format(&e, line, sizeof line);
        is_str(line, "/dev/zero: policy file larger than 1048576 bytes", "endless input message");
}

#ifdef RF_EXAMPLES_DIR
static void test_examples(void)
{
        static const char *const files[] = {"coding-agent.json", "ci-job.json",
                                            "batch-no-network.json"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char path[1024], line[1024];
                struct rf_policy *p = NULL;
                struct rf_error e = {0};
                snprintf(path, sizeof path, "%s/%s", RF_EXAMPLES_DIR, files[i]);
                int r = policy_load_file(path, &p, &e);
                rf_error_format(&e, line, sizeof line);
                if (!is_int(r, 0, "example %s is a valid policy", files[i]))
                        diag("%s", line);
                ok(p && p->agent && p->timeout_ms && p->memory,
                   "example %s sets identity and limits", files[i]);
                if (i == 0) {
                        ok(p && p->protected_set && p->n_protected >= 2 &&
                                   strcmp(p->protected[0], ".git/hooks") == 0 &&
                                   p->protected_dir[0] &&
                                   strcmp(p->protected[1], ".git/config") == 0 &&
                                   !p->protected_dir[1],
                           "coding-agent.json protects .git/hooks/ and .git/config");
                }
                policy_free(p);
        }
}
#endif

/* ------------------------------------------------------------------------ */
/* audit: loop limits and the event budget; identity.audience                */

static void test_audit_section(void)
{
        struct rf_policy *p =
                parse_ok("{\"version\":1,\"identity\":{\"audience\":\"platform.example\"},"
                         "\"audit\":{\"max_chain_depth\":3,\"max_runs_per_window\":10,"
                         "\"loop_window\":\"5m\",\"event_rate\":20,\"event_burst\":100,"
                         "\"event_bytes\":\"1M\"}}",
                         "audit section");
        if (!p) {
                ok(false, "cannot check the audit section");
                return;
        }
        ok(p->max_chain_depth == 3 && p->max_runs_per_window == 10 && p->loop_window_ms == 300000 &&
                   p->event_rate == 20 && p->event_burst == 100 && p->event_bytes == 1ULL << 20,
           "audit: every member parsed");
        is_str(p->audience, "platform.example", "identity.audience");
        char *j = to_json(p);
        is_str(j,
               "{\"audit\":{\"event_bytes\":\"1M\",\"event_burst\":100,\"event_rate\":20,"
               "\"loop_window\":\"5m\",\"max_chain_depth\":3,\"max_runs_per_window\":10},"
               "\"identity\":{\"audience\":\"platform.example\"},"
               "\"version\":1}",
               "canonical JSON carries the audit section first");
        free(j);
        struct rf_policy *o = policy_new();
        struct rf_error e = {0};
        ok(o && policy_set_limit(o, "audit.max_chain_depth", "5", &e) == 0 &&
                   policy_merge(p, o, &e) == 0 && p->max_chain_depth == 5 &&
                   p->max_runs_per_window == 10,
           "merge: a set audit value replaces, an unset one keeps");
        is_int(policy_set_limit(o, "audit.max_chain_depth", "1001", &e), -EINVAL,
               "set_limit audit.max_chain_depth beyond 1000");
        policy_free(o);
        policy_free(p);

        FAIL("{\"version\":1,\"audit\":{\"max_chain_depth\":0}}", -EINVAL,
             "p.json:1:41: audit.max_chain_depth: must be between 1 and 1000");
        FAIL("{\"version\":1,\"audit\":{\"event_rate\":1000001}}", -EINVAL,
             "p.json:1:36: audit.event_rate: must be between 1 and 1000000");
        FAIL("{\"version\":1,\"audit\":{\"loop_window\":5}}", -EINVAL,
             "p.json:1:37: audit.loop_window: expected a duration string like \"30m\" (units ms, "
             "s, m, h), got a number");
        FAIL("{\"version\":1,\"audit\":{\"rate\":5}}", -EINVAL,
             "p.json:1:23: audit.rate: unknown key (expected one of: max_chain_depth, "
             "max_runs_per_window, loop_window, event_rate, event_burst, event_bytes)");
}

/* ------------------------------------------------------------------------ */
/* network                                                                   */

static void test_network_section(void)
{
        struct rf_policy *p = parse_ok(
                "{\"version\":1,\"network\":{\"allow\":[\"API.Example.com.:443\","
                "\"*.github.com:443,80\",\"10.0.0.0/8:5432\"],\"deny\":[\"evil.example.com\"],"
                "\"hosts\":{\"Svc.Test\":\"10.1.2.3\"},\"plain_ports\":[4443]},"
                "\"limits\":{\"egress_bytes\":\"1G\",\"egress_connections\":16}}",
                "network section");
        if (!p) {
                ok(false, "cannot check the network section");
                return;
        }
        ok(p->n_net_allow == 3 && !strcmp(p->net_allow[0], "api.example.com:443") &&
                   !strcmp(p->net_allow[1], "*.github.com:80,443"),
           "network.allow: canonical rules (%s, %s)", p->n_net_allow ? p->net_allow[0] : "",
           p->n_net_allow > 1 ? p->net_allow[1] : "");
        ok(p->n_net_deny == 1 && p->n_net_hosts == 1 &&
                   !strcmp(p->net_hosts[0], "svc.test=10.1.2.3"),
           "network.deny and network.hosts (canonical name=address)");
        ok(p->n_net_plain_ports == 1 && p->net_plain_ports[0] == 4443 &&
                   p->egress_bytes == 1ULL << 30 && p->egress_connections == 16,
           "plain_ports and the egress limits");
        char *j = to_json(p);
        ok(j && strstr(j, "\"network\":{\"allow\":[\"api.example.com:443\",\"*.github.com:80,443\","
                          "\"10.0.0.0/"
                          "8:5432\"],\"deny\":[\"evil.example.com\"],\"hosts\":{\"svc.test\":"
                          "\"10.1.2.3\"},\"plain_ports\":[4443]}"),
           "canonical JSON: %s", j ? j : "(null)");
        free(j);
        struct rf_policy *o = policy_new();
        struct rf_error e = {0};
        ok(o && policy_add_net_rule(o, "api.example.com:443", &e) == 0 &&
                   policy_add_net_rule(o, "new.example.com", &e) == 0 &&
                   policy_add_net_host(o, "svc.test:10.9.9.9", &e) == 0 &&
                   policy_merge(p, o, &e) == 0,
           "--allow-host / --add-host merge (%s)", e.msg);
        ok(p->n_net_allow == 4 && p->n_net_hosts == 1 &&
                   !strcmp(p->net_hosts[0], "svc.test=10.9.9.9"),
           "... a rule already there is not added twice; --add-host replaces the name's address");
        is_int(policy_add_net_rule(o, "evil.com@good.com", &e), -EINVAL,
               "--allow-host with userinfo");
        is_int(policy_add_net_host(o, "svc.test", &e), -EINVAL, "--add-host without an address");
        is_int(policy_add_net_host(o, "svc.test:0x0a.0.0.1", &e), -EINVAL,
               "--add-host with a hex address");
        policy_free(o);
        policy_free(p);
        FAIL("{\"version\":1,\"network\":{\"hosts\":{\"a.test\":\"1.2.3\"}}}", -EINVAL,
             "p.json:1:43: network.hosts[\"a.test\"]: is not an IP address (IPv4 dotted quad or "
             "IPv6)");
        FAIL("{\"version\":1,\"network\":{\"plain_ports\":[0]}}", -EINVAL,
             "p.json:1:40: network.plain_ports[0]: must be a port between 1 and 65535");
        /* network.upstream_ca: an absolute path, kept as given */
        p = parse_ok("{\"version\":1,\"network\":{\"upstream_ca\":\"/etc/x/ca.pem\"}}",
                     "network.upstream_ca");
        ok(p && p->net_upstream_ca && !strcmp(p->net_upstream_ca, "/etc/x/ca.pem"),
           "network.upstream_ca read");
        j = p ? to_json(p) : NULL;
        ok(j && strstr(j, "\"upstream_ca\":\"/etc/x/ca.pem\""), "... in canonical JSON");
        free(j);
        struct rf_policy *d = NULL;
        ok(p && policy_dup(p, &d) == 0 && d->net_upstream_ca &&
                   d->net_upstream_ca != p->net_upstream_ca,
           "... copied by policy_dup");
        policy_free(d);
        policy_free(p);
        FAIL("{\"version\":1,\"network\":{\"upstream_ca\":\"ca.pem\"}}", -EINVAL,
             "p.json:1:39: network.upstream_ca: must be an absolute path");
        FAIL("{\"version\":1,\"network\":{\"upstream_ca\":7}}", -EINVAL,
             "p.json:1:39: network.upstream_ca: expected a string (an absolute path to a PEM "
             "file), got a number");
}

static void test_network_capture(void)
{
        struct rf_policy *p = parse_ok("{\"version\":1,\"network\":{\"allow\":[\"a.test\"]}}",
                                       "network.capture left out");
        ok(p && p->net_capture == POLICY_CAPTURE_UNSET &&
                   !strcmp(policy_capture_name(p->net_capture), "transparent"),
           "network.capture: transparent by default");
        char *j = p ? to_json(p) : NULL;
        ok(j && !strstr(j, "capture"), "... and the default is not written out: %s", j ? j : "");
        free(j);
        policy_free(p);
        p = parse_ok("{\"version\":1,\"network\":{\"capture\":\"proxy-only\"}}",
                     "network.capture proxy-only");
        ok(p && p->net_capture == POLICY_CAPTURE_PROXY_ONLY, "network.capture: proxy-only");
        j = p ? to_json(p) : NULL;
        ok(j && strstr(j, "\"network\":{\"capture\":\"proxy-only\"}"), "canonical JSON: %s",
           j ? j : "");
        free(j);
        struct rf_policy *o = policy_new();
        struct rf_error e = {0};
        if (o)
                o->net_capture = POLICY_CAPTURE_TRANSPARENT;
        ok(p && o && policy_merge(p, o, &e) == 0 && p->net_capture == POLICY_CAPTURE_TRANSPARENT,
           "an overlay's capture (--capture) replaces the file's");
        policy_free(o);
        policy_free(p);
        is_int(policy_capture_from_name("Transparent"), _POLICY_CAPTURE_INVALID, "names are exact");
        FAIL("{\"version\":1,\"network\":{\"capture\":\"tproxy\"}}", -EINVAL,
             "p.json:1:35: network.capture: must be \"transparent\" or \"proxy-only\"");
        FAIL("{\"version\":1,\"network\":{\"capture\":true}}", -EINVAL,
             "p.json:1:35: network.capture: expected a string (\"transparent\" or \"proxy-only\"), "
             "got a boolean");
}

static void test_network_storm(void)
{
        struct rf_policy *p =
                parse_ok("{\"version\":1,\"network\":{}}", "network.on_refusal_storm left out");
        ok(p && p->net_on_storm == POLICY_STORM_UNSET &&
                   !strcmp(policy_storm_name(p->net_on_storm), "notice"),
           "network.on_refusal_storm: notice by default");
        char *j = p ? to_json(p) : NULL;
        ok(j && !strstr(j, "storm"), "... and the default is not written out");
        free(j);
        policy_free(p);
        p = parse_ok("{\"version\":1,\"network\":{\"on_refusal_storm\":\"kill\"}}",
                     "network.on_refusal_storm kill");
        ok(p && p->net_on_storm == POLICY_STORM_KILL, "network.on_refusal_storm: kill");
        j = p ? to_json(p) : NULL;
        ok(j && strstr(j, "\"network\":{\"on_refusal_storm\":\"kill\"}"), "canonical JSON: %s",
           j ? j : "");
        free(j);
        struct rf_policy *d = NULL;
        ok(p && policy_dup(p, &d) == 0 && d->net_on_storm == POLICY_STORM_KILL,
           "... copied by policy_dup");
        policy_free(d);
        struct rf_policy *o = policy_new();
        struct rf_error e = {0};
        if (o)
                o->net_on_storm = POLICY_STORM_NOTICE;
        ok(p && o && policy_merge(p, o, &e) == 0 && p->net_on_storm == POLICY_STORM_NOTICE,
           "an overlay's on_refusal_storm replaces the file's");
        policy_free(o);
        policy_free(p);
        is_int(policy_storm_from_name("Kill"), _POLICY_STORM_INVALID, "names are exact");
        FAIL("{\"version\":1,\"network\":{\"on_refusal_storm\":\"ignore\"}}", -EINVAL,
             "p.json:1:44: network.on_refusal_storm: must be \"notice\" or \"kill\"");
}

/* network.publish / --publish (issue 16): the text form, loopback only. */
static void test_network_publish(void)
{
        static const struct {
                const char *s;
                int r;
                bool v6;
                uint16_t h, run;
        } cases[] = {
                {"8080:1455", 0, false, 8080, 1455},
                {"127.0.0.1:8080:1455", 0, false, 8080, 1455},
                {"[::1]:1:65535", 0, true, 1, 65535},
                {"0.0.0.0:80:80", -EINVAL, false, 0, 0},
                {"192.0.2.1:80:80", -EINVAL, false, 0, 0},
                {"[::]:80:80", -EINVAL, false, 0, 0},
                {"localhost:80:80", -EINVAL, false, 0, 0},
                {"127.0.0.2:80:80", -EINVAL, false, 0, 0},
                {"80", -EINVAL, false, 0, 0},
                {"80:", -EINVAL, false, 0, 0},
                {":80", -EINVAL, false, 0, 0},
                {"0:80", -EINVAL, false, 0, 0},
                {"80:65536", -EINVAL, false, 0, 0},
                {"080:80", -EINVAL, false, 0, 0},
                {"+80:80", -EINVAL, false, 0, 0},
                {"80:80 ", -EINVAL, false, 0, 0},
                {"127.0.0.1:", -EINVAL, false, 0, 0},
                {"", -EINVAL, false, 0, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct policy_publish pp = {0};
                const char *why = NULL;
                int r = policy_publish_parse(cases[i].s, strlen(cases[i].s), &pp, &why);
                ok(r == cases[i].r && (r < 0 ? why != NULL
                                             : pp.v6 == cases[i].v6 && pp.host_port == cases[i].h &&
                                                       pp.run_port == cases[i].run),
                   "publish \"%s\": %s", cases[i].s,
                   r == 0 ? "accepted"
                   : why  ? why
                          : "?");
        }
        /* the parser reads exactly len bytes */
        struct policy_publish pp;
        const char *why = NULL;
        ok(policy_publish_parse("80:81junk", 5, &pp, &why) == 0 && pp.run_port == 81,
           "publish: exactly len bytes are read");
        char t[POLICY_PUBLISH_TEXT_MAX];
        policy_publish_text(&(struct policy_publish){.v6 = false, 65535, 65535}, t);
        is_str(t, "127.0.0.1:65535:65535", "the longest text fits");

        struct rf_policy *p = parse_ok(
                "{\"version\":1,\"network\":{\"publish\":[\"8080:1455\",\"[::1]:8080:1455\","
                "\"127.0.0.1:8080:1455\"]}}",
                "network.publish");
        ok(p && p->n_net_publish == 2 && !p->net_publish[0].v6 && p->net_publish[1].v6,
           "network.publish: one entry per host address and port");
        char *j = p ? to_json(p) : NULL;
        ok(j && strstr(j, "\"publish\":[\"127.0.0.1:8080:1455\",\"[::1]:8080:1455\"]"),
           "canonical JSON: %s", j ? j : "");
        free(j);
        struct rf_policy *d = NULL;
        ok(p && policy_dup(p, &d) == 0 && d->n_net_publish == 2 &&
                   d->net_publish[1].run_port == 1455,
           "... copied by policy_dup");
        struct rf_error e = {0};
        struct policy_publish other = {.host_port = 8080, .run_port = 9};
        is_int(p ? policy_add_publish(p, &other, &e) : 0, -EINVAL,
               "the same host port to another run port: refused");
        ok(strstr(e.msg, "already published to run port 1455"), "... saying which: %s", e.msg);
        struct rf_policy *o = policy_new();
        struct policy_publish more = {.host_port = 9000, .run_port = 9};
        ok(o && policy_add_publish(o, &more, &e) == 0 && p && policy_merge(p, o, &e) == 0 &&
                   p->n_net_publish == 3,
           "an overlay's published ports are added");
        policy_free(o);
        policy_free(d);
        for (uint16_t k = 0; p && p->n_net_publish < POLICY_PUBLISH_MAX; k++)
                (void)policy_add_publish(
                        p, &(struct policy_publish){.host_port = 100 + k, .run_port = 1}, &e);
        is_int(p ? policy_add_publish(p, &(struct policy_publish){.host_port = 99, .run_port = 1},
                                      &e)
                 : 0,
               -E2BIG, "more than POLICY_PUBLISH_MAX published ports: refused");
        policy_free(p);
        FAIL("{\"version\":1,\"network\":{\"publish\":[\"0.0.0.0:80:80\"]}}", -EINVAL,
             "p.json:1:36: network.publish[0]: only the host's loopback (127.0.0.1 or [::1]) can "
             "be "
             "published to");
        FAIL("{\"version\":1,\"network\":{\"publish\":[8080]}}", -EINVAL,
             "p.json:1:36: network.publish[0]: expected a "
             "\"[127.0.0.1:|[::1]:]HOST_PORT:RUN_PORT\" "
             "string, got a number");
}

/* policy_compile: the rules typed once, in order; a hand-built policy's
 * bad rule refused with its text; a second compile replaces the first */
static void test_compile(void)
{
        struct rf_policy *p = parse_ok(
                "{\"version\":1,\"network\":{\"allow\":[\"api.example.com:443\",\"10.0.0.0/8\"],"
                "\"deny\":[\"*.bad.example\"],\"http\":[\"api.example.com GET /v1/*\"]}}",
                "a policy with rules");
        ok(p && !p->compiled && !p->allow_rules, "parsing alone compiles nothing");
        is_int(p ? policy_apply_defaults(p) : -1, 0, "apply defaults compiles");
        ok(p && p->compiled && p->allow_rules && p->deny_rules && p->http_rules, "typed rules");
        ok(p && p->allow_rules[0].kind == RULE_HOST &&
                   !strcmp(p->allow_rules[0].host, "api.example.com") &&
                   p->allow_rules[0].n_ports == 1 && p->allow_rules[0].ports[0] == 443,
           "allow[0]: the host and its port");
        ok(p && p->allow_rules[1].kind == RULE_CIDR && p->allow_rules[1].prefix == 8,
           "allow[1]: the CIDR");
        ok(p && p->deny_rules[0].kind == RULE_SUFFIX &&
                   !strcmp(p->deny_rules[0].host, "bad.example"),
           "deny[0]: the suffix");
        ok(p && !strcmp(p->http_rules[0].host, "api.example.com"), "http[0]: its host");
        struct net_rule *before = p ? p->allow_rules : NULL;
        is_int(p ? policy_compile(p, NULL) : -1, 0, "compiled again");
        ok(p && p->allow_rules && p->allow_rules != before && p->allow_rules[1].prefix == 8,
           "... the arrays replaced, the same rules");
        policy_free(p);

        struct rf_policy h = {0};
        char *bad[] = {"ok.example", "not a rule"};
        struct rf_error err = {0};
        h.net_allow = bad;
        h.n_net_allow = 2;
        is_int(policy_compile(&h, &err), -EINVAL, "a hand-built policy's bad rule: refused");
        ok(strstr(err.msg, "not a rule") != NULL, "... naming it (%s)", err.msg);
        ok(!h.compiled && !h.allow_rules, "... nothing half-compiled kept");
}

/* filesystem.rootfs: absolute, clean, not "/"; merged, copied, printed */
static void test_rootfs(void)
{
        struct rf_policy *p = parse_ok("{\"version\":1,\"filesystem\":{\"rootfs\":\"/srv/img/\"}}",
                                       "a policy with a rootfs");
        is_str(p ? p->rootfs : NULL, "/srv/img", "rootfs normalised");
        char *json = NULL;
        is_int(p ? policy_to_json(p, &json) : -1, 0, "printed");
        ok(json && strstr(json, "\"rootfs\":\"/srv/img\""), "... with its rootfs (%s)", json);
        free(json);
        struct rf_policy *o = policy_new(), *m = NULL;
        struct rf_error err = {0};
        is_int(policy_set_string(&o->rootfs, "/other", 4096, &err), 0, "an overlay's rootfs");
        is_int(p ? policy_merge(p, o, &err) : -1, 0, "merged");
        is_str(p ? p->rootfs : NULL, "/other", "... the overlay's wins");
        is_int(p ? policy_dup(p, &m) : -1, 0, "copied");
        ok(m && p && m->rootfs && m->rootfs != p->rootfs && !strcmp(m->rootfs, "/other"),
           "... its own string");
        policy_free(m);
        policy_free(o);
        policy_free(p);
        struct rf_policy *bad = NULL;
        struct rf_error e2 = {0};
        const char *doc = "{\"version\":1,\"filesystem\":{\"rootfs\":\"/\"}}";
        is_int(policy_parse(doc, strlen(doc), "p.json", &bad, &e2), -EINVAL,
               "rootfs \"/\": refused");
        ok(strstr(e2.msg, "host's own root") != NULL, "... saying so (%s)", e2.msg);
        policy_free(bad);
}

/* a policy with env bindings A, B and a file binding C (their texts canonical) */
static struct rf_policy *three_secrets(void)
{
        static const char *const b[] = {
                "{\"deliver\":\"env\",\"from\":\"store:a\",\"name\":\"A\"}",
                "{\"deliver\":\"env\",\"from\":\"store:b\",\"name\":\"B\"}",
                "{\"deliver\":\"file\",\"from\":\"store:c\",\"name\":\"c.pem\"}"};
        struct rf_policy *p = policy_new();
        for (size_t i = 0; p && i < 3; i++) {
                struct rf_error err = {0};
                char *t = strdup(b[i]);
                if (!t || policy_add_secret(p, t, &err) < 0)
                        abort();
        }
        return p;
}

static void test_keep_secrets(void)
{
        struct rf_error err = {0};
        struct rf_policy *p = three_secrets();
        is_int(policy_keep_secrets(p, "c.pem, A", &err), 0, "keep secrets by name: A and c.pem");
        ok(p->n_secrets == 2 && strstr(p->secrets[0], "\"A\"") && strstr(p->secrets[1], "c.pem"),
           "... the two, in the policy's order, B gone");
        policy_free(p);

        p = three_secrets();
        memset(&err, 0, sizeof err);
        is_int(policy_keep_secrets(p, "A,D", &err), -ENOENT,
               "a name the policy does not grant: refused");
        ok(strstr(err.msg, "grants no secret D") != NULL, "... naming it (%s)", err.msg);
        is_int((int)p->n_secrets, 3, "... the policy left as it was");
        memset(&err, 0, sizeof err);
        is_int(policy_keep_secrets(p, "A,,B", &err), -EINVAL, "an empty name: refused");
        is_int(policy_keep_secrets(p, "", &err), -EINVAL, "no name at all: refused");
        char longname[SECRET_TARGET_MAX + 8];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        is_int(policy_keep_secrets(p, longname, &err), -EINVAL, "a name past the bound: refused");
        is_int(policy_keep_secrets(p, " B ", &err), 0, "blanks around a name: trimmed");
        is_int((int)p->n_secrets, 1, "... B alone");
        policy_free(p);
}

/* Every typed binding is what its canonical text says (rf_policy.bindings
 * beside .secrets, index for index). */
static bool bindings_agree(const struct rf_policy *p)
{
        for (size_t i = 0; i < p->n_secrets; i++) {
                struct secret_binding b;
                char why[256], *t = NULL;
                if (secret_binding_parse(p->secrets[i], strlen(p->secrets[i]), &b, why,
                                         sizeof why) < 0)
                        return false;
                bool same = secret_binding_to_json(&p->bindings[i], &t) == 0 &&
                            !strcmp(t, p->secrets[i]) && b.delivery == p->bindings[i].delivery &&
                            !strcmp(b.name, p->bindings[i].name);
                free(t);
                secret_binding_clear(&b);
                if (!same)
                        return false;
        }
        return true;
}

static void test_typed_bindings(void)
{
        struct rf_error err = {0};
        struct rf_policy *p = three_secrets(), *q = NULL, *o = policy_new();
        ok(p && bindings_agree(p), "typed bindings: made with each one added");
        ok(p && p->bindings[2].delivery == SECRET_FILE && !strcmp(p->bindings[2].key, "c"),
           "... typed (c.pem: a file from store:c)");
        char *t = strdup("{\"deliver\":\"env\",\"from\":\"store:b2\",\"name\":\"B\"}");
        is_int(policy_add_secret(p, t, &err), 0, "a binding of the same delivery and name");
        ok(p->n_secrets == 3 && !strcmp(p->bindings[1].key, "b2") && bindings_agree(p),
           "... replaces it, text and typed form together");
        t = strdup("{\"deliver\":\"broker\",\"exec\":[\"vault\",\"kv\",\"get\"],"
                   "\"name\":\"api\",\"pass_env\":[\"VAULT_ADDR\"]}");
        ok(o && policy_add_secret(o, t, &err) == 0, "an overlay with an exec binding (%s)",
           err.msg);
        is_int(policy_merge(p, o, &err), 0, "merged");
        ok(p->n_secrets == 4 && p->bindings[3].argc == 3 &&
                   !strcmp(p->bindings[3].argv[2], "get") && !p->bindings[3].argv[3] &&
                   p->bindings[3].n_pass_env == 1 && bindings_agree(p),
           "... its typed form copied whole (argv, pass_env)");
        ok(policy_dup(p, &q) == 0 && q->n_secrets == 4 &&
                   q->bindings[3].argv != p->bindings[3].argv && bindings_agree(q),
           "a copy of the policy: its own typed bindings");
        is_int(policy_keep_secrets(q, "api,c.pem", &err), 0, "kept by name");
        ok(q->n_secrets == 2 && !strcmp(q->bindings[0].name, "c.pem") &&
                   !strcmp(q->bindings[1].name, "api") && bindings_agree(q),
           "... the typed forms compacted with their texts");
        static const char doc[] =
                "{\"version\":1,\"secrets\":[{\"name\":\"X\",\"deliver\":\"env\",\"from\":"
                "\"store:x\"},{\"name\":\"y\",\"deliver\":\"inject\",\"from\":\"store:y\","
                "\"env\":\"Y\",\"hosts\":[\"api.example.test\"]}]}";
        struct rf_policy *r = NULL;
        ok(policy_parse(doc, strlen(doc), "t.json", &r, &err) == 0 && r->n_secrets == 2 &&
                   r->bindings[1].delivery == SECRET_INJECT && r->bindings[1].n_hosts == 1 &&
                   bindings_agree(r),
           "a parsed policy's typed bindings (%s)", err.msg);
        policy_free(r);
        policy_free(q);
        policy_free(o);
        policy_free(p);
}

int main(void)
{
        test_typed_bindings();
        test_rootfs();
        test_compile();
        test_network_publish();
        test_network_section();
        test_network_capture();
        test_network_storm();
        test_audit_section();
        test_parse_good();
        test_top_level_errors();
        test_identity_errors();
        test_path_errors();
        test_size_errors();
        test_limit_errors();
        test_env_errors();
        test_misc_parse();
        test_units();
        test_paths();
        test_setters();
        test_merge();
        test_dup();
        test_to_json();
        test_load_file();
        test_protected_normalize();
        test_protected_parse();
        test_protected_errors();
        test_protected_setter();
        test_protected_merge_dup_json();
        test_keep_secrets();
#ifdef RF_EXAMPLES_DIR
        test_examples();
#endif
        return done();
}
