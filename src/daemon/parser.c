/*
 * parser.c — the daemon's request parser, a process of its own.
 *
 * The part of the daemon that reads what clients send runs apart from the
 * privileged daemon, OpenBSD-style: forked at start, it becomes a uid of
 * its own (when started as root: allocated from the run uid range, so no
 * other process can signal it), drops every capability, sets no_new_privs and
 * installs a seccomp allowlist (all of it rf_fork_tied, shared/lockdown.h) of a few system calls
 * (read and write on its socket, memory, exit). It holds no secret and no file: it receives a
 * connection's bytes with a connection id and answers "more", an error, or the routed request
 * (wire.h). A bug here can forge at most a request for the connection it was handed, which the
 * daemon still authorises with that connection's SO_PEERCRED identity.
 */
#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/wire.h"
#include "egress/http.h"
#include "shared/bpf-filter.h"
#include "shared/lockdown.h"
#include "shared/macro.h"

/* Its seccomp allowlist: read and write on its socket, memory, exit. */
static const struct sock_filter parser_filter[] = {
        RF_BPF_LOAD_NR,
        RF_BPF_ALLOW(__NR_read),
        RF_BPF_ALLOW(__NR_write),
        RF_BPF_ALLOW(__NR_close), /* rf_fork_tied's last step: its report fd */
        RF_BPF_ALLOW(__NR_recvfrom),
        RF_BPF_ALLOW(__NR_sendto),
        RF_BPF_ALLOW(__NR_brk),
        RF_BPF_ALLOW(__NR_mmap),
        RF_BPF_ALLOW(__NR_munmap),
        RF_BPF_ALLOW(__NR_mremap),
        RF_BPF_ALLOW(__NR_madvise),
        RF_BPF_ALLOW(__NR_exit),
        RF_BPF_ALLOW(__NR_exit_group),
        RF_BPF_ALLOW(__NR_rt_sigreturn),
        RF_BPF_ALLOW(__NR_futex),
        /* the sanitizers' runtime asks for the signal stack before every
         * noreturn call (__asan_handle_no_return); it touches only this
         * process's own signal stack */
        RF_BPF_ALLOW(__NR_sigaltstack),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* One connection's bytes so far → more / error / request. */
static int parse_one(uint32_t conn, const char *in, size_t len, char *out, size_t size)
{
        struct wire_head h = {.conn = conn, .kind = WIRE_MORE};
        struct http_request hr;
        struct api_req req;
        const char *why = NULL;

        int k = http_origin_request_parse(in, len, &hr, &why);
        if (k == 0 && len < DAEMON_REQ_MAX)
                return wire_pack(&h, NULL, out, size);
        h.kind = WIRE_ERROR;
        if (k <= 0) {
                h.status = k == -E2BIG || k == 0 ? 431 : 400;
                snprintf(h.why, sizeof h.why, "%s",
                         k == -E2BIG || k == 0 ? "request head too large"
                         : why                 ? why
                                               : "bad request");
                return wire_pack(&h, NULL, out, size);
        }
        if (hr.chunked) {
                h.status = 411;
                snprintf(h.why, sizeof h.why, "send the body with Content-Length, not chunked");
                return wire_pack(&h, NULL, out, size);
        }
        size_t body = hr.content_length > 0 ? (size_t)hr.content_length : 0;
        if (body > API_BODY_MAX) {
                h.status = 413;
                snprintf(h.why, sizeof h.why, "the body is larger than %d bytes", API_BODY_MAX);
                return wire_pack(&h, NULL, out, size);
        }
        if (len < (size_t)k + body) {
                h.kind = WIRE_MORE;
                return wire_pack(&h, NULL, out, size);
        }
        int s = api_route(in + hr.method.off, hr.method.len, in + hr.path.off, hr.path.len, in + k,
                          body, &req, h.why, sizeof h.why);
        if (s) {
                h.status = s;
                return wire_pack(&h, NULL, out, size);
        }
        h.kind = WIRE_REQUEST;
        int n = wire_pack(&h, &req, out, size);
        api_req_clear(&req);
        return n;
}

static _noreturn_ void parser_main(int sock)
{
        static char in[DAEMON_REQ_MAX + 8], out[WIRE_MAX];

        for (;;) {
                ssize_t n = recv(sock, in, sizeof in, 0);
                if (n <= 0)
                        _exit(0);
                if ((size_t)n < 4)
                        continue;
                uint32_t conn;
                memcpy(&conn, in, 4);
                int m = parse_one(conn, in + 4, (size_t)n - 4, out, sizeof out);
                if (m < 0) {
                        struct wire_head h = {.conn = conn, .kind = WIRE_ERROR, .status = 400};
                        snprintf(h.why, sizeof h.why, "request too large to route");
                        m = wire_pack(&h, NULL, out, sizeof out);
                }
                if (m > 0 && send(sock, out, (size_t)m, 0) < 0)
                        _exit(1);
        }
}

pid_t parser_spawn(int *sock, uid_t uid)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        /* room for a whole request and a whole answer in one datagram */
        int sz = 512 * 1024;
        (void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
        (void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
        /* a uid of its own (allocated like a run's, when the daemon is
         * root): no other process on the host runs as it, so none can
         * signal or trace it; nothing but its socket (fd 3) */
        struct sock_fprog prog = {.len = (unsigned short)ARRAY_SIZE(parser_filter),
                                  .filter = (struct sock_filter *)parser_filter};
        struct rf_lockdown how = {.what = "request parser",
                                  .arrange_fds = true,
                                  .fds = {-1, -1, -1, sv[1]},
                                  .n_fds = 4,
                                  .set_ids = true,
                                  .uid = uid,
                                  .gid = uid,
                                  .drop_caps = true,
                                  .seccomp = &prog};
        pid_t pid = rf_fork_tied(&how, NULL);
        if (pid < 0) {
                close_pair(sv);
                return pid;
        }
        if (pid == 0)
                parser_main(3);
        close(sv[1]);
        *sock = sv[0];
        return pid;
}
