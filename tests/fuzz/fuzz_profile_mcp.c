/*
 * fuzz_profile_mcp.c — libFuzzer target for how a profile takes the
 * caller's MCP servers into the run (src/cli/profile_home.c, its pure
 * parts): the scanner that finds only the mcpServers members of a
 * ~/.claude.json (the document may be far larger than json_parse takes)
 * and the run's ~/.claude.json made from them (profile_claude_state); and
 * Codex's config.toml with its hooks left out (profile_codex_config: a
 * notify or [hooks] value over several lines).
 *
 * Beyond "no crash, no out-of-bounds access, no UB": an accepted
 * ~/.claude.json comes out as one JSON object that json_parse reads back,
 * onboarding done, and no member of it at any depth whose name looks
 * like a credential's keeps a string or number value; the Codex config is
 * never longer than the caller's plus a comment line for each of its lines
 * (nothing is copied twice, whatever a multi-line value's extent). profile_home.c is compiled into
 * the target; the caller's identity (used only to read files) is stubbed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/profile_home.h"
#include "shared/json.h"

int LLVMFuzzerTestOneInput(const char *data, size_t size);

int caller_enter(const struct rf_caller *c)
{
        (void)c;
        return -EPERM;
}

void caller_leave(const struct rf_caller *c)
{
        (void)c;
}

/* does any object member (at any depth) whose name holds a credential's
 * word keep a string or number value? */
static bool credential_kept(const struct json_node *n)
{
        static const char *const words[] = {"key", "token", "secret", "password", "authorization"};
        for (size_t i = 0; (n->type == JSON_OBJECT || n->type == JSON_ARRAY) && i < n->n_items;
             i++) {
                const struct json_node *m = n->items[i];
                if (n->type == JSON_OBJECT && (m->type == JSON_STRING || m->type == JSON_NUMBER))
                        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
                                for (size_t k = 0; k + strlen(words[w]) <= m->key_len; k++)
                                        if (!strncasecmp(m->key + k, words[w], strlen(words[w])))
                                                return true;
                if (credential_kept(m))
                        return true;
        }
        return false;
}

static size_t count_lines(const char *s, size_t n)
{
        size_t k = 1;
        for (size_t i = 0; i < n; i++)
                k += s[i] == '\n';
        return k;
}

int LLVMFuzzerTestOneInput(const char *data, size_t size)
{
        char *out = NULL;
        size_t n = 0;
        struct rf_error err = {0};
        struct json_node *doc = NULL;

        if (profile_claude_state(data, size, "/ws", "abcdefghij0123456789", &out, &n, &err) == 0) {
                if (!out || json_parse(out, n, &doc, &err) < 0 || doc->type != JSON_OBJECT ||
                    !json_object_get(doc, "hasCompletedOnboarding") || credential_kept(doc))
                        abort();
                json_node_free(doc);
        }
        free(out);
        out = NULL;
        /* each line of the caller's is kept, left out or replaced by one
         * comment line: nothing is copied twice */
        if (profile_codex_config(data, size, "/ws", &out, &n) == 0 &&
            n > size + count_lines(data, size) * 64 + 512)
                abort();
        free(out);
        return 0;
}
