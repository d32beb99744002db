/*
 * hostname.c — a credential file's host as an injection binds it
 * (hostname.h). Pure.
 */
#include "shared/hostname.h"

bool hostname_port(const char *s, size_t n, size_t max, char *out)
{
        bool port = false, named = false;
        if (n == 0 || n > max)
                return false;
        for (size_t k = 0; k < n; k++) {
                char c = s[k];
                bool digit = c >= '0' && c <= '9',
                     alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
                if (c == ':' && !port && k > 0 && k + 1 < n) {
                        port = true;
                        continue;
                }
                if (!(port ? digit : alpha || digit || c == '.' || c == '-'))
                        return false;
                named |= !port && (alpha || c == '-');
        }
        if (!named)
                return false;
        for (size_t k = 0; k < n; k++)
                out[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k]);
        out[n] = '\0';
        return true;
}
