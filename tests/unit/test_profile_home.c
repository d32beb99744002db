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

/* Codex's hooks: notify (even a multi-line array) and [hooks] tables left
 * out; a multi-line value of another key kept whole (its inner lines are
 * not keys); MCP servers kept without their credentials */
static void test_codex_hooks(void)
{
        char *o = codex("model = \"m\"\nnotify = [\n  \"python3\",\n  \"/h/notify.py\", # x\n]\n"
                        "tools = [\n  \"a=b\",\n  \"sandbox_mode = 1\",\n]\n"
                        "hooks.stop = \"x\"\n"
                        "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs-mcp\"]\n"
                        "env = { DOCS_TOKEN = \"t-123\" }\n"
                        "[mcp_servers.docs.env]\nGITHUB_TOKEN = \"ghp-1\"\nMODE = \"fast\"\n"
                        "[hooks]\nx = 1\n[[hooks.pre_tool_use]]\ncommand = [\"/h/guard\"]\n"
                        "[tui]\ny = 2\n",
                        NULL);
        ok(o && !strstr(o, "notify") && !strstr(o, "/h/notify.py") && !strstr(o, "python3"),
           "codex: notify left out, its whole multi-line array with it");
        ok(o && strstr(o, "tools = [\n  \"a=b\",\n  \"sandbox_mode = 1\",\n]\n"),
           "... another key's multi-line array kept whole (its lines are not keys)");
        ok(o && !strstr(o, "hooks.stop") && !strstr(o, "/h/guard") && !strstr(o, "x = 1"),
           "... [hooks], [[hooks.*]] and hooks.* keys left out");
        ok(o && strstr(o, "[tui]\ny = 2\n"), "... the table after them kept");
        ok(o &&
                   strstr(o, "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", "
                             "\"docs-mcp\"]\n") &&
                   strstr(o, "MODE = \"fast\""),
           "... MCP servers kept");
        ok(o && !strstr(o, "t-123") && !strstr(o, "ghp-1"),
           "... without their credentials (an inline env naming a token, a token line)");
        ok(o && lines(o, "model = \"m\"") == 1, "... the rest as it was");
        free(o);
        o = codex("notify = [\"a\",\n", NULL);
        ok(o && !strstr(o, "\"a\""), "codex: an array that never ends: left out to the end");
        free(o);
        o = codex("x = \"\"\"\nnotify = 1\n\"\"\"\ny = 1\n", NULL);
        ok(o && strstr(o, "x = \"\"\"\nnotify = 1\n\"\"\"\n") && lines(o, "y = 1") == 1,
           "codex: a multi-line string holding 'notify =' kept whole (not a key)");
        free(o);
        o = codex("developer_instructions = \"\"\"\nBe brief.\napi_token = \"sk-in\"\n\"\"\"\n"
                  "servers = [\n  { name = \"a\", token = \"sk-arr\" },\n]\nz = 1\n",
                  NULL);
        ok(o && !strstr(o, "sk-in") && strstr(o, "developer_instructions = \"\"\"\nBe brief.\n# ("),
           "codex: a credential-looking line inside a multi-line string left out, the rest kept");
        ok(o && !strstr(o, "sk-arr") && !strstr(o, "servers") && lines(o, "z = 1") == 1,
           "... an array of inline tables naming a token over several lines: left out whole");
        free(o);
}

static char *claude(const char *in, const char *ws, const char *tail, int *r)
{
        char *out = NULL;
        size_t n = 0;
        struct rf_error err = {0};
        *r = profile_claude_state(in, in ? strlen(in) : 0, ws, tail, &out, &n, &err);
        if (*r == 0) {
                struct json_node *doc = NULL;
                ok(json_parse(out, n, &doc, &err) == 0 && doc->type == JSON_OBJECT,
                   "profile_claude_state: one JSON object");
                json_node_free(doc);
        }
        return out;
}

static void test_claude_state(void)
{
        int r;
        char *o = claude(NULL, "/ws", NULL, &r);
        ok(o && r == 0 && strstr(o, "\"hasCompletedOnboarding\":true") &&
                   strstr(o, "\"/ws\":{\"hasTrustDialogAccepted\":true}") &&
                   !strstr(o, "mcpServers"),
           "claude state without the caller's: onboarding done, the workspace trusted");
        free(o);
        o = claude(NULL, "/ws", "abcdefghij0123456789", &r);
        ok(o && strstr(o, "\"approved\":[\"abcdefghij0123456789\"]"),
           "... the key's tail approved");
        free(o);

        /* a document with long strings and many members json_parse would
         * refuse: only the mcpServers spans are parsed */
        static char big[300000];
        size_t k = (size_t)snprintf(big, sizeof big,
                                    "{\"numStartups\": 3, \"oauthAccount\": {\"emailAddress\": "
                                    "\"u@example.test\"}, \"history\": \"");
        memset(big + k, 'h', 200000);
        k += 200000;
        snprintf(big + k, sizeof big - k,
                 "\\\" } { [\", \"projects\": {\"/other\": {\"mcpServers\": {\"o\": {}}}, "
                 "\"/w\\u00e9s\": {\"allowedTools\": [], \"mcpServers\": {\"local\": "
                 "{\"command\": \"node\", \"env\": {\"API_KEY\": \"sk-local\"}}}}}, "
                 "\"mcpServers\": {\"github\": {\"type\": \"http\", \"url\": "
                 "\"https://api.example.test/mcp\", \"headers\": {\"Authorization\": \"Bearer "
                 "ghp-x\", \"X-Mode\": \"a\"}, \"headersHelper\": \"/h/helper.sh\"}, \"fs\": "
                 "{\"command\": \"npx\", \"args\": [\"-y\", \"fs\"], \"env\": {\"GITHUB_TOKEN\": "
                 "\"ghp-y\", \"DEBUG\": \"1\"}}}}");
        o = claude(big, "/w\xc3\xa9s", NULL, &r);
        ok(o && r == 0, "claude state from a large ~/.claude.json (a 200000-byte string in it)");
        ok(o && strstr(o,
                       "\"mcpServers\":{\"github\":{\"type\":\"http\",\"url\":\"https://"
                       "api.example.test/mcp\",\"headers\":{\"X-Mode\":\"a\"}},\"fs\":{"
                       "\"command\":\"npx\",\"args\":[\"-y\",\"fs\"],\"env\":{\"DEBUG\":\"1\"}}}"),
           "... its user-scope MCP servers, without an Authorization header, a headersHelper "
           "or a token");
        ok(o && strstr(o, "{\"hasTrustDialogAccepted\":true,\"mcpServers\":{\"local\":{"
                          "\"command\":\"node\",\"env\":{}}}}"),
           "... the workspace's own (local scope, its key escaped as \\u00e9), without its key");
        ok(o && !strstr(o, "\"o\"") && !strstr(o, "u@example.test") && !strstr(o, "hhhh") &&
                   !strstr(o, "numStartups"),
           "... nothing else of the caller's");
        free(o);

        o = claude("{\"mcpServers\": 3}", "/ws", NULL, &r);
        ok(!o && r == -EINVAL, "claude: mcpServers not an object: refused");
        o = claude("[1]", "/ws", NULL, &r);
        ok(!o && r == -EINVAL, "claude: not an object: refused");
        o = claude("{\"a\": \"unterminated", "/ws", NULL, &r);
        ok(!o && r == -EINVAL, "claude: cut short: refused");
        o = claude("{\"mcpServers\": {\"a\": {}}, \"mcpServers\": {\"b\": {}}}", "/ws", NULL, &r);
        ok(o && strstr(o, "\"mcpServers\":{\"b\":{}}") && !strstr(o, "\"a\""),
           "claude: a member given twice: the last, as JSON.parse takes it");
        free(o);
        o = claude("{\"projects\": {\"/ws\": 1}, \"x\": [1, {\"mcpServers\": {\"n\": {}}}]}", "/ws",
                   NULL, &r);
        ok(o && r == 0 && !strstr(o, "\"n\""),
           "claude: a nested mcpServers is not the top level's");
        free(o);
}

static void test_hooks_json(void)
{
        int r;
        char *o =
                gemini("{\"hooks\": {\"BeforeTool\": [{\"command\": \"/h/x\"}]}, \"hooksConfig\": "
                       "{\"enabled\": true}, \"mcpServers\": {\"s\": {\"command\": \"node\", "
                       "\"env\": {\"SLACK_TOKEN\": \"xoxb\"}}}}",
                       &r);
        ok(o && r == 0 && !strstr(o, "hooks") && !strstr(o, "/h/x"),
           "gemini: hooks and hooksConfig left out");
        ok(o && strstr(o, "\"mcpServers\":{\"s\":{\"command\":\"node\",\"env\":{}}}"),
           "... its MCP servers kept, without their credentials");
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

/* credentials found by their value or the flag before them, whatever
 * their name (a review's cases: Context7's --api-key argument, a URL's
 * token, a password in a URL, header text in a variable) */
static void test_credential_values(void)
{
        int r;
        char *o = gemini(
                "{\"mcpServers\": {\"ctx\": {\"command\": \"npx\", \"args\": [\"-y\", \"ctx7\", "
                "\"--api-key\", \"ctx7sk-1\", \"--token=tk-2\", \"--verbose\"], \"url\": "
                "\"https://h.example.test/mcp?apikey=k-3&x=1\", \"env\": {\"DB_PASS\": \"pw-4\", "
                "\"GITHUB_PAT\": \"pat-5\", \"DATABASE_URL\": \"postgres://u:pw-6@db/x\", "
                "\"OTEL_EXPORTER_OTLP_HEADERS\": \"Authorization=Bearer ot-7\", \"PATH\": "
                "\"/usr/bin\", \"AUTHOR\": \"me\"}, \"headers\": {\"X-Auth\": \"xa-8\"}}}}",
                &r);
        is_int(r, 0, "values: the caller's settings read");
        static const char *const gone[] = {"ctx7sk-1", "tk-2", "k-3",  "pw-4",
                                           "pat-5",    "pw-6", "ot-7", "xa-8"};
        for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
                ok(o && !strstr(o, gone[i]), "values: %s left out", gone[i]);
        ok(o && strstr(o, "\"args\":[\"-y\",\"ctx7\",\"--api-key\",\"\",\"\",\"--verbose\"]"),
           "... an argument after a flag naming a credential, or one holding it, emptied: the "
           "rest of the array as it was (%s)",
           o ? o : "");
        ok(o && strstr(o, "\"PATH\":\"/usr/bin\"") && strstr(o, "\"AUTHOR\":\"me\""),
           "... PATH and AUTHOR kept (a short word ends a name only after a separator)");
        free(o);
        o = codex("[mcp_servers.c]\ncommand = \"npx\"\nargs = [\"-y\", \"--api-key\", \"k-9\"]\n"
                  "url = \"https://h.example.test/mcp?token=t-10\"\n"
                  "[mcp_servers.c.env]\nDB_PASS = \"p-11\"\nMODE = \"fast\"\n",
                  NULL);
        ok(o && !strstr(o, "k-9") && !strstr(o, "t-10") && !strstr(o, "p-11"),
           "codex: an args line with --api-key, a URL with a token, DB_PASS left out");
        ok(o && strstr(o, "command = \"npx\"") && strstr(o, "MODE = \"fast\""),
           "... the rest kept");
        free(o);
}

int main(void)
{
        test_codex();
        test_credential_values();
        test_codex_hooks();
        test_gemini();
        test_hooks_json();
        test_claude_state();
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
