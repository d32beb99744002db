/* PLACEHOLDER (uncommitted): being implemented. */
#include "landlock.h"
int landlock_plan(struct rf_plan *p, struct rf_error *err)
{
        return 0;
}
int landlock_apply(const struct rf_plan *p)
{
        return 0;
}
