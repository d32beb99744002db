/*
 * runca.h — the run CA made without OpenSSL, on a run's start path (trustmake.h).
 *
 * A run with TLS termination needs its CA's certificate in its trust files
 * before its command starts; the egress process, which needs the CA's keys,
 * starts later (at the run's first connection) and loads OpenSSL then. Making
 * the CA with OpenSSL cost the run's start 5–17 ms of CPU (dlopen of
 * libssl/libcrypto, the provider and DRBG set-up, method fetches: docs/TLS.md,
 * "Cost at a run's start"), most of it OpenSSL's own start, not the key or the
 * signature. This makes the same certificate with nettle's P-256 (Debian's
 * nettle, linked statically: no library to load) and writes it as
 * DER itself; the egress process imports it through the module's ca_import
 * (tlsterm.h), which checks the certificate parses and that both keys are
 * pairs. The certificate is the one ca_new makes (tlsterm.h: version 3,
 * 128-bit serial, O=ringfence CN=ringfence run CA, validity from one minute
 * back for the lifetime, basicConstraints CA:TRUE pathlen:0 and keyUsage
 * keyCertSign cRLSign, both critical, subjectKeyIdentifier, and a critical
 * nameConstraints permitting the hosts and excluding every IPv4 and IPv6
 * address), signed ecdsa-with-SHA256; test_tlsterm runs its CA, leaf,
 * server and real-client batteries on both.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tls/trustfmt.h"

/*
 * A run CA for hosts[0, n_hosts) (as ca_new takes them: 1..RF_TLS_MAX_HOSTS
 * names that pass trust_host_valid, else -EINVAL), valid from now - 60 s for
 * lifetime_s seconds (1 s .. 10 years, else -EINVAL), with a second P-256
 * key, the run's leaf key. Writes the CA's export (tlsterm.h,
 * RF_TLS_CA_EXPORT_MAGIC: both private scalars, the leaf key's point, the
 * certificate, the hosts) into export[0, *export_len) (-ENOBUFS if
 * export_max is too small: RF_TLS_CA_EXPORT_MAX always suffices) and the
 * certificate's DER into *der (malloc'ed, *der_len bytes). Randomness from
 * getrandom(2) (-EIO if it fails). The private scalars exist only in
 * nettle's key objects (wiped before they are freed) and in export: the
 * caller wipes export. -ENOMEM.
 */
int runca_new(const char *const *hosts, size_t n_hosts, uint64_t lifetime_s, time_t now,
              unsigned char **der, size_t *der_len, unsigned char *export, size_t export_max,
              size_t *export_len);

/* trustfmt's MAC (trust_mac_fn) with nettle: the PKCS#12 KDF (RFC 7292 B.2,
 * ID 3, SHA-256) and HMAC-SHA256. -EINVAL for an empty or non-ASCII
 * password, a salt over 64 bytes or no iteration. */
int runca_p12_mac(const char *password, const unsigned char *salt, size_t salt_len, unsigned iter,
                  const unsigned char *data, size_t len, unsigned char mac[TRUST_P12_MAC_LEN],
                  void *ctx);

/* The MAC's key alone, for a store whose MAC is made later by whoever
 * puts it together (tls/trustmake.c: init, with shared/hmac.h): the KDF
 * above, which depends on the password and salt alone, so a writer may
 * keep it with the salt. 0 or -errno, as runca_p12_mac. */
int runca_p12_key(const char *password, const unsigned char *salt, size_t salt_len, unsigned iter,
                  unsigned char key[TRUST_P12_MAC_LEN]);
