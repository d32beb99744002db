/*
 * test_control.c — the per-run control channel's request parser
 * (supervisor/control.c): every verb, its argument rules, and refusals.
 */
#include <errno.h>
#include <string.h>

#include "supervisor/control.h"
#include "tap.h"

static int parse(const char *s, struct control_req *r)
{
        const char *why = NULL;
        return control_req_parse(s, strlen(s), r, &why);
}

int main(void)
{
        struct control_req r;

        is_int(parse("status", &r), 0, "status");
        is_int(r.op, CTL_STATUS, "... is CTL_STATUS");
        is_int(parse("kill", &r), 0, "kill without a reason");
        ok(r.op == CTL_KILL && r.arg[0] == '\0', "... CTL_KILL, empty reason");
        is_int(parse("kill agent looped — stop it", &r), 0, "kill with a UTF-8 reason");
        is_str(r.arg, "agent looped — stop it", "... the reason kept");
        is_int(parse("pause", &r), 0, "pause");
        is_int(parse("resume", &r), 0, "resume");
        is_int(parse("kill @1000 disk full", &r), 0, "kill with a reason that starts with @");
        ok(r.op == CTL_KILL && r.actor == -1 && !strcmp(r.arg, "@1000 disk full"),
           "... is only a reason (kill-as names an actor)");
        is_int(parse("kill-as 1000 api says so", &r), 0, "kill-as UID REASON");
        ok(r.op == CTL_KILL_AS && r.actor == 1000 && !strcmp(r.arg, "api says so"),
           "... the actor and the reason");
        is_int(parse("kill-as x", &r), -EBADMSG, "kill-as without a uid: refused");
        is_int(parse("revoke-secret db.pem", &r), 0, "revoke-secret NAME");
        ok(r.op == CTL_REVOKE_SECRET && !strcmp(r.arg, "db.pem"), "... the name");
        is_int(parse("as 1000 pause", &r), 0, "as UID pause");
        ok(r.op == CTL_PAUSE && r.actor == 1000, "... CTL_PAUSE acting for 1000");
        is_int(parse("as 0 allow-host api.example.com:443", &r), 0, "as UID allow-host RULE");
        ok(r.op == CTL_ALLOW_HOST && r.actor == 0 && !strcmp(r.arg, "api.example.com:443"),
           "... the rule and the actor");
        is_int(parse("as 65534 revoke-secret db.pem", &r), 0, "as UID revoke-secret NAME");
        ok(r.op == CTL_REVOKE_SECRET && r.actor == 65534, "... acting for 65534");
        is_int(parse("pause", &r), 0, "a plain request");
        is_int((int)r.actor, -1, "... names no actor");
        is_int(parse("as 1000 as 5 pause", &r), -EBADMSG, "as inside as: refused");
        is_int(parse("as 1000 kill-as 5", &r), -EBADMSG, "as with kill-as (two actors): refused");
        is_int(parse("as 1000", &r), -EBADMSG, "as without a request: refused");
        is_int(parse("as  pause", &r), -EBADMSG, "as without a uid: refused");
        is_int(parse("as 4294967295 pause", &r), -EBADMSG, "as (uid_t)-1: refused");
        is_int(parse("as 12345678901 pause", &r), -EBADMSG, "as with 11 digits: refused");
        is_int(parse("as 1000 pause now", &r), -EBADMSG, "as with a bad request: refused");

        is_int(parse("attach 4242", &r), 0, "attach PID");
        ok(r.op == CTL_ATTACH && !strcmp(r.arg, "4242") && r.actor == -1, "... the pid");
        is_int(parse("attach 1", &r), -EBADMSG, "attach of pid 1: refused");
        is_int(parse("attach", &r), -EBADMSG, "attach without a pid: refused");
        is_int(parse("attach 12x", &r), -EBADMSG, "attach of no number: refused");
        is_int(parse("attach 12345678901", &r), -EBADMSG, "attach of 11 digits: refused");
        is_int(parse("limits 1048576 64 500", &r), 0, "limits MEM PIDS CPU");
        ok(r.op == CTL_LIMITS && r.limits[0] == 1048576 && r.limits[1] == 64 && r.limits[2] == 500,
           "... the three values");
        is_int(parse("limits - 32 -", &r), 0, "limits with values kept (-)");
        ok(r.limits[0] == 0 && r.limits[1] == 32 && r.limits[2] == 0, "... 0 for kept");
        is_int(parse("as 0 limits 1 - -", &r), 0, "as UID limits");
        ok(r.op == CTL_LIMITS && r.actor == 0 && r.limits[0] == 1, "... acting for 0");
        is_int(parse("limits 0 - -", &r), -EBADMSG, "limits of 0: refused");
        is_int(parse("limits 1 2", &r), -EBADMSG, "limits with two values: refused");
        is_int(parse("limits 1 2 3 4", &r), -EBADMSG, "limits with four values: refused");
        is_int(parse("signal 28", &r), 0, "signal N");
        ok(r.op == CTL_SIGNAL && r.signal == 28 && !r.signal_all, "... WINCH, to the command");
        is_int(parse("signal 15 all", &r), 0, "signal N all");
        ok(r.op == CTL_SIGNAL && r.signal == 15 && r.signal_all, "... TERM, to every process");
        is_int(parse("signal 64", &r), 0, "signal 64 (SIGRTMAX)");
        static const char *const bad_signals[] = {
                "signal",         "signal 9",   "signal 19",   "signal 0",    "signal 65",
                "signal 100",     "signal -1",  "signal x",    "signal 15 a", "signal 15 all ",
                "signal 15  all", "signal 015", "signal 1 ALL"};
        for (size_t i = 0; i < sizeof bad_signals / sizeof *bad_signals; i++)
                is_int(parse(bad_signals[i], &r), -EBADMSG, "refused: \"%s\"", bad_signals[i]);
        is_int(parse("limits 1  2 3", &r), -EBADMSG, "limits with two spaces: refused");
        is_int(parse("limits -1 2 3", &r), -EBADMSG, "limits of -1: refused");
        is_int(parse("limits 1234567890123456789 2 3", &r), -EBADMSG,
               "limits of 19 digits: refused");
        is_int(parse("limits", &r), -EBADMSG, "limits without values: refused");

        static const char *const bad[] = {
                "",
                "stat",
                "status now",
                "pause x",
                "kill ",
                "kill a\nb",
                "kill \x1b[2J",
                "revoke-secret",
                "revoke-secret ../x",
                "revoke-secret a b",
                "KILL",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                is_int(parse(bad[i], &r), -EBADMSG, "refused: \"%s\"", bad[i]);
        char big[CONTROL_REASON_MAX + 8];
        memcpy(big, "kill ", 5);
        memset(big + 5, 'x', CONTROL_REASON_MAX);
        big[5 + CONTROL_REASON_MAX] = '\0';
        is_int(parse(big, &r), 0, "a reason of %d bytes", CONTROL_REASON_MAX);
        big[5 + CONTROL_REASON_MAX] = 'x';
        big[6 + CONTROL_REASON_MAX] = '\0';
        is_int(parse(big, &r), -EBADMSG, "... one more: refused");
        const char *why = NULL;
        is_int(control_req_parse("kill\0x", 6, &r, &why), -EBADMSG, "a NUL inside: refused");
        is_int(control_req_parse("kill", CONTROL_MSG_MAX + 1, &r, &why), -EBADMSG,
               "a datagram over CONTROL_MSG_MAX: refused");
        return done();
}
