/*
 * timespec.c: deadline arithmetic on struct timespec for the modules that
 * wait on condition variables with a timeout. Pure: the caller reads the
 * clock.
 */
#include "dra/base.h"

void dra_timespec_add_ms(struct timespec *ts, int64_t ms)
{
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}
