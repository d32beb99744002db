/*
 * test_hostcmd.c — what a run must see of the host to run a command
 * (src/shared/hostcmd.c): host_tree's mount list, exactly, for each
 * install layout it knows — the three an audit found it mounted far too
 * much for (~/.local/bin/claude into Claude Code's versions directory gave
 * ~/.local and the keyrings in it; ~/bin -> ~/proj gave $HOME; /x/a/bin ->
 * /x/b gave /x), npm prefixes and node_modules/.bin as the integration
 * tests use them, venvs, nvm —, what it never mounts (a home, above one, a
 * home's dot directories, "/", one component deep), and its refusals;
 * then host_command_for on a tree of its own in a temporary directory (a
 * name through PATH, a path, a directory named like the command, a
 * symbolic link in PATH's entry).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/hostcmd.h"
#include "tap.h"

#define HOME "/home/u"

/* host_tree's mounts as "ROOT" or "ROOT EXTRA"; "error N" when refused */
static const char *tree_h(const char *found, const char *real, const char *home)
{
        static char out[2 * PATH_MAX + 16];
        char root[PATH_MAX], extra[PATH_MAX];
        const char *homes[] = {home};
        int r = host_tree(found, real, homes, home ? 1 : 0, root, extra);
        if (r < 0)
                snprintf(out, sizeof out, "error %d", r);
        else
                snprintf(out, sizeof out, "%s%s%s", root, extra[0] ? " " : "", extra);
        return out;
}

static const char *tree(const char *found, const char *real)
{
        return tree_h(found, real, HOME);
}

static void layouts(void)
{
        /* the audit's three */
        is_str(tree(HOME "/.local/bin/claude", HOME "/.local/share/claude/versions/2.0.1"),
               HOME "/.local/bin " HOME "/.local/share/claude/versions",
               "~/.local/bin/claude -> ~/.local/share/claude/versions/X (Claude Code's native "
               "installer): the link's directory and the versions directory, not ~/.local");
        is_str(tree(HOME "/bin/claude", HOME "/proj/claude"), HOME "/bin " HOME "/proj",
               "~/bin/claude -> ~/proj/claude: ~/bin and ~/proj, never $HOME");
        is_str(tree("/x/a/bin/claude", "/x/b/claude"), "/x/a/bin /x/b",
               "/x/a/bin/claude -> /x/b/claude: each directory, never their common parent /x");
        is_str(tree("/srv/x/a/bin/claude", "/srv/x/b/claude"), "/srv/x/a/bin /srv/x/b",
               "... nor /srv/x where the common parent is deeper");
        /* a versions layout whose version is a directory */
        is_str(tree(HOME "/.local/bin/tool", HOME "/.local/share/tool/versions/1.2/bin/tool"),
               HOME "/.local/bin " HOME "/.local/share/tool/versions/1.2",
               "versions/X/bin/tool: the version directory");
        is_str(tree(HOME "/.nvm/versions/node/v20.1.0/bin/node",
                    HOME "/.nvm/versions/node/v20.1.0/bin/node"),
               HOME "/.nvm/versions/node/v20.1.0/bin", "nvm's node, no link: its directory");

        /* npm prefixes (run_basic.sh's hint, profile.sh's node) */
        is_str(tree("/tmp/ws.hostbin/pfx/bin/rf-hint-tool",
                    "/tmp/ws.hostbin/pfx/lib/node_modules/tool/cli.sh"),
               "/tmp/ws.hostbin/pfx",
               "PREFIX/bin/x -> ../lib/node_modules/tool/cli.sh (an npm prefix): PREFIX");
        is_str(tree("/tmp/ws.prefix/bin/node", "/tmp/ws.prefix/lib/node/node"), "/tmp/ws.prefix",
               "PREFIX/bin/node -> ../lib/node/node: PREFIX");
        is_str(tree(HOME "/.npm-global/bin/claude",
                    HOME "/.npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.js"),
               HOME "/.npm-global/bin " HOME
                    "/.npm-global/lib/node_modules/@anthropic-ai/claude-code",
               "an npm prefix that is a home's dot directory (~/.npm-global): its bin and the "
               "package, not the prefix");
        is_str(tree(HOME "/.local/bin/claude",
                    HOME "/.local/lib/node_modules/@anthropic-ai/claude-code/cli.js"),
               HOME "/.local/bin " HOME "/.local/lib/node_modules/@anthropic-ai/claude-code",
               "npm's prefix ~/.local: ~/.local/bin and the package (@scope/name), not ~/.local");
        is_str(tree("/opt/node/bin/codex", "/opt/node/lib/node_modules/@openai/codex/bin/codex.js"),
               "/opt/node", "/opt/node/bin/codex (a node tarball's prefix): /opt/node");
        is_str(tree("/opt/bin/x", "/opt/lib/x/x"), "/opt/bin /opt/lib/x",
               "a prefix one component deep (/opt): its bin and the target's directory");
        is_str(tree("/usr/local/bin/x", "/usr/local/lib/x/x"), "/usr/local",
               "/usr/local/bin/x -> ../lib/x/x: /usr/local (every run sees it)");
        is_str(tree("/tmp/p/bin/x", "/tmp/p/share/x/x"), "/tmp/p/bin /tmp/p/share/x",
               "PREFIX/bin into PREFIX/share: not a prefix's lib, each directory");

        /* node_modules (agents_inject.sh) */
        is_str(tree("/c/agents/node_modules/.bin/codex",
                    "/c/agents/node_modules/@openai/codex/bin/codex.js"),
               "/c/agents/node_modules",
               "node_modules/.bin/codex -> ../@openai/codex/...: that node_modules (hoisted "
               "dependencies beside the package)");
        is_str(tree("/c/agents/node_modules/.bin/pnpm-shim", NULL), "/c/agents/node_modules",
               "a node_modules/.bin shim, no link: that node_modules");
        is_str(tree("/tmp/ag/bin/claude",
                    "/c/agents/node_modules/@anthropic-ai/claude-code-linux-x64/claude"),
               "/tmp/ag/bin /c/agents/node_modules/@anthropic-ai/claude-code-linux-x64",
               "a bin directory's link to a package's binary: the link's directory and the "
               "package");
        is_str(tree("/tmp/ag/bin/x", "/c/node_modules/a/node_modules/b/bin/x.js"),
               "/tmp/ag/bin /c/node_modules/a",
               "into a nested package: the outermost package (its own node_modules in it)");
        is_str(tree("/w/node_modules/.bin/x", "/v/node_modules/x/cli.js"),
               "/w/node_modules/.bin /v/node_modules/x",
               "node_modules/.bin into another node_modules: .bin and the package");
        is_str(tree(HOME "/node_modules/.bin/x", HOME "/node_modules/x/cli.js"),
               HOME "/node_modules", "a node_modules in $HOME: that node_modules, not $HOME");

        /* a tree whose bin/ holds the target */
        is_str(tree(HOME "/.local/bin/black", HOME "/.local/share/pipx/venvs/black/bin/black"),
               HOME "/.local/bin " HOME "/.local/share/pipx/venvs/black",
               "pipx: ~/.local/bin and the venv");
        is_str(tree("/usr/local/bin/foo", "/opt/foo/bin/foo"), "/usr/local/bin /opt/foo",
               "/usr/local/bin/foo -> /opt/foo/bin/foo: /opt/foo");
        is_str(tree(HOME "/bin/x", HOME "/.local/bin/x"), HOME "/bin " HOME "/.local/bin",
               "~/bin/x -> ~/.local/bin/x: ~/.local/bin, never ~/.local");
        is_str(tree("/usr/local/bin/x", HOME "/bin/x"), "/usr/local/bin " HOME "/bin",
               "a link into ~/bin: ~/bin, never $HOME");
        is_str(tree("/opt/t/sub/x", "/opt/t/bin/x"), "/opt/t/sub /opt/t/bin",
               "a bin/'s tree that holds the link too (a common parent): the target's directory");

        /* one holds the other */
        is_str(tree("/a/b/bin/x", "/a/b/x"), "/a/b", "the target's directory holds the link's: it");
        is_str(tree("/a/b/x", "/a/b/c/x"), "/a/b", "the link's directory holds the target: it");
        is_str(tree("/a/b/x", "/a/b/y"), "/a/b", "a link in its own directory: it");
        is_str(tree("/a/b/x", NULL), "/a/b", "not a link: its directory");
        is_str(tree("/a/b/x", "/a/b/x"), "/a/b", "... nor when real is found");
}

static void never(void)
{
        /* a home, above it, its dot directories */
        is_str(tree(HOME "/x", NULL), HOME "/x", "an executable in $HOME: the file, not $HOME");
        is_str(tree(HOME "/x", HOME "/y"), HOME "/y",
               "a link in $HOME to a file in $HOME: the target file only");
        is_str(tree(HOME "/bin/x", HOME "/x"), HOME "/bin " HOME "/x",
               "a link to a file in $HOME: ~/bin and the file");
        is_str(tree(HOME "/.local/x", NULL), HOME "/.local/x",
               "an executable in ~/.local: the file");
        is_str(tree(HOME "/.ssh/x", NULL), HOME "/.ssh/x", "... in ~/.ssh: the file");
        is_str(tree(HOME "/bin/x", HOME "/.local/share/x"), HOME "/bin " HOME "/.local/share/x",
               "a link into ~/.local/share: the file, not ~/.local/share");
        is_str(tree(HOME "/bin/x", HOME "/.config/x"), HOME "/bin " HOME "/.config/x",
               "a link into ~/.config: the file");
        is_str(tree("/home/v/bin/x", "/home/v/lib/x/x"), "/home/v/bin /home/v/lib/x",
               "another user's home as a prefix (/home/v): not mounted");
        is_str(tree_h("/home/v/bin/x", "/home/v/lib/x/x", NULL), "/home/v/bin /home/v/lib/x",
               "... nor without a home given");
        is_str(tree_h("/root/bin/x", "/root/proj/x", NULL), "/root/bin /root/proj",
               "/root's: each directory");
        is_str(tree_h("/root/x", NULL, NULL), "/root/x", "an executable in /root: the file");
        is_str(tree_h("/root/.local/bin/x", "/root/.local/lib/x/x", NULL),
               "/root/.local/bin /root/.local/lib/x", "/root/.local as a prefix: not mounted");
        is_str(tree_h("/srv/me/bin/x", "/srv/me/lib/x/x", "/srv/me"), "/srv/me/bin /srv/me/lib/x",
               "a home elsewhere (/srv/me) as a prefix: not mounted");
        is_str(tree_h("/srv/me/bin/x", "/srv/me/lib/x/x", "/srv/me/"), "/srv/me/bin /srv/me/lib/x",
               "... given with a trailing '/'");
        is_str(tree_h("/srv/a/bin/x", "/srv/a/lib/x/x", "/srv/a/me"), "/srv/a/bin /srv/a/lib/x",
               "above a home (/srv/a over /srv/a/me) as a prefix: not mounted");
        is_str(tree_h("/srv/me/.tools/bin/x", "/srv/me/.tools/lib/x/x", "/srv/me"),
               "/srv/me/.tools/bin /srv/me/.tools/lib/x", "a home's dot directory as a prefix: no");
        is_str(tree_h("/work/.local/bin/x", "/work/.local/lib/x/x", NULL),
               "/work/.local/bin /work/.local/lib/x", ".local anywhere: no");
        is_str(tree_h("/srv/me/bin/x", "/srv/me/lib/x/x", "relative/home"), "/srv/me",
               "a relative home is no home");
        /* "/" and one component deep */
        is_str(tree("/x", NULL), "/x", "an executable in /: the file");
        is_str(tree("/x", "/y/z"), "/y/z", "a link in / to /y/z: the target file, never / nor /y");
        is_str(tree("/bin/x", "/lib/x/x"), "/lib/x",
               "/bin/x -> /lib/x/x: the target's directory, never / (nor /bin: one deep)");
        is_str(tree("/tmp/x", "/tmp/y"), "/tmp/y", "a link in /tmp: the target file, never /tmp");
        is_str(tree("/tmp/a/bin/x", "/tmp/b/x"), "/tmp/a/bin /tmp/b", "/tmp/a/bin -> /tmp/b: each");
        is_str(tree("/var/tmp/x", NULL), "/var/tmp/x", "/var/tmp: the file");
        is_str(tree("/dev/shm/x", NULL), "/dev/shm/x", "/dev/shm: the file");
        is_str(tree("/run/user/1000/x", NULL), "/run/user/1000/x", "/run/user/UID: the file");
        is_str(tree("/run/user/1000/bin/x", NULL), "/run/user/1000/bin",
               "/run/user/UID/bin: that directory");
        is_str(tree(HOME "/node_modules/x", HOME "/node_modules/x"), HOME "/node_modules",
               "a file in a node_modules: its directory");
}

static void refusals(void)
{
        char root[PATH_MAX], extra[PATH_MAX];
        is_str(tree("x", NULL), "error -22", "a relative path: refused");
        is_str(tree("/", NULL), "error -22", "/ as the executable: refused");
        is_str(tree("/a//x", NULL), "error -22", "an empty component: refused");
        is_str(tree("/a/./x", NULL), "error -22", "a '.' component: refused");
        is_str(tree("/root/bin/../x", NULL), "error -22", "a '..' component: refused");
        is_str(tree("/a/x/", NULL), "error -22", "a trailing '/': refused");
        is_str(tree("/a/x", "y"), "error -22", "a relative target: refused");
        is_str(tree("/a/x", "/b/../y"), "error -22", "a target with '..': refused");
        char big[PATH_MAX + 8];
        memset(big, 'a', sizeof big - 1);
        big[0] = '/';
        big[sizeof big - 1] = '\0';
        is_str(tree(big, NULL), "error -22", "a path of PATH_MAX bytes or more: refused");
        const char *many[HOST_TREE_HOMES_MAX + 1] = {0};
        is_int(host_tree("/a/x", NULL, many, HOST_TREE_HOMES_MAX + 1, root, extra), -EINVAL,
               "more homes than HOST_TREE_HOMES_MAX: refused");
        is_int(host_tree("/a/x", NULL, NULL, 1, root, extra), -EINVAL,
               "homes NULL with n: refused");
        ok(!root[0] && !extra[0], "... and nothing given");
        is_int(host_tree("/a/x", NULL, many, HOST_TREE_HOMES_MAX, root, extra), 0,
               "NULL homes are ignored");
        /* as long as it may be */
        memset(big, 'b', PATH_MAX - 1);
        big[0] = '/';
        big[5] = '/';
        big[10] = '/';
        big[PATH_MAX - 1] = '\0';
        is_int(host_tree(big, NULL, NULL, 0, root, extra), 0,
               "a path of PATH_MAX - 1 bytes: taken");
        is_int((int)strlen(root), 10, "... its directory");
}

/* out = base/rel ("" when too long) */
static char *at(char out[PATH_MAX], const char *base, const char *rel)
{
        if ((size_t)snprintf(out, PATH_MAX, "%s/%s", base, rel) >= PATH_MAX)
                out[0] = '\0';
        return out;
}

/* host_command_for on a tree of its own */
static void lookup(void)
{
        char dir[] = "/tmp/rf-test-hostcmd-XXXXXX", p[PATH_MAX], q[PATH_MAX], path[3 * PATH_MAX];
        char found[PATH_MAX], root[PATH_MAX], extra[PATH_MAX];
        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp: %s", strerror(errno));
                return;
        }
        char rdir[PATH_MAX];
        if (!realpath(dir, rdir)) {
                ok(false, "realpath: %s", strerror(errno));
                return;
        }
        static const char *const dirs[] = {"home",      "home/bin", "home/proj",
                                           "pfx",       "pfx/bin",  "pfx/lib",
                                           "pfx/lib/t", "other",    "other/rf-hc-t"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
                at(p, rdir, dirs[i]);
                mkdir(p, 0755);
        }
        at(p, rdir, "home/proj/rf-hc-t");
        FILE *f = fopen(p, "w");
        if (f) {
                fputs("#!/bin/sh\n", f);
                fclose(f);
        }
        chmod(p, 0755);
        at(q, rdir, "home/bin/rf-hc-t");
        int s1 = symlink("../proj/rf-hc-t", q);
        at(p, rdir, "pfx/lib/t/rf-hc-t");
        f = fopen(p, "w");
        if (f) {
                fputs("#!/bin/sh\n", f);
                fclose(f);
        }
        chmod(p, 0755);
        at(q, rdir, "pfx/bin/rf-hc-t");
        int s2 = symlink("../lib/t/rf-hc-t", q);
        at(q, rdir, "pfxlink");
        int s3 = symlink("pfx", q);
        ok(s1 == 0 && s2 == 0 && s3 == 0, "a tree of links in %s", rdir);

        char home[PATH_MAX];
        at(home, rdir, "home");
        /* a directory named like the command comes first on PATH: skipped */
        if ((size_t)snprintf(path, sizeof path, "relative:%s/other:%s/home/bin", rdir, rdir) >=
            sizeof path)
                path[0] = '\0';
        is_int(host_command_for("rf-hc-t", path, home, found, root, extra), 0,
               "a name through PATH: found (a directory of its name and a relative entry "
               "skipped)");
        at(p, rdir, "home/bin/rf-hc-t");
        is_str(found, p, "... found: the link as PATH names it");
        at(p, rdir, "home/bin");
        is_str(root, p, "... root: its directory");
        at(p, rdir, "home/proj");
        is_str(extra, p, "... extra: the target's directory, not the home");
        /* through a symbolic link in PATH's entry: its directory resolved */
        at(path, rdir, "pfxlink/bin");
        is_int(host_command_for("rf-hc-t", path, home, found, root, extra), 0,
               "through a link in PATH's entry: found");
        at(p, rdir, "pfx/bin/rf-hc-t");
        is_str(found, p, "... its directory resolved, the link kept");
        at(p, rdir, "pfx");
        is_str(root, p, "... root: the prefix");
        is_str(extra, "", "... no extra");
        /* a path */
        at(q, rdir, "pfxlink/bin/rf-hc-t");
        is_int(host_command_for(q, NULL, home, found, root, extra), 0, "a path: found");
        at(p, rdir, "pfx/bin/rf-hc-t");
        is_str(found, p, "... its directory resolved");
        /* the caller's home itself on PATH */
        at(q, rdir, "home/proj/rf-hc-t");
        is_int(host_command_for("rf-hc-t", q, home, found, root, extra), -ENOENT,
               "a PATH entry that is a file: not found");
        is_int(host_command_for("rf-hc-t", "/nonexistent", home, found, root, extra), -ENOENT,
               "not on PATH: -ENOENT");
        ok(!found[0] && !root[0] && !extra[0], "... nothing given");
        at(q, rdir, "other/rf-hc-t");
        is_int(host_command_for(q, NULL, home, found, root, extra), -ENOENT,
               "a directory by path: -ENOENT");
        is_int(host_command_for("", "/bin", home, found, root, extra), -ENOENT, "no name: -ENOENT");
        /* a shim directory whose ROOT/version is a FIFO (anyone's home may
         * hold one): passed over, never waited on (the alarm turns a hang
         * into this test's failure) */
        static const char *const pyd[] = {"py", "py/shims"};
        for (size_t i = 0; i < 2; i++) {
                at(p, rdir, pyd[i]);
                mkdir(p, 0755);
        }
        at(p, rdir, "py/shims/rf-hc-t");
        f = fopen(p, "w");
        if (f) {
                fputs("#!/bin/sh\n", f);
                fclose(f);
        }
        chmod(p, 0755);
        at(q, rdir, "py/version");
        ok(mkfifo(q, 0644) == 0, "a FIFO as a shim root's version file");
        at(path, rdir, "py/shims");
        alarm(20);
        int fr = host_command_for("rf-hc-t", path, home, found, root, extra);
        alarm(0);
        ok(fr == 0 || fr == -ENOENT, "... the lookup returns (%d), never waits on the FIFO", fr);
        unlink(q);
        at(p, rdir, "py/shims/rf-hc-t");
        unlink(p);
        for (size_t i = 2; i-- > 0;) {
                at(p, rdir, pyd[i]);
                rmdir(p);
        }

        static const char *const rm[] = {"home/bin/rf-hc-t", "home/proj/rf-hc-t", "pfx/bin/rf-hc-t",
                                         "pfx/lib/t/rf-hc-t", "pfxlink"};
        for (size_t i = 0; i < sizeof rm / sizeof rm[0]; i++) {
                at(p, rdir, rm[i]);
                unlink(p);
        }
        for (size_t i = sizeof dirs / sizeof dirs[0]; i-- > 0;) {
                at(p, rdir, dirs[i]);
                rmdir(p);
        }
        rmdir(rdir);
}

/* pyenv's and rbenv's shims: where ROOT/version leads (pure) */
static void shims(void)
{
        char out[PATH_MAX];
        const char *d = "/h/.pyenv/shims";
        is_int(host_shim_version(d, strlen(d), "python3", "3.11.7\n", out), 0, "shim: a version");
        is_str(out, "/h/.pyenv/versions/3.11.7/bin/python3", "... its bin/python3");
        is_int(host_shim_version(d, strlen(d), "python3", "3.12 3.11\n", out), 0,
               "shim: several versions: the first");
        is_str(out, "/h/.pyenv/versions/3.12/bin/python3", "... 3.12");
        static const char *const bad[] = {"system\n", "", "\n", "../x", "a/b", ".hidden"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                is_int(host_shim_version(d, strlen(d), "python3", bad[i], out), -ENOENT,
                       "shim: version \"%s\" refused", bad[i]);
        const char *nd = "/usr/bin";
        is_int(host_shim_version(nd, strlen(nd), "python3", "3.11\n", out), -ENOENT,
               "not a shim directory: -ENOENT");
        is_int(host_shim_version(d, strlen(d), "x/python3", "3.11\n", out), -ENOENT,
               "a command with a '/': -ENOENT");
        /* dir_len names a prefix of a longer string (a PATH entry) */
        const char *path = "/r/.rbenv/shims:/usr/bin";
        is_int(host_shim_version(path, 15, "ruby", "3.3.0", out), 0,
               "shim: a PATH entry by length");
        is_str(out, "/r/.rbenv/versions/3.3.0/bin/ruby", "... rbenv's layout");
}

int main(void)
{
        shims();
        layouts();
        never();
        refusals();
        lookup();
        return done();
}
