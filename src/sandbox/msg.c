/*
 * msg.c — fixed-size messages with an optional fd over SOCK_SEQPACKET.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "msg.h"
#include "shared/macro.h"

int rf_msg_send(int sock, const struct rf_msg *m, int fd)
{
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof *m};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

        if (fd >= 0) {
                memset(&u, 0, sizeof u);
                mh.msg_control = u.buf;
                mh.msg_controllen = sizeof u.buf;
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof fd);
        }
        ssize_t n = RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL));
        if (n < 0)
                return negative_errno();
        return n == (ssize_t)sizeof *m ? 0 : -EIO;
}

int rf_msg_recv(int sock, struct rf_msg *m, int *fd)
{
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = u.buf,
                            .msg_controllen = sizeof u.buf};
        int got = -1;

        if (fd)
                *fd = -1;
        ssize_t n = RETRY_EINTR(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC));
        if (n < 0)
                return negative_errno();
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                    c->cmsg_len == CMSG_LEN(sizeof(int)) && got < 0)
                        memcpy(&got, CMSG_DATA(c), sizeof got);
                else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        /* more fds than one: close them all, reject */
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int x;
                                memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof x);
                                safe_close(x);
                        }
                        got = safe_close(got);
                        return -EBADMSG;
                }
        }
        if (n == 0 && got < 0)
                return 0;
        if (n != (ssize_t)sizeof *m || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || m->type == 0 ||
            m->type >= _MSG_MAX) {
                safe_close(got);
                return -EBADMSG;
        }
        if (got >= 0 &&
            (!fd || (m->type != MSG_PTY && m->type != MSG_TREE && m->type != MSG_DNS &&
                     m->type != MSG_LISTEN && m->type != MSG_SECRETS &&
                     m->type != MSG_SECRETS_DIR && m->type != MSG_BROKER && m->type != MSG_NFLOG &&
                     m->type != MSG_TRUST && m->type != MSG_CONNECTED))) {
                safe_close(got);
                return -EBADMSG;
        }
        if (fd)
                *fd = got;
        return 1;
}
