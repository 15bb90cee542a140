/*
 * kernel.h - helpers every shootout native kernel shares: argument errors,
 * number parsing, the clock of the timed regions, the final stdout check.
 *
 * Before including it, a kernel defines
 *   KERNEL_NAME   its program name, e.g. "intmix" (prefixes every message);
 *   KERNEL_USAGE  its arguments as shown after "usage: KERNEL_NAME ".
 * Bad arguments print one message and the usage line, then exit with 2;
 * runtime failures here exit with 1 (the kernels' documented statuses).
 *
 * build.py copies this file next to the kernel's .c before compiling, and the
 * quoted #include finds it there (the source's own directory comes first).
 */
#ifndef SHOOTOUT_KERNEL_H
#define SHOOTOUT_KERNEL_H

#if !defined(KERNEL_NAME) || !defined(KERNEL_USAGE)
#error "define KERNEL_NAME and KERNEL_USAGE before including kernel.h"
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

__attribute__((noreturn)) static inline void usage(void)
{
    fprintf(stderr, "usage: " KERNEL_NAME " " KERNEL_USAGE "\n");
    exit(2);
}

__attribute__((noreturn, format(printf, 1, 2)))
static inline void kernel_usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    usage();
}

/* usage_error("bad %s '%s'\n", ...): "KERNEL_NAME: " is joined to the literal
 * format at compile time, so the message is still a single write. */
#define usage_error(...) kernel_usage_error(KERNEL_NAME ": " __VA_ARGS__)

/* The decimal number in s (digits only) if it is in lo..hi: sets *out and
 * returns 0; else -1. Callers report a bad value with usage_error. */
static inline int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        unsigned d;

        if (*s < '0' || *s > '9')
            return -1;
        d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The clock of every timed region: the CPU time of this thread, not wall time.
 *
 * On a shared machine (other processes, a hypervisor that steals time) wall time
 * also counts whatever ran while the kernel was preempted. A timed region of a
 * fraction of a second catches a random share of that, so the kernels' own
 * figures were noisier than the wall time of their whole process (ptrtree: 7-8%
 * against 3-4%). The thread's CPU clock counts only the time it ran; with
 * paravirtual steal accounting (CONFIG_PARAVIRT_TIME_ACCOUNTING) stolen time is
 * left out too. The timed loops do no I/O and never sleep, so nothing they
 * really spend is left out. */
static inline double cpu_seconds(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
        perror(KERNEL_NAME ": clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
        exit(1);
    }
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 0 if all results reached stdout; else says why and returns 1 (the exit
 * status), so a full disk or closed pipe is not taken for a result. */
static inline int flush_results(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror(KERNEL_NAME ": writing results to stdout failed");
        return 1;
    }
    return 0;
}

#endif
