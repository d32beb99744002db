/*
 * fuzz_publish.c — libFuzzer target for the published port's peer lookup
 * answer (src/supervisor/publish-parse.c).
 *
 * The input is read as netlink messages for a fixed question (the first
 * byte picks IPv4 or IPv6 and the sequence number's low bits), in a heap
 * buffer of exactly its length. Beyond "no crash, no out-of-bounds read,
 * no UB": an accepted answer must describe exactly the socket asked for,
 * in a connected state, of a socket its owner still holds (an inode), and
 * the uid written is its owner's — checked by re-reading it independently.
 */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "supervisor/publish.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        struct publish_peer want = {.family = data[0] & 1 ? AF_INET6 : AF_INET,
                                    .peer_port = 40000,
                                    .local_port = 8080,
                                    .peer_addr = {127, 0, 0, 1},
                                    .local_addr = {127, 0, 0, 1}};
        uint32_t seq = data[0] >> 1, uid = 12345;
        uint8_t req[PUBLISH_DIAG_REQ_SIZE];
        if (publish_diag_request(&want, seq, req, sizeof req) == 0)
                abort();
        uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
        if (!copy)
                return 0;
        memcpy(copy, data + 1, size - 1);
        int r = publish_diag_parse(copy, size - 1, seq, &want, &uid);
        if (r == 0) {
                /* an accepted answer holds a whole inet_diag_msg */
                if (size - 1 < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                        abort();
                /* re-read: the first socket message is of the socket asked
                 * for, connected, still held by its owner (an inode), and
                 * the uid is its own */
                size_t off = 0;
                for (;;) {
                        struct nlmsghdr h;
                        if (off + sizeof h > size - 1)
                                abort();
                        memcpy(&h, copy + off, sizeof h);
                        if (h.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
                                struct inet_diag_msg m;
                                memcpy(&m, copy + off + NLMSG_HDRLEN, sizeof m);
                                if (m.idiag_inode == 0 || m.idiag_uid != uid ||
                                    m.idiag_family != want.family ||
                                    m.id.idiag_sport != htons(want.peer_port) ||
                                    m.id.idiag_dport != htons(want.local_port) ||
                                    !(m.idiag_state == TCP_ESTABLISHED ||
                                      m.idiag_state == TCP_FIN_WAIT1 ||
                                      m.idiag_state == TCP_FIN_WAIT2 ||
                                      m.idiag_state == TCP_CLOSE_WAIT ||
                                      m.idiag_state == TCP_LAST_ACK ||
                                      m.idiag_state == TCP_CLOSING))
                                        abort();
                                break;
                        }
                        if (h.nlmsg_type == NLMSG_ERROR || h.nlmsg_len < NLMSG_HDRLEN)
                                abort();
                        off += NLMSG_ALIGN(h.nlmsg_len);
                }
        } else if (r != -ENOENT && r != -EACCES && r != -EBADMSG) {
                abort();
        } else if (uid != 12345) {
                abort(); /* a refusal never writes the uid */
        }
        free(copy);
        return 0;
}
