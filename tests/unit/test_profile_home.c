/*
 * test_profile_home.c — the pure parts of the agents' configuration files
 * a profile puts in a run's $HOME (cli/profile_home.h): Codex's
 * config.toml and Gemini CLI's settings.json with what only reaches hosts
 * a run does not allow turned off (the update checks, analytics and usage
 * statistics, Codex's plugin sync and model list refresh), the caller's
 * own settings kept, their credentials left out; JSON with comments.
 *
 * profile_home.c is compiled into this test; the caller's identity
 * (caller_enter/caller_leave, used only to read the caller's files) is
 * stubbed: nothing here reads a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile_home.h"
#include "shared/json.h"
#include "tap.h"

int caller_enter(const struct rf_caller *c)
{
        (void)c;
        return -EPERM;
}

void caller_leave(const struct rf_caller *c)
{
        (void)c;
}

static char *codex(const char *in, const char *ws)
{
        char *out = NULL;
        size_t n = 0;
        int r = profile_codex_config(in, in ? strlen(in) : 0, ws, &out, &n);
        if (r < 0)
                return NULL;
        ok(strlen(out) == n, "profile_codex_config: its length is the text's");
        return out;
}

/* the number of lines of text that are exactly line */
static int lines(const char *text, const char *line)
{
        int k = 0;
        size_t ll = strlen(line);
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t)(nl - p) : strlen(p);
                k += l == ll && !memcmp(p, line, l);
                p = nl ? nl + 1 : p + l;
        }
        return k;
}

static void test_codex(void)
{
        char *o = codex(NULL, "/ws/a \"b\"");
        ok(o && lines(o, "sandbox_mode = \"danger-full-access\"") == 1 &&
                   lines(o, "check_for_update_on_startup = false") == 1,
           "codex, made for the run: its sandbox and the update check off");
        ok(o && strstr(o, "[analytics]\nenabled = false\n") &&
                   strstr(o, "[features]\nplugins = false\napi_key_model_discovery = false\n"),
           "... analytics, the plugin sync and the model list refresh off");
        ok(o && strstr(o, "[projects.\"/ws/a \\\"b\\\"\"]\ntrust_level = \"trusted\"\n"),
           "... the workspace trusted");
        free(o);

        /* the caller's, with its own [features] and [analytics] */
        o = codex("model = \"gpt-5.1-codex\"\nsandbox_mode = \"workspace-write\"\n"
                  "\"check_for_update_on_startup\" = true\n[analytics]\nenabled = true\n"
                  "[features]\n plugins = true\nshell_snapshot = false\n"
                  "[profiles.x]\nsandbox_mode = \"read-only\"\n[profiles.x.features]\nplugins = "
                  "true\n",
                  "/ws");
        ok(o && lines(o, "sandbox_mode = \"danger-full-access\"") == 1 &&
                   !strstr(o, "workspace-write") && !strstr(o, "= true\n[analytics]"),
           "codex, the caller's: its top-level sandbox_mode and update check replaced");
        ok(o && strstr(o, "[analytics]\nenabled = false\n[features]\nplugins = false\n"
                          "api_key_model_discovery = false\nshell_snapshot = false\n"),
           "... ours first in its [analytics] and [features], its own values of them left out, "
           "the rest kept");
        ok(o && lines(o, "model = \"gpt-5.1-codex\"") == 1 &&
                   strstr(o, "[profiles.x]\nsandbox_mode = \"read-only\"\n"
                             "[profiles.x.features]\nplugins = true\n"),
           "... its [profiles.*] as they are");
        ok(o && !strstr(o, "[projects."), "... no workspace trust added to the caller's");
        free(o);

        /* dotted keys at the top level define the table there */
        o = codex("features.shell_snapshot = false\nfeatures.plugins = true\nanalytics = { "
                  "enabled = true }\n[tui]\nx = 1\n",
                  NULL);
        ok(o &&
                   strstr(o, "features.plugins = false\nfeatures.api_key_model_discovery = "
                             "false\nfeatures.shell_snapshot = false\n") &&
                   !strstr(o, "features.plugins = true") && !strstr(o, "[features]"),
           "codex, dotted features.* keys: ours added dotted, no [features] table after them");
        ok(o && strstr(o, "analytics = { enabled = true }\n") && !strstr(o, "[analytics]"),
           "... an inline analytics table left as it is (TOML allows no second one)");
        free(o);

        /* credentials left out, as before */
        o = codex("[model_providers.corp]\nenv_key = \"CORP_KEY\"\nexperimental_bearer_token = "
                  "\"sk-1\"\n",
                  NULL);
        ok(o && !strstr(o, "sk-1") && strstr(o, "env_key = \"CORP_KEY\"") &&
                   strstr(o, "# (a credential: ringfence keeps it out of the run)"),
           "codex: a credential line left out, a variable's name kept");
        ok(o && strstr(o, "[features]\nplugins = false\n"), "... our tables appended");
        free(o);
}

static char *gemini(const char *in, int *r)
{
        char *out = NULL;
        size_t n = 0;
        struct rf_error err = {0};
        *r = profile_gemini_settings(in, in ? strlen(in) : 0, &out, &n, &err);
        if (*r < 0)
                diag("%s", err.msg);
        return out;
}

static void test_gemini(void)
{
        int r;
        char *o = gemini(NULL, &r);
        is_str(o,
               "{\"general\":{\"enableAutoUpdate\":false,\"enableAutoUpdateNotification\":"
               "false},\"privacy\":{\"usageStatisticsEnabled\":false},\"security\":{\"auth\":"
               "{\"selectedType\":\"gemini-api-key\"}}}\n",
               "gemini, made for the run: updates, the update nag and usage statistics off, "
               "API-key auth");
        free(o);
        o = gemini("// mine\n{\"general\": {\"vimMode\": true, \"disableUpdateNag\": false, "
                   "\"enableAutoUpdate\": true}, /* block\n */ \"mcpServers\": {\"gh\": {\"url\": "
                   "\"http://x//y/*z*/\", \"headers\": {\"Authorization\": \"Bearer g1\"}}}}\n",
                   &r);
        is_int(r, 0, "gemini, the caller's with comments: accepted");
        is_str(o,
               "{\"general\":{\"vimMode\":true,\"enableAutoUpdate\":false,"
               "\"enableAutoUpdateNotification\":false},\"mcpServers\":{\"gh\":{\"url\":"
               "\"http://x//y/*z*/\",\"headers\":{}}},\"privacy\":{"
               "\"usageStatisticsEnabled\":false}}\n",
               "... its settings kept (a // in a string too), ours in place of its own, its "
               "credentials left out");
        free(o);
        o = gemini("{\"privacy\": {\"usageStatisticsEnabled\": true}, \"general\": 3}", &r);
        is_str(o,
               "{\"privacy\":{\"usageStatisticsEnabled\":false},\"general\":{"
               "\"enableAutoUpdate\":false,\"enableAutoUpdateNotification\":false}}\n",
               "gemini: usage statistics off in the caller's privacy; a general that is no "
               "object replaced");
        free(o);
        o = gemini("[1]", &r);
        ok(!o && r == -EINVAL, "gemini: not an object: refused");
        o = gemini("{\"a\": 1,}", &r);
        ok(!o && r == -EINVAL, "gemini: a trailing comma: refused (Gemini CLI refuses it too)");
        o = gemini("{\"a\": 1} /* open", &r);
        ok(o && r == 0, "gemini: an unterminated block comment at the end: runs to the end");
        free(o);
}

static void uncomment(const char *in, const char *want, const char *name)
{
        char buf[256];
        size_t n = strlen(in);
        memcpy(buf, in, n + 1);
        profile_json_uncomment(buf, n);
        is_str(buf, want, "uncomment: %s", name);
}

int main(void)
{
        test_codex();
        test_gemini();
        uncomment("{\"a\":1}// x\n", "{\"a\":1}    \n", "a line comment, its newline kept");
        uncomment("{/* x\ny */\"a\":1}", "{    \n    \"a\":1}",
                  "a block comment, its newline kept");
        uncomment("{\"a\":\"//x/*\\\"//\"}", "{\"a\":\"//x/*\\\"//\"}", "strings untouched");
        uncomment("{\"a\\\\\"://x\n1}", "{\"a\\\\\":   \n1}",
                  "an escaped backslash ends before the quote");
        uncomment("/", "/", "a lone slash at the end");
        uncomment("/*", "  ", "an open block comment");
        uncomment("/* a */*/", "       */", "a block comment ends at its first */");
        return done();
}
