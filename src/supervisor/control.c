/*
 * control.c — the per-run control channel's request parser. Pure.
 */
#include <errno.h>
#include <string.h>

#include <stdio.h>

#include "policy/rules.h"
#include "secrets/broker.h"
#include "shared/json.h"
#include "supervisor/control.h"

static const char *const verbs[_CTL_MAX] = {
        [CTL_STATUS] = "status",
        [CTL_KILL] = "kill",
        [CTL_PAUSE] = "pause",
        [CTL_RESUME] = "resume",
        [CTL_REVOKE_SECRET] = "revoke-secret",
        [CTL_ALLOW_HOST] = "allow-host",
        [CTL_REVOKE_HOST] = "revoke-host",
        [CTL_KILL_AS] = "kill-as",
        [CTL_ATTACH] = "attach",
        [CTL_LIMITS] = "limits",
        [CTL_SIGNAL] = "signal",
};

const char *control_op_name(enum control_op op)
{
        return (unsigned)op < _CTL_MAX ? verbs[op] : "?";
}

static int parse_one(const char *buf, size_t len, struct control_req *req, const char **why);

int control_req_parse(const char *buf, size_t len, struct control_req *req, const char **why)
{
        memset(req, 0, sizeof *req);
        req->actor = -1;
        if (len == 0 || len > CONTROL_MSG_MAX) {
                *why = "empty or oversized request";
                return -EBADMSG;
        }
        if (len < 3 || memcmp(buf, "as ", 3) != 0)
                return parse_one(buf, len, req, why);
        /* "as UID REQUEST": whom a root peer (the daemon) acts for */
        size_t i = 3;
        long long uid = 0;
        while (i < len && i < 13 && buf[i] >= '0' && buf[i] <= '9')
                uid = uid * 10 + (buf[i++] - '0');
        if (i == 3 || uid > 0xfffffffeLL || i >= len || buf[i] != ' ') {
                *why = "as UID REQUEST";
                return -EBADMSG;
        }
        int r = parse_one(buf + i + 1, len - i - 1, req, why);
        if (r < 0)
                return r;
        if (req->op == CTL_KILL_AS) {
                *why = "as UID REQUEST: one actor only";
                return -EBADMSG;
        }
        req->actor = (long)uid;
        return 0;
}

static int parse_one(const char *buf, size_t len, struct control_req *req, const char **why)
{
        if (len == 0) {
                *why = "empty request";
                return -EBADMSG;
        }
        const char *sp = memchr(buf, ' ', len);
        size_t vl = sp ? (size_t)(sp - buf) : len;
        const char *arg = sp ? sp + 1 : NULL;
        size_t al = sp ? len - vl - 1 : 0;
        req->op = _CTL_INVALID;
        for (int i = 0; i < _CTL_MAX; i++)
                if (strlen(verbs[i]) == vl && !memcmp(buf, verbs[i], vl))
                        req->op = (enum control_op)i;
        switch (req->op) {
        case CTL_STATUS:
        case CTL_PAUSE:
        case CTL_RESUME:
                if (sp) {
                        *why = "this request takes no argument";
                        return -EBADMSG;
                }
                return 0;
        case CTL_KILL:
                if (!sp)
                        return 0;
                if (al == 0 || al > CONTROL_REASON_MAX || !json_utf8_valid(arg, al, NULL) ||
                    !json_text_is_safe(arg, al)) {
                        *why = "a reason is 1-256 bytes of printable UTF-8";
                        return -EBADMSG;
                }
                memcpy(req->arg, arg, al);
                return 0;
        case CTL_ATTACH: {
                /* "attach PID": a process of the peer's joining the run */
                long long pid = 0;
                size_t i = 0;
                while (sp && i < al && i < 10 && arg[i] >= '0' && arg[i] <= '9')
                        pid = pid * 10 + (arg[i++] - '0');
                if (!sp || i == 0 || i != al || pid < 2 || pid > 0x3fffffffLL) {
                        *why = "attach PID";
                        return -EBADMSG;
                }
                req->actor = -1;
                memcpy(req->arg, arg, al);
                return 0;
        }
        case CTL_LIMITS: {
                /* "limits MEM PIDS CPU": each a decimal > 0 (at most 18
                 * digits) or "-" */
                size_t i = 0;
                for (int k = 0; k < 3; k++) {
                        unsigned long long v = 0;
                        if (k && (i >= al || arg[i++] != ' '))
                                break;
                        size_t start = i;
                        if (i < al && arg[i] == '-') {
                                i++;
                        } else {
                                while (i < al && i - start < 18 && arg[i] >= '0' && arg[i] <= '9')
                                        v = v * 10 + (unsigned long long)(arg[i++] - '0');
                                if (i == start || v == 0)
                                        break;
                        }
                        if (i < al && arg[i] != ' ')
                                break;
                        req->limits[k] = v;
                        if (k == 2 && i == al) {
                                req->actor = -1;
                                memcpy(req->arg, arg, al);
                                return 0;
                        }
                }
                *why = "limits MEM PIDS CPU (each a number > 0 or -)";
                return -EBADMSG;
        }
        case CTL_SIGNAL: {
                /* "signal N" or "signal N all" (ringfence-oci kill [--all]):
                 * N decimal, 1..64, neither KILL (the kill switch) nor STOP
                 * (pause) */
                int v = 0;
                size_t i = 0;
                while (sp && i < al && i < 2 && arg[i] >= '0' && arg[i] <= '9')
                        v = v * 10 + (arg[i++] - '0');
                bool all = sp && al == i + 4 && !memcmp(arg + i, " all", 4);
                if (!sp || i == 0 || (i != al && !all) || v < 1 || v > 64 || v == 9 || v == 19) {
                        *why = "signal N [all] (1-64, not KILL or STOP)";
                        return -EBADMSG;
                }
                req->signal = v;
                req->signal_all = all;
                req->actor = -1;
                memcpy(req->arg, arg, al);
                return 0;
        }
        case CTL_KILL_AS: {
                /* "kill-as UID [REASON]": whom a root peer (the daemon) acts for */
                size_t i = 0;
                long long uid = 0;
                while (sp && i < al && i < 10 && arg[i] >= '0' && arg[i] <= '9')
                        uid = uid * 10 + (arg[i++] - '0');
                if (!sp || i == 0 || uid > 0xfffffffeLL || (i < al && arg[i] != ' ')) {
                        *why = "kill-as UID [REASON]";
                        return -EBADMSG;
                }
                req->actor = (long)uid;
                if (i == al)
                        return 0;
                arg += i + 1;
                al -= i + 1;
                if (al == 0 || al > CONTROL_REASON_MAX || !json_utf8_valid(arg, al, NULL) ||
                    !json_text_is_safe(arg, al)) {
                        *why = "a reason is 1-256 bytes of printable UTF-8";
                        return -EBADMSG;
                }
                memcpy(req->arg, arg, al);
                return 0;
        }
        case CTL_REVOKE_SECRET:
                if (!sp || !secret_name_valid(arg, al)) {
                        *why = "revoke-secret NAME";
                        return -EBADMSG;
                }
                memcpy(req->arg, arg, al);
                return 0;
        case CTL_ALLOW_HOST:
        case CTL_REVOKE_HOST: {
                struct net_rule nr;
                const char *w = "invalid rule";
                if (!sp || al == 0 || net_rule_parse(arg, al, &nr, &w) < 0) {
                        *why = sp ? w : "allow-host|revoke-host RULE";
                        return -EBADMSG;
                }
                snprintf(req->arg, sizeof req->arg, "%s", nr.text);
                return 0;
        }
        case _CTL_MAX:
        case _CTL_INVALID:
        default:
                *why = "unknown request (status, kill, pause, resume, attach, limits, "
                       "revoke-secret, allow-host, revoke-host)";
                return -EBADMSG;
        }
}
