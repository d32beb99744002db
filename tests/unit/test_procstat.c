/*
 * test_procstat.c — /proc/PID/stat's name, state and parent
 * (src/shared/procstat.c): a name holding ')' and spaces ends at the last
 * ')', a zombie's state, a parent outside the pid namespace (0), and every
 * refusal; then this process's own line (a control the kernel writes).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "shared/procstat.h"
#include "tap.h"

static int parse(const char *s, struct procstat *ps)
{
        return procstat_parse(s, strlen(s), ps);
}

int main(void)
{
        struct procstat ps;
        is_int(parse("4242 (sh) S 1 4242 4242 0 -1\n", &ps), 0, "a line: parsed");
        ok(!strcmp(ps.comm, "sh") && ps.state == 'S' && ps.ppid == 1, "... name, state, parent");
        is_int(parse("7 (a) b) (c) Z 0 7", &ps), 0, "a name holding ') (': parsed");
        ok(!strcmp(ps.comm, "a) b) (c") && ps.state == 'Z' && ps.ppid == 0,
           "... the name ends at the last ')', a zombie, a parent outside (0)");
        is_int(parse("9 (x) R 12", &ps), 0, "no fields after the parent: parsed");
        is_int(ps.ppid, 12, "... the parent");
        is_int(parse("9 x) R 1", &ps), -EBADMSG, "no '(': refused");
        is_int(parse("9 (x R 1", &ps), -EBADMSG, "no ')': refused");
        is_int(parse("9 (x) R", &ps), -EBADMSG, "no parent: refused");
        is_int(parse("9 (x)", &ps), -EBADMSG, "cut after the name: refused");
        is_int(parse("9 (x) R -1", &ps), -EBADMSG, "a negative parent: refused");
        is_int(parse("9 (x) R 12345678901", &ps), -EBADMSG, "a parent of 11 digits: refused");
        is_int(parse("9 (x) R 1x", &ps), -EBADMSG, "a parent that is no number: refused");
        char big[200] = "1 (";
        memset(big + 3, 'n', 150);
        strcpy(big + 153, ") S 1");
        is_int(parse(big, &ps), 0, "a name longer than the bound: parsed");
        is_int((int)strlen(ps.comm), PROCSTAT_COMM_MAX, "... cut at the bound");
        is_int(procstat_read(getpid(), &ps), 0, "control: this process's own line");
        ok(ps.ppid == getppid() && ps.state == 'R', "... its parent, running");
        is_int(procstat_read(0, &ps), -ESRCH, "pid 0: -ESRCH");

#define MAP(lit) procstat_uid_map_initial(lit, sizeof(lit) - 1)
        ok(MAP("         0          0 4294967295\n"), "uid_map: the initial namespace's");
        ok(MAP("0 0 4294967295"), "... without the final newline");
        ok(!MAP("         0       1000          1\n"), "... a rootless engine's (0 -> 1000): not");
        ok(!MAP("0 0 4294967295\n1 1 1\n"), "... a second line: not");
        ok(!MAP("0 0 4294967294\n"), "... one id short: not");
        ok(!MAP("0 0 42949672950\n"), "... eleven digits: not");
        ok(!MAP("0 0"), "... cut short: not");
        ok(!MAP(""), "... empty: not");
        ok(!MAP("0 0 4294967295x"), "... trailing garbage: not");
        ok(procstat_uid_map_initial("0 0 4294967295\n", 4) == false, "... read past len: never");
        return done();
}
