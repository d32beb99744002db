/*
 * hostname.h — a host as a credential file names it (an .npmrc registry, a
 * pip.conf index), for an injection bound to it: a DNS name with an
 * optional port. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * hostname_port — s[0..n) as NAME[:PORT]: NAME of letters, digits, '.'
 * and '-' with at least one letter or '-' (an IPv4 literal has no name to
 * issue a certificate for), PORT of digits; at most max bytes. On success
 * true, with it lower-cased into out (n + 1 bytes, NUL-terminated).
 */
bool hostname_port(const char *s, size_t n, size_t max, char *out);
