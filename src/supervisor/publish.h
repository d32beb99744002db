/*
 * publish.h — `--publish HOST_PORT:RUN_PORT` (network.publish, issue 16):
 * a loopback port of the host that reaches a loopback port of the run, for
 * an agent's OAuth callback (Codex listens on the run's 127.0.0.1:1455) or
 * a dev server.
 *
 * The run's network namespace has nothing but its loopback, and nothing of
 * the host can open a socket in it. So: the supervisor listens on the
 * host's 127.0.0.1 (or [::1]) HOST_PORT; for each connection it asks the
 * run's init (MSG_CONNECT) for a socket connected to the run's 127.0.0.1
 * (else [::1]) RUN_PORT, made inside the run's namespace and sent back
 * (MSG_CONNECTED), and relays the bytes between the two. init connects
 * only to the run ports of the plan.
 *
 * Any local user can connect to a loopback port: each connection's peer
 * socket is looked up through NETLINK_SOCK_DIAG and only the run's caller
 * (and root) are let through; anyone else is closed at once and recorded
 * (publish.refused). Accepted connections are recorded (publish.connect,
 * coalesced per port and uid).
 */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "sandbox/msg.h"
#include "shared/error.h"

#define PUBLISH_CONNS_MAX 32    /* relayed connections at once; more are closed */
#define PUBLISH_BUF       16384 /* bytes buffered per direction of a connection */
#define PUBLISH_POLLFDS   (POLICY_PUBLISH_MAX + 2 * PUBLISH_CONNS_MAX)

/* ---- the peer lookup (pure; publish-parse.c, fuzzed) ---------------------- */

/* A connection as the supervisor accepted it: the peer's end (whose owner
 * is asked for) and ours. Ports in host order, addresses in network order
 * (4 bytes used for AF_INET). */
struct publish_peer {
        int family; /* AF_INET or AF_INET6 */
        uint8_t peer_addr[16], local_addr[16];
        uint16_t peer_port, local_port;
};

#define PUBLISH_DIAG_REQ_SIZE 128

/*
 * publish_diag_request — the SOCK_DIAG_BY_FAMILY request for the peer's
 * own socket (the one whose local end is p's peer end) into buf, with
 * sequence number seq. Returns its length (<= PUBLISH_DIAG_REQ_SIZE), or 0
 * when size is too small or the family is not AF_INET/AF_INET6.
 */
size_t publish_diag_request(const struct publish_peer *p, uint32_t seq, uint8_t *buf, size_t size);

/*
 * publish_diag_parse — the kernel's answer (len bytes of netlink messages)
 * to the request for `want` with sequence number seq: 0 with *uid the
 * socket owner's uid; -ENOENT no such socket (an error reply), -EACCES a
 * socket that is not a full connected one its owner still holds (TIME_WAIT
 * and request sockets carry no owner: uid 0 must not be read from them; a
 * TIME_WAIT socket may be reported in state FIN_WAIT2, so a socket without
 * an inode is refused whatever its state), -EBADMSG anything
 * malformed, of another sequence number, or describing another socket.
 * Pure.
 */
int publish_diag_parse(const uint8_t *buf, size_t len, uint32_t seq,
                       const struct publish_peer *want, uint32_t *uid);

/*
 * publish_peer_uid — the uid owning the peer's end of connection fd, a TCP
 * socket on host loopback (IPv4 or IPv6): 0 with *uid, -ENOENT (the peer
 * is gone), -EACCES (no owner to read), or -errno. One NETLINK_SOCK_DIAG
 * round trip: the kernel answers within the send.
 */
int publish_peer_uid(int fd, uint32_t *uid);

/* ---- the relay (publish.c) ------------------------------------------------- */

struct publish;
struct audit_emitter;

/*
 * publish_open — listen on the host loopback port of each of the n entries
 * (SO_REUSEADDR, non-blocking) for a run whose caller is `caller`. 0 with
 * *ret (NULL when n is 0), or -errno with err naming the entry ("127.0.0.1:
 * 8080 is in use").
 */
int publish_open(const struct policy_publish *pp, size_t n, uid_t caller, struct publish **ret,
                 struct rf_error *err);

/* publish_free — close every listener and connection. NULL-safe; NULL. */
struct publish *publish_free(struct publish *pub);

/*
 * publish_pollfds — the listeners' and connections' poll entries, written
 * to pfd (PUBLISH_POLLFDS of room); returns how many. publish_serve — act
 * on their revents (the same entries, after poll): accept and vet new
 * connections (asking init over chan), relay the others. ev records
 * (may be NULL). Both NULL-safe.
 */
size_t publish_pollfds(const struct publish *pub, struct pollfd *pfd);
void publish_serve(struct publish *pub, const struct pollfd *pfd, int chan,
                   struct audit_emitter *ev);

/*
 * publish_connected — init's MSG_CONNECTED: fd (owned from here; -1 when
 * m->err says why none) for the connection m->step asked for. A reply for a
 * slot that is not waiting is dropped (fd closed). NULL-safe.
 */
void publish_connected(struct publish *pub, const struct rf_msg *m, int fd);
