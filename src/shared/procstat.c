/*
 * procstat.c — /proc/PID/stat's name, state and parent (procstat.h). The
 * parser is pure and fuzzed; procstat_read is its one reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "procstat.h"

int procstat_parse(const char *buf, size_t len, struct procstat *out)
{
        const char *l = memchr(buf, '(', len), *r = NULL;
        for (size_t i = len; i > 0; i--)
                if (buf[i - 1] == ')') {
                        r = buf + i - 1;
                        break;
                }
        /* ") S PPID": a space, the state, a space, the parent's pid */
        if (!l || !r || r < l || (size_t)(r - buf) + 4 > len || r[1] != ' ' || r[3] != ' ')
                return -EBADMSG;
        size_t n = (size_t)(r - l - 1);
        if (n > PROCSTAT_COMM_MAX)
                n = PROCSTAT_COMM_MAX;
        memcpy(out->comm, l + 1, n);
        out->comm[n] = '\0';
        out->state = r[2];
        long ppid = 0;
        size_t i = (size_t)(r - buf) + 4, start = i;
        for (; i < len && i - start < 10 && buf[i] >= '0' && buf[i] <= '9'; i++)
                ppid = ppid * 10 + (buf[i] - '0');
        if (i == start || (i < len && buf[i] != ' ' && buf[i] != '\n') || ppid > 0x3fffffff)
                return -EBADMSG;
        out->ppid = (pid_t)ppid;
        return 0;
}

/* the next field of buf[*i..len): blanks skipped, then digits (at most 10)
 * into *v; false when there are none or too many */
static bool uid_field(const char *buf, size_t len, size_t *i, unsigned long long *v)
{
        while (*i < len && (buf[*i] == ' ' || buf[*i] == '\t'))
                (*i)++;
        size_t start = *i;
        *v = 0;
        for (; *i < len && *i - start < 10 && buf[*i] >= '0' && buf[*i] <= '9'; (*i)++)
                *v = *v * 10 + (unsigned long long)(buf[*i] - '0');
        return *i > start && (*i >= len || buf[*i] < '0' || buf[*i] > '9');
}

bool procstat_uid_map_initial(const char *buf, size_t len)
{
        unsigned long long inner, outer, count;
        size_t i = 0;
        if (!uid_field(buf, len, &i, &inner) || !uid_field(buf, len, &i, &outer) ||
            !uid_field(buf, len, &i, &count))
                return false;
        if (i < len && buf[i] == '\n')
                i++;
        return i == len && inner == 0 && outer == 0 && count == 4294967295ULL;
}

int procstat_read(pid_t pid, struct procstat *out)
{
        char path[32], buf[512];
        if (pid <= 0)
                return -ESRCH;
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        if (n <= 0)
                return -ESRCH;
        return procstat_parse(buf, (size_t)n, out);
}
