/*
 * test_plan.c — unit tests of the sandbox plan's pure path rules:
 * path_absolute (lexical normalisation), path_is_beneath, the workspace
 * rule (plan_check_workspace) and the run id format.
 */
#include <errno.h>
#include <regex.h>
#include <string.h>

#include "sandbox/plan.h"
#include "tap.h"

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
        return done();
}
