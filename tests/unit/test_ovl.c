/*
 * test_ovl.c — an overlay mount's layers from its mountinfo super options
 * (src/sandbox/ovl-parse.c): the upper layer first, the lower ones in
 * order, escapes decoded, and every refusal: no lower layer, data-only
 * layers, metacopy, relative or unclean paths, bad escapes, the bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/ovl.h"
#include "tap.h"

static struct ovl_layers *l;

static int parse(const char *s)
{
        return ovl_parse_super(s, strlen(s), l);
}

int main(void)
{
        l = malloc(sizeof *l);
        if (!l)
                abort();

        is_int(parse("rw,lowerdir=/s/l/A:/s/l/B,upperdir=/s/u/diff,workdir=/s/u/work,uuid=on"), 0,
               "Podman's overlay: parsed");
        ok(l->n == 3 && l->has_upper, "... three layers, one upper");
        is_str(l->path[0], "/s/u/diff", "... the upper layer first");
        is_str(l->path[1], "/s/l/A", "... then the lower ones in order");
        is_str(l->path[2], "/s/l/B", "...");

        is_int(parse("ro,lowerdir=/a:/b"), 0, "no upper layer: parsed");
        ok(l->n == 2 && !l->has_upper, "... the two lower layers");
        is_int(parse("rw,lowerdir+=/a,lowerdir+=/b,upperdir=/u,workdir=/w"), 0,
               "one lowerdir+ per layer (newer kernels): parsed");
        ok(l->n == 3 && !strcmp(l->path[2], "/b"), "... in order");

        is_int(parse("rw,lowerdir=/with\\054comma\\040space:/col\\:on,upperdir=/u"), 0,
               "escapes: parsed");
        is_str(l->path[1], "/with,comma space", "... octal escapes decoded");
        is_str(l->path[2], "/col:on", "... an escaped ':' kept in the path");

        is_int(parse("rw,upperdir=/u,workdir=/w"), -EINVAL, "no lower layer: refused");
        is_int(parse("rw,lowerdir=/a::/data"), -EOPNOTSUPP, "data-only layers: refused");
        is_int(parse("rw,lowerdir=/a:/b,datadir+=/d"), -EOPNOTSUPP, "datadir+: refused");
        is_int(parse("rw,lowerdir=/a:/b,metacopy=on"), -EOPNOTSUPP, "metacopy: refused");
        is_int(parse("rw,lowerdir=/a:/b,verity=on"), -EOPNOTSUPP, "verity: refused");
        is_int(parse("rw,lowerdir=/a:/b,verity=off"), 0, "verity=off: taken");
        is_int(parse("rw,lowerdir=/a:/b,verity=n"), -EOPNOTSUPP,
               "verity=n (shorter than off): refused, read within bounds");
        is_int(parse("rw,lowerdir=/a:/b,verity=offx"), -EOPNOTSUPP, "verity=offx: refused");
        is_int(parse("rw,lowerdir=l/A:l/B"), -EINVAL, "relative layers: refused");
        is_int(parse("rw,lowerdir=/a/../etc:/b"), -EINVAL, "a '..' component: refused");
        is_int(parse("rw,lowerdir=/a/./b"), -EINVAL, "a '.' component: refused");
        is_int(parse("rw,lowerdir=/a:"), -EINVAL, "a trailing ':': refused");
        is_int(parse("rw,lowerdir=/a\\9"), -EINVAL, "a bad escape: refused");
        is_int(parse("rw,lowerdir=/a\\000"), -EINVAL, "an escaped NUL: refused");
        is_int(parse("rw,lowerdir=/a,lowerdir=/b"), -EINVAL, "two lowerdir lists: refused");
        is_int(parse("rw,lowerdir=/a,upperdir=/u,upperdir=/v"), -EINVAL, "two upperdirs: refused");

        char *big = malloc(OVL_SUPER_MAX + 16);
        if (!big)
                abort();
        memset(big, 'a', OVL_SUPER_MAX + 8);
        memcpy(big, "lowerdir=/", 10);
        big[OVL_SUPER_MAX + 8] = '\0';
        is_int(parse(big), -E2BIG, "super options past the bound: refused");
        size_t o = (size_t)sprintf(big, "lowerdir=");
        for (int i = 0; i <= OVL_LAYERS_MAX; i++)
                o += (size_t)sprintf(big + o, "%s/l%d", i ? ":" : "", i);
        is_int(parse(big), -E2BIG, "more layers than the bound: refused");
        memset(big, 'a', OVL_PATH_MAX + 16);
        memcpy(big, "lowerdir=/", 10);
        big[OVL_PATH_MAX + 16] = '\0';
        is_int(parse(big), -E2BIG, "a path past the bound: refused");
        free(big);
        free(l);
        return done();
}
