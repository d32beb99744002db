/*
 * profile_home.c — the configuration files a profile puts in the run's
 * $HOME (profile_home.h): generated for the run, or copied from the
 * caller's own, read as the caller: a regular file (not a symbolic link)
 * of the caller's or root's that no one else may write (group write in the
 * owner's user private group is no one else's: shared/ownwrite.h), bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/profile_home.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "shared/npmrc.h"
#include "shared/ownwrite.h"
#include "shared/pipconf.h"

int profile_toml_string(const char *s, char *out, size_t size)
{
        size_t n = 0;

        if (size < 3)
                return -E2BIG;
        out[n++] = '"';
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                char esc[8];
                size_t el;
                if (*p == '"' || *p == '\\')
                        el = (size_t)snprintf(esc, sizeof esc, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        el = (size_t)snprintf(esc, sizeof esc, "\\u%04X", *p);
                else {
                        esc[0] = (char)*p;
                        el = 1;
                }
                if (n + el + 2 > size)
                        return -E2BIG;
                memcpy(out + n, esc, el);
                n += el;
        }
        out[n++] = '"';
        out[n] = '\0';
        return 0;
}

/* Whose private group a group-writable file of who's (or root's) would
 * be in, in words: "your", "uid 1001's", "root's" (in buf, or a literal). */
static const char *owner_whose(const struct rf_caller *who, const struct stat *st, char buf[32])
{
        if (st->st_uid == 0)
                return "root's";
        if (!who->other)
                return "your";
        snprintf(buf, 32, "uid %u's", (unsigned)st->st_uid);
        return buf;
}

/* profile_home_read, of at most max bytes */
static int home_read(const struct rf_caller *who, const char *rel, size_t max, char **data,
                     size_t *len, struct rf_error *err)
{
        char path[PATH_MAX];

        if (!who->home[0])
                return 1;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", who->home, rel) >= sizeof path)
                return rf_error_set(err, -ENAMETOOLONG, "~/%s: path too long", rel);
        int r = caller_enter(who);
        if (r < 0)
                return rf_error_set(err, r, "%s: cannot take uid %u's identity to read it", path,
                                    (unsigned)who->uid);
        /* the daemon's caller: its home (passwd's) as it is, nothing beneath
         * through a symbolic link; this process's own: the last one refused */
        _cleanup_close_ int hfd =
                who->other ? open(who->home, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd =
                !who->other ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                : hfd < 0   ? -1
                            : (int)syscall(SYS_openat2, hfd, rel, &how, sizeof how);
        int e = errno;
        caller_leave(who);
        if (fd < 0 && (e == ENOENT || e == ENOTDIR))
                return 1;
        if (fd < 0)
                return rf_error_set(err, -e,
                                    e == ELOOP ? "%s: a symbolic link (a profile copies "
                                                 "only a regular file into the run)"
                                               : "%s: %s (a profile copies it into the run)",
                                    path, strerror(e));
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
                return rf_error_set(err, -EINVAL,
                                    "%s: not a regular file of at most %zu bytes (a profile "
                                    "copies it into the run)",
                                    path, max);
        /* as for user profiles: root must not take another user's file
         * (sudo -E keeps that user's $HOME) into a run */
        if (st.st_uid != who->uid && (who->other || st.st_uid != 0)) {
                char whose[48] = "yours or root's";
                if (who->other)
                        snprintf(whose, sizeof whose, "uid %u's", (unsigned)who->uid);
                return rf_error_set(err, -EPERM,
                                    "%s: not a file of %s that only its owner may write; a "
                                    "profile copies it into the run, so it is refused",
                                    path, whose);
        }
        /* and no one else may write it (a user private group may:
         * shared/ownwrite.h) */
        enum ownwrite ow = ownwrite_check(fd, &st, NULL);
        if (ow != OWNWRITE_OWNER) {
                char why[256], whose[32];
                return rf_error_set(
                        err, -EPERM, "%s: %s; a profile copies it into the run, so it is refused",
                        path, ownwrite_why(ow, &st, owner_whose(who, &st, whose), why, sizeof why));
        }
        char *buf = malloc((size_t)st.st_size + 1);
        size_t n = 0;
        if (!buf)
                return rf_error_set(err, -ENOMEM, "out of memory");
        for (ssize_t k; n < (size_t)st.st_size; n += (size_t)k) {
                k = read(fd, buf + n, (size_t)st.st_size - n);
                if (k < 0 && errno == EINTR) {
                        k = 0;
                        continue;
                }
                if (k <= 0)
                        break;
        }
        buf[n] = '\0';
        *data = buf;
        *len = n;
        return 0;
}

int profile_home_read(const struct rf_caller *who, const char *rel, char **data, size_t *len,
                      struct rf_error *err)
{
        return home_read(who, rel, PROFILE_HOME_FILE_MAX, data, len, err);
}

#define LIT(b, s) json_buf_append((b), (s), sizeof(s) - 1)

static int copy_own(const struct profile_home_ctx *ctx, const char *rel, char **data, size_t *len,
                    struct rf_error *err)
{
        return profile_home_read(ctx->who, rel, data, len, err);
}

/* A generator's output: 0 with *data and *len, or the buffer's error
 * (-EINVAL: a string that cannot be written as JSON, the workspace path). */
static int take(struct json_buf *b, char **data, size_t *len, struct rf_error *err)
{
        if (b->error) {
                int e = b->error;
                json_buf_done(b);
                return rf_error_set(err, e, "%s",
                                    e == -EINVAL ? "the workspace path cannot be written as JSON"
                                                 : strerror(-e));
        }
        *data = b->data;
        *len = b->len;
        return 0;
}

/* Does a setting's name look like it holds a credential? (case-insensitive:
 * key, token, secret, password, passwd, credential, authorization, bearer,
 * cookie; helper: a command that prints one, apiKeyHelper, an MCP server's
 * headersHelper) — such a value stays out of the run's copy. */
static bool credential_name(const char *name, size_t len)
{
        static const char *const words[] = {"key",    "token",      "secret",    "password",
                                            "passwd", "credential", "helper",    "authorization",
                                            "bearer", "cookie",     "passphrase"};
        for (size_t w = 0; w < ARRAY_SIZE(words); w++) {
                size_t wl = strlen(words[w]);
                for (size_t i = 0; i + wl <= len; i++)
                        if (!strncasecmp(name + i, words[w], wl))
                                return true;
        }
        /* a short word ending the name after a separator (DB_PASS,
         * GITHUB_PAT, X-Auth), never inside one (PATH, author) */
        static const char *const ends[] = {"pass", "pat", "pwd", "auth"};
        for (size_t w = 0; w < ARRAY_SIZE(ends); w++) {
                size_t wl = strlen(ends[w]);
                if (len >= wl && !strncasecmp(name + len - wl, ends[w], wl) &&
                    (len == wl || strchr("_-.", name[len - wl - 1])))
                        return true;
        }
        return false;
}

/* Does a string look like a credential whatever it is named: a URL's
 * user:password, a query parameter with a credential-looking name and a
 * value, or Authorization, Bearer or API-key text in it (a header line
 * in a variable: OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer ...")? */
static bool credential_value(const char *s, size_t len)
{
        static const char *const texts[] = {"authorization", "bearer ", "api-key", "apikey",
                                            "api_key"};
        for (size_t w = 0; w < ARRAY_SIZE(texts); w++) {
                size_t wl = strlen(texts[w]);
                for (size_t i = 0; i + wl <= len; i++)
                        if (!strncasecmp(s + i, texts[w], wl))
                                return true;
        }
        const char *sch = memmem(s, len, "://", 3);
        if (sch) {
                /* the authority: to the first '/', '?' or '#' (s need not
                 * end with a NUL) */
                const char *u = sch + 3, *e = s + len, *ae = u;
                while (ae < e && *ae != '/' && *ae != '?' && *ae != '#')
                        ae++;
                const char *at = ae > u ? memrchr(u, '@', (size_t)(ae - u)) : NULL;
                if (at && memchr(u, ':', (size_t)(at - u)))
                        return true;
        }
        for (size_t i = 0; i < len; i++) {
                if (s[i] != '?' && s[i] != '&')
                        continue;
                size_t ns = i + 1, ne = ns;
                while (ne < len && s[ne] != '=' && s[ne] != '&' && s[ne] != '#')
                        ne++;
                if (ne < len && s[ne] == '=' && ne + 1 < len && s[ne + 1] != '&' &&
                    credential_name(s + ns, ne - ns))
                        return true;
        }
        return false;
}

/* A command-line flag naming a credential (--api-key, --token=...): the
 * flag's own name, before any '=' */
static bool credential_flag(const char *s, size_t len)
{
        if (len < 2 || s[0] != '-')
                return false;
        const char *eq = memchr(s, '=', len);
        return credential_name(s, eq ? (size_t)(eq - s) : len);
}

/* A JSON value as JSON, every object member with a credential-looking name
 * and a scalar value (a string or number) left out, at any depth. */
static void json_write_scrubbed(struct json_buf *b, const struct json_node *n)
{
        bool first = true;
        switch (n->type) {
        case JSON_STRING:
                json_buf_append_string(b, n->str, n->len);
                return;
        case JSON_NUMBER:
                json_buf_append(b, n->str, n->len);
                return;
        case JSON_TRUE:
                LIT(b, "true");
                return;
        case JSON_FALSE:
                LIT(b, "false");
                return;
        case JSON_ARRAY:
                LIT(b, "[");
                for (size_t i = 0; i < n->n_items; i++) {
                        const struct json_node *e = n->items[i], *prev = i ? n->items[i - 1] : NULL;
                        if (i)
                                LIT(b, ",");
                        /* an argument that is a credential, or follows a flag
                         * naming one (args: ["--api-key", "..."]), is emptied:
                         * the array keeps its shape */
                        bool flag = e->type == JSON_STRING && credential_flag(e->str, e->len);
                        bool eq = flag && memchr(e->str, '=', e->len);
                        bool after = prev && prev->type == JSON_STRING &&
                                     credential_flag(prev->str, prev->len) &&
                                     !memchr(prev->str, '=', prev->len);
                        if (e->type == JSON_STRING &&
                            (eq || (!flag && (after || credential_value(e->str, e->len))))) {
                                LIT(b, "\"\"");
                                continue;
                        }
                        json_write_scrubbed(b, e);
                }
                LIT(b, "]");
                return;
        case JSON_OBJECT:
                LIT(b, "{");
                for (size_t i = 0; i < n->n_items; i++) {
                        const struct json_node *m = n->items[i];
                        if ((m->type == JSON_STRING || m->type == JSON_NUMBER) &&
                            (credential_name(m->key, m->key_len) ||
                             (m->type == JSON_STRING && credential_value(m->str, m->len))))
                                continue;
                        if (!first)
                                LIT(b, ",");
                        first = false;
                        json_buf_append_string(b, m->key, m->key_len);
                        LIT(b, ":");
                        json_write_scrubbed(b, m);
                }
                LIT(b, "}");
                return;
        default:
                LIT(b, "null");
                return;
        }
}

/* The caller's JSON settings file rel, parsed: 0 with *doc (an object), 1
 * when there is none, -errno with err set. */
static int settings_json(const struct profile_home_ctx *ctx, const char *rel,
                         struct json_node **doc, struct rf_error *err)
{
        char *in = NULL;
        size_t n = 0;
        struct rf_error perr = {0};
        int r = copy_own(ctx, rel, &in, &n, err);
        if (r != 0)
                return r;
        *doc = NULL;
        r = json_parse(in, n, doc, &perr);
        explicit_bzero(in, n);
        free(in);
        if (r < 0 || (*doc)->type != JSON_OBJECT) {
                *doc = json_node_free(*doc);
                return rf_error_set(err, -EINVAL,
                                    "~/%s: not a JSON object (%s); a profile copies it into the "
                                    "run without its credentials",
                                    rel, perr.msg[0] ? perr.msg : "another value");
        }
        return 0;
}

/*
 * A small scanner over the caller's ~/.claude.json, which Claude Code
 * writes whole (its projects, their histories: megabytes, strings longer
 * than json_parse takes): only the spans of the members ringfence reads
 * are found (js_member), and only those spans are parsed. Nothing else of
 * the document is read or checked. Bounded by its input; no recursion.
 */
static size_t js_ws(const char *s, size_t n, size_t i)
{
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
                i++;
        return i;
}

/* the offset after the string at s[i] == '"', or 0 when it never ends */
static size_t js_string_end(const char *s, size_t n, size_t i)
{
        for (i++; i < n; i++) {
                if (s[i] == '\\')
                        i++;
                else if (s[i] == '"')
                        return i + 1;
        }
        return 0;
}

/* the offset after the value at s[i], or 0 for none (brackets are counted,
 * not matched by kind: json_parse checks the span read) */
static size_t js_value_end(const char *s, size_t n, size_t i)
{
        size_t depth = 0, start = i;
        if (i >= n)
                return 0;
        if (s[i] == '"')
                return js_string_end(s, n, i);
        if (s[i] != '{' && s[i] != '[') {
                while (i < n && s[i] && !strchr(",:}] \t\r\n{[\"", s[i]))
                        i++;
                return i > start ? i : 0;
        }
        for (; i < n; i++) {
                if (s[i] == '"') {
                        size_t e = js_string_end(s, n, i);
                        if (!e)
                                return 0;
                        i = e - 1;
                } else if (s[i] == '{' || s[i] == '[')
                        depth++;
                else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
                        return i + 1;
        }
        return 0;
}

static int hexval(char c)
{
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

/* Is the JSON string body s[a..b) (between its quotes), decoded, `want`?
 * (\uXXXX of the basic plane as UTF-8; a surrogate never matches) */
static bool js_key_is(const char *s, size_t a, size_t b, const char *want)
{
        size_t w = 0, wl = strlen(want);
        for (size_t i = a; i < b; i++) {
                char d[4];
                size_t dl = 1;
                d[0] = s[i];
                if (s[i] == '\\' && i + 1 < b) {
                        char c = s[++i];
                        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
                        const char *esc = c ? strchr(from, c) : NULL;
                        if (c == 'u') {
                                if (i + 4 >= b)
                                        return false;
                                unsigned cp = 0;
                                for (int k = 1; k <= 4; k++) {
                                        int h = hexval(s[i + k]);
                                        if (h < 0)
                                                return false;
                                        cp = cp << 4 | (unsigned)h;
                                }
                                i += 4;
                                if (cp >= 0xd800 && cp <= 0xdfff)
                                        return false;
                                if (cp < 0x80)
                                        d[0] = (char)cp;
                                else if (cp < 0x800) {
                                        d[0] = (char)(0xc0 | cp >> 6);
                                        d[1] = (char)(0x80 | (cp & 0x3f));
                                        dl = 2;
                                } else {
                                        d[0] = (char)(0xe0 | cp >> 12);
                                        d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                                        d[2] = (char)(0x80 | (cp & 0x3f));
                                        dl = 3;
                                }
                        } else if (esc)
                                d[0] = to[esc - from];
                        else
                                return false;
                }
                if (w + dl > wl || memcmp(want + w, d, dl))
                        return false;
                w += dl;
        }
        return w == wl;
}

/*
 * The value of member `key` of the object at s[i] (its '{'): 0 with its
 * span [*vs, *ve) (the last one of that name, as JSON.parse takes), 1 when
 * it has none, -EINVAL for what is not an object as far as it was read.
 */
static int js_member(const char *s, size_t n, size_t i, const char *key, size_t *vs, size_t *ve)
{
        int found = 1;
        if (i >= n || s[i] != '{')
                return -EINVAL;
        i = js_ws(s, n, i + 1);
        if (i < n && s[i] == '}')
                return 1;
        while (i < n) {
                size_t ke = s[i] == '"' ? js_string_end(s, n, i) : 0;
                if (!ke)
                        return -EINVAL;
                size_t v = js_ws(s, n, ke);
                if (v >= n || s[v] != ':')
                        return -EINVAL;
                v = js_ws(s, n, v + 1);
                size_t e = js_value_end(s, n, v);
                if (!e)
                        return -EINVAL;
                if (js_key_is(s, i + 1, ke - 1, key)) {
                        *vs = v;
                        *ve = e;
                        found = 0;
                }
                i = js_ws(s, n, e);
                if (i < n && s[i] == '}')
                        return found;
                if (i >= n || s[i] != ',')
                        return -EINVAL;
                i = js_ws(s, n, i + 1);
        }
        return -EINVAL;
}

/* how deeply arrays and objects nest in n (n itself one level) */
static size_t json_depth(const struct json_node *n)
{
        size_t d = 0;
        if (n->type != JSON_OBJECT && n->type != JSON_ARRAY)
                return 0;
        for (size_t i = 0; i < n->n_items; i++) {
                size_t k = json_depth(n->items[i]);
                d = k > d ? k : d;
        }
        return d + 1;
}

/* The mcpServers object at in[vs..ve), scrubbed (json_write_scrubbed), into
 * b: 0, or -EINVAL with err set (what) for a value that is not an object,
 * or one nested so deep that the run's file (3 levels above it) would be
 * deeper than JSON_DEPTH_MAX. */
static int claude_servers(struct json_buf *b, const char *in, size_t vs, size_t ve,
                          const char *what, struct rf_error *err)
{
        struct json_node *doc = NULL;
        struct rf_error perr = {0};
        if (json_parse(in + vs, ve - vs, &doc, &perr) < 0 || doc->type != JSON_OBJECT ||
            json_depth(doc) > JSON_DEPTH_MAX - 3) {
                if (!perr.msg[0] && doc && doc->type == JSON_OBJECT)
                        snprintf(perr.msg, sizeof perr.msg, "nested deeper than %d levels",
                                 JSON_DEPTH_MAX - 3);
                json_node_free(doc);
                return rf_error_set(err, -EINVAL, "%s: not a JSON object (%s)", what,
                                    perr.msg[0] ? perr.msg : "another value");
        }
        json_write_scrubbed(b, doc);
        json_node_free(doc);
        return 0;
}

int profile_claude_state(const char *in, size_t n, const char *workspace, const char *key_tail,
                         char **out, size_t *outlen, struct rf_error *err)
{
        struct json_buf b = {0};
        size_t top = 0, us = 0, ue = 0, ls = 0, le = 0;
        bool user = false, local = false;
        int r;

        *out = NULL;
        *outlen = 0;
        if (in) {
                size_t ps, pe, ws_s, ws_e;
                top = js_ws(in, n, 0);
                if ((r = js_member(in, n, top, "mcpServers", &us, &ue)) < 0)
                        return rf_error_set(err, r, "not a JSON object");
                user = r == 0;
                /* the workspace's own servers (Claude Code's local scope) */
                if (js_member(in, n, top, "projects", &ps, &pe) == 0 &&
                    js_member(in, n, ps, workspace, &ws_s, &ws_e) == 0 &&
                    js_member(in, n, ws_s, "mcpServers", &ls, &le) == 0)
                        local = true;
        }
        LIT(&b, "{\"hasCompletedOnboarding\":true,\"theme\":\"dark\",\"projects\":{");
        json_buf_append_string(&b, workspace, strlen(workspace));
        LIT(&b, ":{\"hasTrustDialogAccepted\":true");
        if (local) {
                LIT(&b, ",\"mcpServers\":");
                if ((r = claude_servers(&b, in, ls, le, "the workspace's mcpServers", err)) < 0)
                        goto fail;
        }
        LIT(&b, "}}");
        if (key_tail && strlen(key_tail) == 20) {
                LIT(&b, ",\"customApiKeyResponses\":{\"approved\":[");
                json_buf_append_string(&b, key_tail, 20);
                LIT(&b, "],\"rejected\":[]}");
        }
        if (user) {
                LIT(&b, ",\"mcpServers\":");
                if ((r = claude_servers(&b, in, us, ue, "mcpServers", err)) < 0)
                        goto fail;
        }
        LIT(&b, "}\n");
        if (b.error) {
                r = rf_error_set(err, b.error, "%s",
                                 b.error == -EINVAL ? "the workspace path cannot be written as JSON"
                                                    : strerror(-b.error));
                goto fail;
        }
        *out = b.data;
        *outlen = b.len;
        return 0;
fail:
        json_buf_done(&b);
        return r;
}

/* ~/.claude.json: profile_claude_state of the caller's (its MCP servers,
 * read from at most PROFILE_CLAUDE_JSON_MAX bytes), the injected key's
 * placeholder approved (Claude Code asks about a key from the environment
 * by its last 20 characters) */
static int claude_state(const struct profile_home_ctx *ctx, char **data, size_t *len,
                        struct rf_error *err)
{
        char *in = NULL;
        size_t n = 0;
        struct rf_error perr = {0};
        const char *ph = ctx->placeholder
                                 ? ctx->placeholder(ctx->placeholder_ctx, "ANTHROPIC_API_KEY")
                                 : NULL;
        int r = home_read(ctx->who, ".claude.json", PROFILE_CLAUDE_JSON_MAX, &in, &n, err);
        if (r < 0)
                return r;
        r = profile_claude_state(r == 0 ? in : NULL, n, ctx->workspace,
                                 ph && strlen(ph) >= 20 ? ph + strlen(ph) - 20 : NULL, data, len,
                                 &perr);
        if (in) {
                explicit_bzero(in, n);
                free(in);
        }
        if (r < 0)
                return rf_error_set(err, r,
                                    "~/.claude.json: %s; a profile takes its MCP servers into "
                                    "the run without their credentials",
                                    perr.msg[0] ? perr.msg : strerror(-r));
        return 0;
}

/* A TOML line's key, or its table header's name, as ringfence matches it:
 * whitespace and quotes left out ("features" . plugins reads
 * features.plugins), into out (at most size - 1 bytes; a longer one is cut,
 * which matches nothing of ours). *header: the line is a [table] header
 * (-1: an [[array]] header). Nothing when the line is blank, a comment or
 * neither (a multi-line string's inner line). */
static void toml_key(const char *line, size_t len, char *out, size_t size, int *header)
{
        size_t i = 0, o = 0, end = len;
        *header = 0;
        out[0] = '\0';
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i < len && line[i] == '[') {
                *header = i + 1 < len && line[i + 1] == '[' ? -1 : 1;
                i += *header < 0 ? 2 : 1;
                const char *close = memchr(line + i, ']', len - i);
                end = close ? (size_t)(close - line) : i;
        } else {
                const char *eq = memchr(line + i, '=', len - i);
                if (i == len || line[i] == '#' || !eq)
                        return;
                end = (size_t)(eq - line);
        }
        for (; i < end && o + 1 < size; i++)
                if (line[i] != ' ' && line[i] != '\t' && line[i] != '"' && line[i] != '\'')
                        out[o++] = line[i];
        out[o] = '\0';
}

/* Does a TOML line of the caller's hold what looks like a credential? A
 * key (dotted or quoted, at any table) with a credential-looking name, an
 * inline table naming one (http_headers = { Authorization = ... }), or a
 * comment that does. env_key and env_http_headers name variables, not
 * values. profile_codex_config applies it to each line of a value over
 * several lines too. */
static bool toml_credential_line(const char *line, size_t len)
{
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i < len && line[i] == '#')
                return credential_name(line + i, len - i);
        const char *eq = memchr(line + i, '=', len - i);
        if (!eq || line[i] == '[')
                return false;
        size_t ke = (size_t)(eq - line), vs = ke + 1;
        while (ke > i && (line[ke - 1] == ' ' || line[ke - 1] == '\t'))
                ke--;
        static const char *const names[] = {"env_key", "env_http_headers"};
        for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                size_t nl = strlen(names[k]);
                if (ke - i >= nl && !memcmp(line + ke - nl, names[k], nl) &&
                    (ke - i == nl || line[ke - nl - 1] == '.'))
                        return false;
        }
        if (credential_name(line + i, ke - i))
                return true;
        if (credential_value(line + vs, len - vs))
                return true; /* a URL with a password or token, a header text */
        /* an argument array with a flag naming a credential: ["--api-key", "..."] */
        for (size_t q = vs; q + 2 < len; q++)
                if (line[q] == '"' && line[q + 1] == '-') {
                        size_t fe = q + 1;
                        while (fe < len && line[fe] != '"')
                                fe++;
                        if (credential_flag(line + q + 1, fe - q - 1))
                                return true;
                        q = fe;
                }
        return memchr(line + vs, '{', len - vs) && credential_name(line + vs, len - vs);
}

/*
 * What ringfence sets in the run's ~/.codex/config.toml, in place of the
 * caller's values (Codex 0.171's own keys: `codex features list`). The
 * hosts behind them are not allowed in a run, so left on each would only
 * be refused, over and over (a refusal storm):
 *   sandbox_mode                 Codex's own sandbox (bubblewrap in a user
 *                                namespace) cannot start inside a run
 *   check_for_update_on_startup  the update check (github.com)
 *   analytics.enabled            analytics (ab.chatgpt.com)
 *   features.plugins             the curated plugins' sync (github.com,
 *                                api.github.com, chatgpt.com)
 *   features.api_key_model_discovery
 *                                the model list's refresh, with an API key
 *                                from chatgpt.com (about 20 attempts in
 *                                10 s); the bundled catalog is used instead
 */
static const struct {
        const char *table, *key, *line;
} codex_forced[] = {
        {"", "sandbox_mode", "sandbox_mode = \"danger-full-access\""},
        {"", "check_for_update_on_startup", "check_for_update_on_startup = false"},
        {"analytics", "enabled", "enabled = false"},
        {"features", "plugins", "plugins = false"},
        {"features", "api_key_model_discovery", "api_key_model_discovery = false"},
};

/* Is key (as toml_key reads it) in table one of codex_forced's? A dotted
 * key at the top level (features.plugins) counts as its table's. */
static bool codex_forced_key(const char *table, const char *key)
{
        for (size_t i = 0; i < ARRAY_SIZE(codex_forced); i++) {
                size_t tl = strlen(codex_forced[i].table);
                if (!strcmp(table, codex_forced[i].table) && !strcmp(key, codex_forced[i].key))
                        return true;
                if (!table[0] && tl && !strncmp(key, codex_forced[i].table, tl) && key[tl] == '.' &&
                    !strcmp(key + tl + 1, codex_forced[i].key))
                        return true;
        }
        return false;
}

/* codex_forced's lines of table (its header's name) into b, each dotted
 * with its table's name when dotted (at the top level) */
static void codex_forced_lines(struct json_buf *b, const char *table, bool dotted)
{
        for (size_t i = 0; i < ARRAY_SIZE(codex_forced); i++) {
                if (strcmp(codex_forced[i].table, table))
                        continue;
                if (dotted) {
                        json_buf_append(b, table, strlen(table));
                        LIT(b, ".");
                }
                json_buf_append(b, codex_forced[i].line, strlen(codex_forced[i].line));
                LIT(b, "\n");
        }
}

/* Where the value of the key line at in[s] (one holding '=') ends: the
 * offset of the end of the line it ends on (that line's '\n', or n). A
 * multi-line array or string runs over lines; one that never ends runs to
 * the end. Comments inside an array are skipped. Pure. */
static size_t toml_value_end(const char *in, size_t n, size_t s)
{
        const char *eq = memchr(in + s, '=', n - s);
        size_t i = eq ? (size_t)(eq - in) + 1 : n;
        int depth = 0;
        while (i < n) {
                char c = in[i];
                if (c == '\n' && depth == 0)
                        return i;
                if (c == '#') {
                        while (i < n && in[i] != '\n')
                                i++;
                        continue;
                }
                if (c == '"' || c == '\'') {
                        bool triple = i + 2 < n && in[i + 1] == c && in[i + 2] == c;
                        for (i += triple ? 3 : 1; i < n; i++) {
                                if (c == '"' && in[i] == '\\') {
                                        i++;
                                        continue;
                                }
                                if (!triple && in[i] == '\n')
                                        break; /* not closed on its line: ends there */
                                if (in[i] == c &&
                                    (!triple || (i + 2 < n && in[i + 1] == c && in[i + 2] == c))) {
                                        i += triple ? 3 : 1;
                                        break;
                                }
                        }
                        continue;
                }
                if (c == '[' || c == '{')
                        depth++;
                else if ((c == ']' || c == '}') && depth > 0)
                        depth--;
                i++;
        }
        return n;
}

/* Is a table (its header's name) or a top-level key one of Codex's hooks
 * (`notify`, a program run after each turn; `[hooks]`, programs run on the
 * agent's events)? Not carried into the run: PROFILES.md says why. */
static bool codex_hook(const char *name, bool header)
{
        return !strcmp(name, "hooks") || !strncmp(name, "hooks.", 6) ||
               (!header && !strcmp(name, "notify"));
}

int profile_codex_config(const char *in, size_t n, const char *workspace, char **out,
                         size_t *outlen)
{
        static const char *const tables[] = {"analytics", "features"};
        bool done[ARRAY_SIZE(tables)] = {false}, inline_table[ARRAY_SIZE(tables)] = {false};
        char table[128] = "", key[128];
        struct json_buf b = {0}; /* a growing buffer; nothing TOML about it */

        *out = NULL;
        *outlen = 0;
        bool hooks = false; /* in a table of Codex's hooks: left out */
        codex_forced_lines(&b, "", false);
        for (size_t s = 0; in && s < n;) {
                const char *nl = memchr(in + s, '\n', n - s);
                size_t e = nl ? (size_t)(nl - in) : n;
                int header;
                toml_key(in + s, e - s, key, sizeof key, &header);
                if (!header && key[0])
                        e = toml_value_end(in, n, s); /* the key and its whole value */
                if (header && (hooks = codex_hook(key, true)))
                        LIT(&b, "# (hooks: ringfence does not carry them into the run)\n");
                if (hooks || (!header && key[0] && !table[0] && codex_hook(key, false))) {
                        if (!hooks)
                                LIT(&b, "# (a hook: ringfence does not carry it into the run)\n");
                        s = e + 1;
                        continue;
                }
                if (header) {
                        snprintf(table, sizeof table, "%s", header > 0 ? key : "[[]]");
                } else if (key[0] && !table[0]) {
                        /* the top level: a dotted key defines its table
                         * there (no [table] may follow); an inline one is
                         * left as it is, ours not added to it */
                        for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
                                size_t tl = strlen(tables[t]);
                                if (!strcmp(key, tables[t]))
                                        inline_table[t] = true;
                                else if (!strncmp(key, tables[t], tl) && key[tl] == '.' &&
                                         !done[t]) {
                                        codex_forced_lines(&b, tables[t], true);
                                        done[t] = true;
                                }
                        }
                }
                if (toml_credential_line(in + s, e - s))
                        LIT(&b, "# (a credential: ringfence keeps it out of the run)\n");
                else if (header || !key[0] || !codex_forced_key(table, key)) {
                        /* a value over several lines: an inner line that
                         * looks like a credential's goes, as a line would
                         * (a multi-line string's, an array's) */
                        for (size_t ls = s; ls < e || ls == s;) {
                                const char *lnl = memchr(in + ls, '\n', e - ls);
                                size_t le = lnl ? (size_t)(lnl - in) : e;
                                if (ls > s && toml_credential_line(in + ls, le - ls))
                                        LIT(&b, "# (a credential: ringfence keeps it out of the "
                                                "run)");
                                else
                                        json_buf_append(&b, in + ls, le - ls);
                                LIT(&b, "\n");
                                ls = le + 1;
                        }
                }
                for (size_t t = 0; header > 0 && t < ARRAY_SIZE(tables); t++)
                        if (!strcmp(table, tables[t]) && !done[t]) {
                                codex_forced_lines(&b, tables[t], false);
                                done[t] = true;
                        }
                s = e + 1;
        }
        for (size_t t = 0; t < ARRAY_SIZE(tables); t++)
                if (!done[t] && !inline_table[t]) {
                        LIT(&b, "[");
                        json_buf_append(&b, tables[t], strlen(tables[t]));
                        LIT(&b, "]\n");
                        codex_forced_lines(&b, tables[t], false);
                }
        if (!in && workspace) {
                char ws[PATH_MAX * 6 + 3];
                if (profile_toml_string(workspace, ws, sizeof ws) < 0) {
                        json_buf_done(&b);
                        return -EINVAL;
                }
                LIT(&b, "[projects.");
                json_buf_append(&b, ws, strlen(ws));
                LIT(&b, "]\ntrust_level = \"trusted\"\n");
        }
        if (b.error) {
                int e = b.error;
                json_buf_done(&b);
                return e;
        }
        *out = b.data;
        *outlen = b.len;
        return 0;
}

/* ~/.codex/config.toml: profile_codex_config of the caller's, or of none
 * (then the workspace trusted too). */
static int codex_config(const struct profile_home_ctx *ctx, char **data, size_t *len,
                        struct rf_error *err)
{
        char *in = NULL;
        size_t n = 0;
        int r = copy_own(ctx, ".codex/config.toml", &in, &n, err);
        if (r < 0)
                return r;
        r = profile_codex_config(r == 0 ? in : NULL, n, ctx->workspace, data, len);
        if (in) {
                explicit_bzero(in, n);
                free(in);
        }
        if (r < 0)
                return rf_error_set(err, r, "%s",
                                    r == -EINVAL ? "the workspace path cannot be written as TOML"
                                                 : strerror(-r));
        return 0;
}

void profile_json_uncomment(char *buf, size_t len)
{
        bool in_string = false, escaped = false;
        for (size_t i = 0; i < len; i++) {
                size_t j = i + 2;
                if (in_string) {
                        if (escaped)
                                escaped = false;
                        else if (buf[i] == '\\')
                                escaped = true;
                        else if (buf[i] == '"')
                                in_string = false;
                        continue;
                }
                if (buf[i] == '"')
                        in_string = true;
                if (buf[i] != '/' || i + 1 >= len || (buf[i + 1] != '/' && buf[i + 1] != '*'))
                        continue;
                if (buf[i + 1] == '/') {
                        /* to the end of the line (its newline kept) */
                        for (j = i; j < len && buf[j] != '\n'; j++)
                                buf[j] = ' ';
                } else {
                        /* to its "*" "/" (or the end), newlines kept: a
                         * parse error still names the right line */
                        buf[i] = buf[i + 1] = ' ';
                        for (; j < len && !(buf[j] == '*' && j + 1 < len && buf[j + 1] == '/'); j++)
                                if (buf[j] != '\n')
                                        buf[j] = ' ';
                        if (j < len) {
                                buf[j] = buf[j + 1] = ' ';
                                j += 2;
                        }
                }
                i = j - 1;
        }
}

/*
 * What ringfence sets in the run's ~/.gemini/settings.json, in place of
 * the caller's values (Gemini CLI 0.61's own settings; disableAutoUpdate
 * and disableUpdateNag are their older names, left out). The hosts behind
 * them are not allowed in a run: left on, each is only refused.
 *   general.enableAutoUpdate, general.enableAutoUpdateNotification
 *                                 the update check (the npm registry)
 *   privacy.usageStatisticsEnabled usage statistics (play.googleapis.com)
 */
static const struct {
        const char *table, *key, *value;
} gemini_forced[] = {
        {"general", "enableAutoUpdate", "false"},
        {"general", "enableAutoUpdateNotification", "false"},
        {"general", "disableAutoUpdate", NULL},
        {"general", "disableUpdateNag", NULL},
        {"privacy", "usageStatisticsEnabled", "false"},
};

/* "table":{...} into b: the members of have (an object, or NULL) but
 * gemini_forced's, scrubbed, then gemini_forced's values */
static void gemini_table(struct json_buf *b, const char *table, const struct json_node *have)
{
        bool first = true;
        json_buf_append_string(b, table, strlen(table));
        LIT(b, ":{");
        for (size_t i = 0; have && have->type == JSON_OBJECT && i < have->n_items; i++) {
                const struct json_node *m = have->items[i];
                bool forced = false;
                for (size_t f = 0; f < ARRAY_SIZE(gemini_forced); f++)
                        forced |= !strcmp(gemini_forced[f].table, table) &&
                                  !strcmp(gemini_forced[f].key, m->key);
                if (forced || ((m->type == JSON_STRING || m->type == JSON_NUMBER) &&
                               credential_name(m->key, m->key_len)))
                        continue;
                if (!first)
                        LIT(b, ",");
                first = false;
                json_buf_append_string(b, m->key, m->key_len);
                LIT(b, ":");
                json_write_scrubbed(b, m);
        }
        for (size_t f = 0; f < ARRAY_SIZE(gemini_forced); f++) {
                if (strcmp(gemini_forced[f].table, table) || !gemini_forced[f].value)
                        continue;
                if (!first)
                        LIT(b, ",");
                first = false;
                json_buf_append_string(b, gemini_forced[f].key, strlen(gemini_forced[f].key));
                LIT(b, ":");
                json_buf_append(b, gemini_forced[f].value, strlen(gemini_forced[f].value));
        }
        LIT(b, "}");
}

int profile_gemini_settings(const char *in, size_t n, char **out, size_t *outlen,
                            struct rf_error *err)
{
        static const char *const tables[] = {"general", "privacy"};
        struct json_node *doc = NULL;
        struct json_buf b = {0};
        bool seen[ARRAY_SIZE(tables)] = {false}, first = true;
        char *copy = NULL;

        *out = NULL;
        *outlen = 0;
        if (in) {
                /* Gemini CLI reads its settings with comments (JSONC) */
                if (n > JSON_INPUT_MAX || !(copy = malloc(n ? n : 1)))
                        return rf_error_set(err, n > JSON_INPUT_MAX ? -E2BIG : -ENOMEM,
                                            "too large, or out of memory");
                memcpy(copy, in, n);
                profile_json_uncomment(copy, n);
                int r = json_parse(copy, n, &doc, err);
                explicit_bzero(copy, n);
                free(copy);
                if (r < 0 || doc->type != JSON_OBJECT) {
                        if (r >= 0)
                                rf_error_set(err, -EINVAL, "another value");
                        json_node_free(doc);
                        return -EINVAL;
                }
        }
        LIT(&b, "{");
        for (size_t i = 0; doc && i < doc->n_items; i++) {
                const struct json_node *m = doc->items[i];
                size_t t = 0;
                while (t < ARRAY_SIZE(tables) && strcmp(m->key, tables[t]))
                        t++;
                if (t == ARRAY_SIZE(tables) &&
                    (((m->type == JSON_STRING || m->type == JSON_NUMBER) &&
                      credential_name(m->key, m->key_len)) ||
                     !strcmp(m->key, "hooks") || !strcmp(m->key, "hooksConfig")))
                        continue;
                if (!first)
                        LIT(&b, ",");
                first = false;
                if (t < ARRAY_SIZE(tables)) {
                        gemini_table(&b, tables[t], m);
                        seen[t] = true;
                        continue;
                }
                json_buf_append_string(&b, m->key, m->key_len);
                LIT(&b, ":");
                json_write_scrubbed(&b, m);
        }
        for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
                if (seen[t])
                        continue;
                if (!first)
                        LIT(&b, ",");
                first = false;
                gemini_table(&b, tables[t], NULL);
        }
        if (!doc) /* made for the run: an API key's authentication */
                LIT(&b, ",\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}}");
        LIT(&b, "}\n");
        json_node_free(doc);
        if (b.error) {
                int e = b.error;
                json_buf_done(&b);
                return rf_error_set(err, e, "%s", strerror(-e));
        }
        *out = b.data;
        *outlen = b.len;
        return 0;
}

/* ~/.gemini/settings.json: profile_gemini_settings of the caller's (its
 * credential-looking settings left out: an MCP server's env or headers),
 * or of none */
static int gemini_settings(const struct profile_home_ctx *ctx, char **data, size_t *len,
                           struct rf_error *err)
{
        char *in = NULL;
        size_t n = 0;
        struct rf_error perr = {0};
        int r = copy_own(ctx, ".gemini/settings.json", &in, &n, err);
        if (r < 0)
                return r;
        r = profile_gemini_settings(r == 0 ? in : NULL, n, data, len, &perr);
        if (in) {
                explicit_bzero(in, n);
                free(in);
        }
        if (r < 0)
                return rf_error_set(err, r,
                                    "~/.gemini/settings.json: not a JSON object (%s); a profile "
                                    "copies it into the run without its credentials",
                                    perr.msg[0] ? perr.msg : "another value");
        return 0;
}

/* ~/.npmrc: the caller's, each registry token read from the variable
 * RF_NPM_TOKEN_<k> (its placeholder; the token is injected toward its
 * registry: profile.c), other credentials (_auth, _password) left out */
static int npmrc(const struct profile_home_ctx *ctx, char **data, size_t *len, struct rf_error *err)
{
        char *in = NULL;
        size_t n = 0, k = 0;
        int r = copy_own(ctx, ".npmrc", &in, &n, err);
        if (r != 0)
                return r;
        struct json_buf b = {0}; /* a growing buffer; nothing JSON about it */
        for (size_t s = 0; s < n;) {
                size_t e = npmrc_line_end(in, n, s), vo = 0, vl = 0;
                char host[NPMRC_HOST_MAX + 1], var[48];
                switch (npmrc_classify(in + s, e - s, &vo, &vl, host)) {
                case NPMRC_TOKEN:
                        snprintf(var, sizeof var, "${%s%zu}", PROFILE_NPM_TOKEN_VAR, ++k);
                        json_buf_append(&b, in + s, vo);
                        json_buf_append(&b, var, strlen(var));
                        json_buf_append(&b, in + s + vo + vl, e - s - vo - vl);
                        break;
                case NPMRC_DROP:
                        LIT(&b, "; (a credential: ringfence keeps it out of the run)");
                        break;
                default:
                        json_buf_append(&b, in + s, e - s);
                }
                LIT(&b, "\n");
                s = e + 1;
        }
        explicit_bzero(in, n);
        free(in);
        return take(&b, data, len, err);
}

int profile_pipconf_read(const struct rf_caller *who, char **data, size_t *len, const char **rel,
                         struct rf_error *err)
{
        static const char *const at[] = {".config/pip/pip.conf", ".pip/pip.conf"};
        int r = 1;
        for (size_t i = 0; r == 1 && i < ARRAY_SIZE(at); i++)
                if ((r = profile_home_read(who, at[i], data, len, err)) != 1)
                        *rel = at[i];
        return r;
}

/* ~/.config/pip/pip.conf: the caller's, each index credential replaced by
 * its placeholder (profile.c injects the value toward the index); a line
 * with a credential bound to no host left out. */
static int pipconf(const struct profile_home_ctx *ctx, char **data, size_t *len,
                   struct rf_error *err)
{
        char *in = NULL;
        const char *rel = NULL;
        size_t n = 0, nc = 0, k = 0, ci = 0;
        struct pipconf_cred c[PIPCONF_CREDS_MAX];
        int r = profile_pipconf_read(ctx->who, &in, &n, &rel, err);
        if (r != 0)
                return r;
        if ((r = pipconf_scan(in, n, c, &nc)) < 0) {
                explicit_bzero(in, n);
                free(in);
                return rf_error_set(err, r, "~/%s: not a pip configuration ringfence can copy",
                                    rel);
        }
        struct json_buf b = {0}; /* a growing buffer; nothing JSON about it */
        for (size_t s = 0; s < n;) {
                const char *nl = memchr(in + s, '\n', n - s);
                size_t e = nl ? (size_t)(nl - in) : n, first = ci, last = ci;
                const char *ph[PIPCONF_CREDS_MAX];
                bool drop = false;
                /* the line's credentials, numbered as profile.c injects them */
                for (; last < nc && c[last].line_off == s; last++) {
                        char var[48];
                        ph[last] = NULL;
                        if (!c[last].host[0]) {
                                drop = true;
                                continue;
                        }
                        snprintf(var, sizeof var, "%s%zu", PROFILE_PIP_TOKEN_VAR, ++k);
                        if (ctx->placeholder)
                                ph[last] = ctx->placeholder(ctx->placeholder_ctx, var);
                        drop |= !ph[last];
                }
                if (drop)
                        LIT(&b, "# (a credential: ringfence keeps it out of the run)");
                size_t at = s;
                for (size_t i = first; !drop && i < last; i++) {
                        json_buf_append(&b, in + at, c[i].off - at);
                        json_buf_append(&b, ph[i], strlen(ph[i]));
                        at = c[i].off + c[i].len;
                }
                if (!drop)
                        json_buf_append(&b, in + at, e - at);
                LIT(&b, "\n");
                ci = last;
                s = e + 1;
        }
        explicit_bzero(in, n);
        free(in);
        return take(&b, data, len, err);
}

/* ~/.claude/settings.json: the caller's, its credential-looking settings
 * left out (an "env" ANTHROPIC_API_KEY, an apiKeyHelper, awsAuthRefresh:
 * the key is injected instead), its hooks left out (the caller's automation
 * around the agent on the host: not carried, PROFILES.md says why), with
 * Claude Code's own sandbox off — a run is the
 * sandbox, and Claude Code's (bubblewrap in a user namespace) cannot start
 * inside one: it would warn and run each command unsandboxed anyway, or
 * fail where it is told to. */
static int claude_settings(const struct profile_home_ctx *ctx, char **data, size_t *len,
                           struct rf_error *err)
{
        static const char off[] = "\"sandbox\":{\"enabled\":false}";
        struct json_node *doc = NULL;
        struct json_buf b = {0};
        int r = settings_json(ctx, ".claude/settings.json", &doc, err);
        if (r < 0)
                return r;
        LIT(&b, "{");
        for (size_t i = 0; doc && i < doc->n_items; i++) {
                const struct json_node *m = doc->items[i];
                if (!strcmp(m->key, "sandbox") || !strcmp(m->key, "hooks") ||
                    !strcmp(m->key, "awsAuthRefresh") ||
                    ((m->type == JSON_STRING || m->type == JSON_NUMBER) &&
                     credential_name(m->key, m->key_len)))
                        continue;
                json_buf_append_string(&b, m->key, m->key_len);
                LIT(&b, ":");
                json_write_scrubbed(&b, m);
                LIT(&b, ",");
        }
        LIT(&b, off);
        LIT(&b, "}\n");
        json_node_free(doc);
        return take(&b, data, len, err);
}

/* A git config value in quotes: \ and " escaped; 0, or -EINVAL for a
 * control character (git_config cut the newline already). */
static int git_quoted(struct json_buf *b, const char *v)
{
        LIT(b, "\"");
        for (; *v; v++) {
                if ((unsigned char)*v < 0x20 || *v == 0x7f)
                        return -EINVAL;
                if (*v == '\\' || *v == '"')
                        LIT(b, "\\");
                json_buf_append(b, v, 1);
        }
        LIT(b, "\"");
        return 0;
}

/* ~/.gitconfig: the caller's identity as the git profile gave it to the
 * run (GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL), and nothing else of its git
 * configuration (no credential helper, no include). */
static int gitconfig(const struct profile_home_ctx *ctx, char **data, size_t *len,
                     struct rf_error *err)
{
        const char *name = ctx->env ? ctx->env(ctx->env_ctx, "GIT_AUTHOR_NAME") : NULL,
                   *email = ctx->env ? ctx->env(ctx->env_ctx, "GIT_AUTHOR_EMAIL") : NULL;
        struct json_buf b = {0};
        if (!name && !email)
                return 1;
        LIT(&b, "# made by ringfence for this run: your git identity, nothing else\n[user]\n");
        if ((name && (LIT(&b, "\tname = "), git_quoted(&b, name) < 0)) ||
            (email && (LIT(&b, "\n\temail = "), git_quoted(&b, email) < 0))) {
                json_buf_done(&b);
                return rf_error_set(err, -EINVAL, "the git identity holds a control character");
        }
        LIT(&b, "\n");
        return take(&b, data, len, err);
}

/*
 * The caller's agent directories (commands, sub-agents, skills, prompts,
 * extensions), carried into the run read-only as a tree list
 * (plan_home_file.tree, sandbox/plan.h): walked as the caller
 * (caller_enter), every file read whole, bounded (PROFILE_TREE_*). A file
 * or directory must be the caller's (or root's, for a caller that is this
 * process) and writable by no one else (its owner's private group aside:
 * shared/ownwrite.h); other kinds of file (a socket, a
 * FIFO), a dangling link and the agents' credential files (tree_secret)
 * are left out. A symbolic link is followed only to a place inside the
 * caller's home (resolved as the caller), never outside it: the run gets
 * what the link names as files of its own, not the link. A `.git` (a
 * skill or extension cloned with git) is left out too.
 */
struct tree_walk {
        const struct rf_caller *who;
        char home[PATH_MAX]; /* the caller's, canonical */
        struct json_buf b;   /* the entries (nothing JSON about it) */
        size_t entries, bytes;
        struct ownwrite_memo memo; /* the last owner and group judged */
        struct rf_error *err;
};

/* Names never carried: the agents' credential files, and places that hold
 * other credentials a link might lead to. */
static bool tree_secret(const struct tree_walk *w, const char *abs)
{
        static const char *const names[] = {"auth.json",
                                            ".credentials.json",
                                            "oauth_creds.json",
                                            "google_accounts.json",
                                            "mcp-oauth-tokens.json",
                                            ".netrc",
                                            ".git-credentials"};
        static const char *const dirs[] = {
                ".ssh",  ".gnupg",          ".aws",           ".docker",
                ".kube", ".password-store", ".config/gcloud", ".local/share/keyrings"};
        const char *base = strrchr(abs, '/');
        base = base ? base + 1 : abs;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (!strcmp(base, names[i]))
                        return true;
        /* dotenv files: Gemini CLI keeps an extension's settings, its API
         * keys among them, in the extension's .env */
        if (!strcmp(base, ".env") || !strncmp(base, ".env.", 5))
                return true;
        size_t hl = strlen(w->home);
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                size_t dl = strlen(dirs[i]);
                if (!strncmp(abs, w->home, hl) && abs[hl] == '/' &&
                    !strncmp(abs + hl + 1, dirs[i], dl) &&
                    (abs[hl + 1 + dl] == '/' || !abs[hl + 1 + dl]))
                        return true;
        }
        return false;
}

static bool tree_beneath(const char *path, const char *dir)
{
        size_t l = strlen(dir);
        return !strncmp(path, dir, l) && path[l] == '/';
}

static int tree_entry(struct tree_walk *w, uint32_t kind, const char *rel, const char *data,
                      size_t len)
{
        struct plan_home_entry e = {
                .kind = kind, .name_len = (uint32_t)strlen(rel), .data_len = len};
        if (++w->entries > PROFILE_TREE_ENTRIES_MAX || (w->bytes += len) > PROFILE_TREE_BYTES_MAX)
                return rf_error_set(w->err, -E2BIG,
                                    "~/%s: more than %d files or %d bytes to carry into the run "
                                    "(a profile carries your agent's commands, skills and "
                                    "extensions read-only); move what is not needed away",
                                    rel, PROFILE_TREE_ENTRIES_MAX, PROFILE_TREE_BYTES_MAX);
        json_buf_append(&w->b, (const char *)&e, sizeof e);
        json_buf_append(&w->b, rel, e.name_len);
        if (len)
                json_buf_append(&w->b, data, len);
        return w->b.error ? rf_error_set(w->err, w->b.error, "%s", strerror(-w->b.error)) : 0;
}

/* Is st the caller's own (or root's, for this process), writable by no one
 * else (its private group aside: shared/ownwrite.h)? Else err names abs. */
static int tree_trusted(struct tree_walk *w, int fd, const char *abs, const struct stat *st)
{
        if (st->st_uid != w->who->uid && (w->who->other || st->st_uid != 0))
                return rf_error_set(w->err, -EPERM,
                                    "%s: not %s that only its owner may write; a profile "
                                    "carries it into the run, so it is refused",
                                    abs, w->who->other ? "the caller's" : "yours or root's");
        enum ownwrite ow = ownwrite_check(fd, st, &w->memo);
        if (ow == OWNWRITE_OWNER)
                return 0;
        char why[256], whose[32];
        return rf_error_set(w->err, -EPERM,
                            "%s: %s; a profile carries it into the run, so it is refused", abs,
                            ownwrite_why(ow, st, owner_whose(w->who, st, whose), why, sizeof why));
}

/* abs opened through no symbolic link (it is canonical), with flags */
static int tree_open(const char *abs, int flags)
{
        /* O_PATH takes no O_NONBLOCK (openat2 refuses it) */
        if (!(flags & O_PATH))
                flags |= O_NONBLOCK;
        struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        return (int)syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof how);
}

static int tree_file(struct tree_walk *w, const char *abs, const char *rel)
{
        _cleanup_close_ int fd = tree_open(abs, O_RDONLY);
        struct stat st;
        int r;
        if (fd < 0 || fstat(fd, &st) < 0)
                return rf_error_set(w->err, -errno, "%s: %m (a profile carries it into the run)",
                                    abs);
        if (!S_ISREG(st.st_mode)) /* swapped since it was listed */
                return rf_error_set(w->err, -EINVAL, "%s: no longer a regular file", abs);
        if ((r = tree_trusted(w, fd, abs, &st)) < 0)
                return r;
        if (st.st_size > PROFILE_TREE_FILE_MAX)
                return rf_error_set(w->err, -E2BIG,
                                    "%s: larger than %d bytes (a profile carries it into the "
                                    "run); move it away",
                                    abs, PROFILE_TREE_FILE_MAX);
        _cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
        size_t n = 0;
        if (!buf)
                return rf_error_set(w->err, -ENOMEM, "out of memory");
        while (n < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return rf_error_set(w->err, -errno, "%s: %m", abs);
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        return tree_entry(w, st.st_mode & S_IXUSR ? PLAN_HOME_EXEC : PLAN_HOME_FILE, rel, buf, n);
}

static int tree_dir(struct tree_walk *w, const char *abs, const char *rel, int depth);

/* One name of a directory: abs, as rel beneath the run's $HOME. */
static int tree_one(struct tree_walk *w, int dfd, const char *name, const char *abs,
                    const char *rel, int depth)
{
        struct stat st;
        char real[PATH_MAX];
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : rf_error_set(w->err, -errno, "%s: %m", abs);
        if (tree_secret(w, abs))
                return 0;
        if (S_ISLNK(st.st_mode)) {
                if (!realpath(abs, real))
                        return errno == ENOENT ? 0 : rf_error_set(w->err, -errno, "%s: %m", abs);
                if (!tree_beneath(real, w->home))
                        return rf_error_set(w->err, -EPERM,
                                            "%s: a symbolic link to %s, outside your home; a "
                                            "profile carries only your home's files into the run",
                                            abs, real);
                if (tree_secret(w, real))
                        return 0;
                _cleanup_close_ int fd = tree_open(real, O_PATH);
                if (fd < 0 || fstat(fd, &st) < 0)
                        return rf_error_set(w->err, -errno, "%s: %m", real);
                abs = real;
        }
        if (S_ISDIR(st.st_mode))
                return tree_dir(w, abs, rel, depth + 1);
        if (S_ISREG(st.st_mode))
                return tree_file(w, abs, rel);
        return 0; /* a socket, a FIFO, a device: not carried */
}

static int tree_dir(struct tree_walk *w, const char *abs, const char *rel, int depth)
{
        if (depth > PROFILE_TREE_DEPTH_MAX)
                return rf_error_set(w->err, -ELOOP,
                                    "%s: nested deeper than %d directories (a profile carries it "
                                    "into the run)",
                                    abs, PROFILE_TREE_DEPTH_MAX);
        int fd = tree_open(abs, O_RDONLY | O_DIRECTORY);
        struct stat st;
        int r;
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = rf_error_set(w->err, -errno, "%s: %m (a profile carries it into the run)", abs);
                if (fd >= 0)
                        close(fd);
                return r;
        }
        if ((r = tree_trusted(w, fd, abs, &st)) < 0) {
                close(fd);
                return r;
        }
        DIR *d = fdopendir(fd);
        if (!d) {
                r = rf_error_set(w->err, -errno, "%s: %m", abs);
                close(fd);
                return r;
        }
        r = 0;
        for (struct dirent *e; r == 0 && (errno = 0, e = readdir(d));) {
                char cabs[PATH_MAX], crel[PATH_MAX];
                /* a skill or extension cloned with git: its history is
                 * not what the agent reads (and would spend the bounds) */
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                    !strcmp(e->d_name, ".git"))
                        continue;
                if ((size_t)snprintf(cabs, sizeof cabs, "%s/%s", abs, e->d_name) >= sizeof cabs ||
                    (size_t)snprintf(crel, sizeof crel, "%s/%s", rel, e->d_name) >= sizeof crel)
                        r = rf_error_set(w->err, -ENAMETOOLONG, "%s/%s: path too long", abs,
                                         e->d_name);
                else
                        r = tree_one(w, dirfd(d), e->d_name, cabs, crel, depth);
        }
        if (r == 0 && errno)
                r = rf_error_set(w->err, -errno, "%s: %m", abs);
        closedir(d);
        return r;
}

/* The directories rels[] (beneath the caller's home) as one tree list for
 * the run: 0 with *data, *len; 1 when the caller has none of them. */
static int agent_dirs(const struct profile_home_ctx *ctx, const char *const *rels, char **data,
                      size_t *len, struct rf_error *err)
{
        struct tree_walk w = {.who = ctx->who, .err = err};
        int r = 0;
        if (!ctx->who->home[0])
                return 1;
        if ((r = caller_enter(ctx->who)) < 0)
                return rf_error_set(err, r, "%s: cannot take uid %u's identity to read it",
                                    ctx->who->home, (unsigned)ctx->who->uid);
        if (!realpath(ctx->who->home, w.home))
                r = errno == ENOENT ? 1 : rf_error_set(err, -errno, "%s: %m", ctx->who->home);
        for (size_t i = 0; r == 0 && rels[i]; i++) {
                char abs[PATH_MAX], real[PATH_MAX];
                struct stat st;
                if ((size_t)snprintf(abs, sizeof abs, "%s/%s", w.home, rels[i]) >= sizeof abs) {
                        r = rf_error_set(err, -ENAMETOOLONG, "%s: path too long", w.home);
                        break;
                }
                if (!realpath(abs, real)) {
                        if (errno != ENOENT && errno != ENOTDIR)
                                r = rf_error_set(err, -errno, "%s: %m", abs);
                        continue;
                }
                if (!tree_beneath(real, w.home)) {
                        r = rf_error_set(err, -EPERM,
                                         "%s: leads to %s, outside your home; a profile carries "
                                         "only your home's files into the run",
                                         abs, real);
                        break;
                }
                _cleanup_close_ int fd = tree_open(real, O_PATH);
                if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        r = rf_error_set(err, fd < 0 ? -errno : -ENOTDIR,
                                         "%s: not a directory (a profile carries it into the "
                                         "run)",
                                         abs);
                        break;
                }
                if ((r = tree_entry(&w, PLAN_HOME_RODIR, rels[i], NULL, 0)) == 0)
                        r = tree_dir(&w, real, rels[i], 1);
        }
        caller_leave(ctx->who);
        if (r == 0 && !w.entries)
                r = 1;
        if (r != 0) {
                if (w.b.data)
                        explicit_bzero(w.b.data, w.b.len);
                json_buf_done(&w.b);
                return r;
        }
        *data = w.b.data;
        *len = w.b.len;
        return 0;
}

static const char *const claude_dirs[] = {".claude/commands", ".claude/agents", ".claude/skills",
                                          NULL};
static const char *const codex_dirs[] = {".codex/prompts", ".codex/skills", NULL};
static const char *const gemini_dirs[] = {".gemini/commands", ".gemini/extensions",
                                          ".gemini/skills", NULL};

/* The generators: name, the file beneath $HOME, what it holds (for
 * `ringfence profile show`), how it is made; or, for the caller's agent
 * directories, which (dirs: a tree list, read-only in the run). */
static const struct {
        const char *name, *rel, *what;
        int (*fn)(const struct profile_home_ctx *, char **, size_t *, struct rf_error *);
        const char *const *dirs;
} gens[] = {
        {"claude-state", ".claude.json",
         "made: onboarding done, the workspace trusted, the key's placeholder approved, and "
         "your MCP servers (yours and the workspace's, from your ~/.claude.json) without their "
         "credentials",
         claude_state, NULL},
        {"codex-config", ".codex/config.toml",
         "yours if you have one (its MCP servers too, without their credentials; no hooks), "
         "else made with the workspace trusted; either way the update check, analytics, plugin "
         "sync and model list refresh off, and Codex's own sandbox off (the run is the "
         "sandbox; Codex's cannot start inside one)",
         codex_config, NULL},
        {"gemini-settings", ".gemini/settings.json",
         "yours if you have one (comments allowed; its MCP servers too, without their "
         "credentials; no hooks), else made with API-key auth; either way the update check "
         "and usage statistics off",
         gemini_settings, NULL},
        {"claude-settings", ".claude/settings.json",
         "yours if you have one (no hooks, no credential helper), with Claude Code's own "
         "sandbox off (the run is the sandbox; Claude Code's cannot start inside one)",
         claude_settings, NULL},
        {"claude-dirs", ".claude/{commands,agents,skills}",
         "yours, read-only: your slash commands, sub-agents and skills", NULL, claude_dirs},
        {"codex-dirs", ".codex/{prompts,skills}", "yours, read-only: your prompts and skills", NULL,
         codex_dirs},
        {"gemini-dirs", ".gemini/{commands,extensions,skills}",
         "yours, read-only: your commands, extensions and skills", NULL, gemini_dirs},
        {"gitconfig", ".gitconfig", "made: your git user.name and user.email, nothing else",
         gitconfig, NULL},
        {"pipconf", ".config/pip/pip.conf",
         "yours (~/.config/pip/pip.conf or ~/.pip/pip.conf), each index credential replaced by "
         "a placeholder (the value is injected toward that index)",
         pipconf, NULL},
        {"npmrc", ".npmrc",
         "yours, its tokens read from RF_NPM_TOKEN_<k> (placeholders), _auth/_password lines "
         "left out",
         npmrc, NULL},
};

const char *profile_home_describe(const char *gen, const char **rel)
{
        for (size_t i = 0; i < ARRAY_SIZE(gens); i++)
                if (!strcmp(gen, gens[i].name)) {
                        *rel = gens[i].rel;
                        return gens[i].what;
                }
        return NULL;
}

bool profile_home_is_tree(const char *gen)
{
        for (size_t i = 0; i < ARRAY_SIZE(gens); i++)
                if (!strcmp(gen, gens[i].name))
                        return gens[i].dirs != NULL;
        return false;
}

int profile_home_render(const char *gen, const struct profile_home_ctx *ctx,
                        struct plan_home_file *f, struct rf_error *err)
{
        f->data = NULL;
        f->len = 0;
        f->tree = false;
        if (!strncmp(gen, "copy:", 5)) {
                const char *r = gen + 5;
                if (!r[0] || r[0] == '/' || strstr(r, "..") ||
                    (size_t)snprintf(f->rel, sizeof f->rel, "%s", r) >= sizeof f->rel)
                        return rf_error_set(err, -EINVAL,
                                            "profile home file %s: not a path "
                                            "beneath $HOME",
                                            gen);
                return copy_own(ctx, r, &f->data, &f->len, err);
        }

        for (size_t i = 0; i < ARRAY_SIZE(gens); i++)
                if (!strcmp(gen, gens[i].name)) {
                        snprintf(f->rel, sizeof f->rel, "%s", gens[i].rel);
                        if (gens[i].dirs) {
                                f->tree = true;
                                return agent_dirs(ctx, gens[i].dirs, &f->data, &f->len, err);
                        }
                        return gens[i].fn(ctx, &f->data, &f->len, err);
                }
        return rf_error_set(err, -EINVAL, "profile home file %s: unknown (internal error)", gen);
}
