/*
 * tls.h — read the server name a TLS client asks for, from the first bytes
 * it sends through a CONNECT tunnel (pure; fuzzed).
 *
 * The ClientHello may be split across TCP segments (the caller feeds what
 * it has so far, from the start) and across TLS records (handshake
 * records, content type 22, are reassembled; any other record type before
 * the ClientHello is complete is "not TLS"). Only a ClientHello
 * (handshake type 1) is accepted; its length is bounded by TLS_HELLO_MAX.
 * The server_name extension (0) must hold exactly one host_name entry
 * (type 0); the name is returned lower-cased without a trailing dot.
 */
#pragma once

#include <stddef.h>

#define TLS_HELLO_MAX (64 * 1024) /* bytes of ClientHello handshake message */
#define TLS_SNI_MAX   255

enum tls_sni_result {
        TLS_NEED_MORE,  /* feed more bytes (up to TLS_HELLO_MAX + record overhead) */
        TLS_SNI_FOUND,  /* sni[] holds the name */
        TLS_SNI_ABSENT, /* a complete ClientHello without server_name */
        TLS_NOT_TLS,    /* not a TLS handshake (plain protocol, garbage) */
        TLS_MALFORMED,  /* a ClientHello that does not parse, or SNI ambiguous */
        _TLS_SNI_MAX,
        _TLS_SNI_INVALID = -22,
};

/*
 * tls_client_hello_sni — look at buf[0..len), the client's first bytes.
 * Pure: call again with more bytes after TLS_NEED_MORE. *why is set for
 * TLS_MALFORMED / TLS_NOT_TLS.
 */
enum tls_sni_result tls_client_hello_sni(const unsigned char *buf, size_t len,
                                         char sni[TLS_SNI_MAX + 1], const char **why);
