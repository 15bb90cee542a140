/*
 * membw.c - main-memory bandwidth of a locked buffer (shootout native kernel).
 *
 * What it measures: for a buffer of SIZE_MIB MiB that is mlock()ed (so it is
 * resident and cannot be swapped or reclaimed while measured), the best of
 * REPS repetitions of four passes, each in MB/s (MB = 10^6 bytes):
 *   write - a plain C loop storing a 64-bit pattern into every uint64_t word;
 *   read  - a plain C loop summing every uint64_t word;
 *   copy  - memcpy() of the whole buffer into a second buffer of equal size;
 *   fill  - memset() of the whole buffer.
 * The write and read loops are compiled code, so they show how well each ABI
 * moves 64-bit words (a 32-bit build without vector registers needs two
 * 32-bit accesses per word); copy and fill show the C library's routines.
 *
 * Why: the published 32- vs 64-bit comparisons allocate a big buffer,
 * mlock() it, write it and read it back (and run mbw, which times memcpy).
 * Two buffers of SIZE_MIB are needed for copy, which also shows the 32-bit
 * address-space ceiling: 2 x 2048 MiB cannot be mapped in a 32-bit process.
 *
 * Copy bandwidth counts the bytes copied once (SIZE bytes per pass), like mbw
 * does, not read plus written (which would be 2 x SIZE).
 *
 * Passes are timed in CPU time (cpu_seconds in kernel.h).
 *
 * Buffers that fit in a cache are too quick to time one pass at a time, so
 * below INNER_BYTES each timed interval repeats its pass INNER times (at
 * least INNER_BYTES moved per interval); rates count every repetition.
 *
 * Usage:  membw SIZE_MIB REPS [--no-mlock] [--kib]
 *         (SIZE_MIB >= 1, in KiB with --kib; REPS 1..1000000)
 * Output: size_mib (size_kib with --kib), reps, inner, mlocked (1|0),
 *         write_mbps, read_mbps, copy_mbps, fill_mbps, checksum (depends
 *         only on the size and REPS).
 * Exit status: 0 success, 1 runtime failure (mapping or mlock failed, ...),
 *              2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KERNEL_NAME "membw"
#define KERNEL_USAGE "SIZE_MIB REPS [--no-mlock] [--kib]   " \
                     "(SIZE_MIB: >= 1, in KiB with --kib; REPS: 1..1000000)"
#include "kernel.h"

#define INNER_BYTES ((size_t)32 << 20)
/* Repeated passes over the same buffer look redundant to the compiler (read_words
 * is pure, a second identical memset is dead): a memory clobber keeps each one. */
#define BARRIER() __asm__ __volatile__("" : : : "memory")

static volatile uint64_t g_sink;
static const char *g_unit = "MiB";  /* how sizes are shown: MiB, or KiB with --kib */

/* The buffers come from mmap(), so the compiler must assume other code can
 * see them: these stores cannot be dropped. */
NOINLINE static void write_words(uint64_t *p, size_t n, uint64_t v)
{
    size_t i;

    for (i = 0; i < n; i++)
        p[i] = v;
}

/* n is a multiple of 4; four sums so the loop is not one long add chain. */
NOINLINE static uint64_t read_words(const uint64_t *p, size_t n)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i;

    for (i = 0; i < n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    return s0 + s1 + s2 + s3;
}

static uint64_t *map_buffer(uint64_t size, unsigned shift, const char *what)
{
    void *p;

    if (size > (uint64_t)(SIZE_MAX >> shift)) {
        fprintf(stderr, "membw: %s buffer of %" PRIu64 " %s does not fit "
                        "this process's address space\n", what, size, g_unit);
        exit(1);
    }
    p = mmap(NULL, (size_t)size << shift, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "membw: mmap of %s buffer of %" PRIu64 " %s failed: "
                        "%s\n", what, size, g_unit, strerror(errno));
        exit(1);
    }
    return p;
}

static void lock_buffer(void *p, uint64_t size, unsigned shift)
{
    if (mlock(p, (size_t)size << shift) != 0) {
        fprintf(stderr, "membw: mlock of %" PRIu64 " %s failed: %s; raise "
                        "RLIMIT_MEMLOCK (ulimit -l) or run as root, or pass "
                        "--no-mlock\n", size, g_unit, strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    uint64_t size_mib = 0, reps = 0, rep, seed = 0x6d656d6277ull, check = 0;
    uint64_t *a, *b;
    size_t bytes, n, inner, j;
    unsigned shift = 20;
    int use_mlock = 1, npos = 0, i;
    double best[4] = {0, 0, 0, 0}, mbps[4];

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-mlock") == 0) {
            use_mlock = 0;
        } else if (strcmp(argv[i], "--kib") == 0) {
            shift = 10;
            g_unit = "KiB";
        } else if (argv[i][0] == '-') {
            usage_error("unknown option '%s'\n", argv[i]);
        } else if (npos == 0) {
            if (parse_u64(argv[i], 1, UINT64_MAX >> 20 << 10, &size_mib) != 0)
                usage_error("bad SIZE_MIB '%s'\n", argv[i]);
            npos++;
        } else if (npos == 1) {
            if (parse_u64(argv[i], 1, 1000000, &reps) != 0)
                usage_error("bad REPS '%s'\n", argv[i]);
            npos++;
        } else {
            usage_error("too many arguments\n");
        }
    }
    if (npos != 2)
        usage();
    if (shift == 20 && size_mib > UINT64_MAX >> 20)
        usage_error("bad SIZE_MIB '%" PRIu64 "'\n", size_mib);

    a = map_buffer(size_mib, shift, "first");
    b = map_buffer(size_mib, shift, "second");
    bytes = (size_t)size_mib << shift;
    n = bytes / sizeof(uint64_t);
    inner = bytes >= INNER_BYTES ? 1 : (INNER_BYTES + bytes - 1) / bytes;
    if (use_mlock) {
        lock_buffer(a, size_mib, shift);   /* mlock also faults every page in */
        lock_buffer(b, size_mib, shift);
    } else {
        memset(a, 1, bytes);        /* fault pages in before timing */
        memset(b, 1, bytes);
    }

    for (rep = 0; rep < reps; rep++) {
        uint64_t v = splitmix64(&seed), sum;
        int fill = (int)(v >> 56) | 1;
        double t[5], d;
        int k;

        t[0] = cpu_seconds();
        for (j = 0; j < inner; j++) {
            BARRIER();
            write_words(a, n, v);
        }
        t[1] = cpu_seconds();
        for (j = 0, sum = 0; j < inner; j++) {
            BARRIER();
            sum = read_words(a, n);
        }
        t[2] = cpu_seconds();
        for (j = 0; j < inner; j++) {
            BARRIER();
            memcpy(b, a, bytes);
        }
        t[3] = cpu_seconds();
        for (j = 0; j < inner; j++) {
            BARRIER();
            memset(a, fill, bytes);
        }
        t[4] = cpu_seconds();

        if (sum != v * (uint64_t)n || b[n - 1] != v
            || ((const unsigned char *)a)[bytes - 1] != (unsigned char)fill) {
            fprintf(stderr, "membw: internal error: buffer contents wrong "
                            "in repetition %" PRIu64 "\n", rep + 1);
            return 1;
        }
        g_sink = sum;
        check = check * 31u + sum + b[n / 2] + a[n / 3];
        for (k = 0; k < 4; k++) {
            d = t[k + 1] - t[k];
            if (rep == 0 || d < best[k])
                best[k] = d;
        }
    }
    for (i = 0; i < 4; i++) {
        if (!(best[i] > 0.0)) {
            fprintf(stderr, "membw: measured time is not positive; "
                            "increase SIZE_MIB\n");
            return 1;
        }
        mbps[i] = (double)bytes * (double)inner / 1e6 / best[i];
    }

    if (use_mlock) {
        munlock(a, bytes);
        munlock(b, bytes);
    }
    munmap(a, bytes);
    munmap(b, bytes);

    printf("%s %" PRIu64 "\n", shift == 10 ? "size_kib" : "size_mib", size_mib);
    printf("reps %" PRIu64 "\n", reps);
    printf("inner %zu\n", inner);
    printf("mlocked %d\n", use_mlock);
    printf("write_mbps %.9g\n", mbps[0]);
    printf("read_mbps %.9g\n", mbps[1]);
    printf("copy_mbps %.9g\n", mbps[2]);
    printf("fill_mbps %.9g\n", mbps[3]);
    /* 52 bits, so the value survives a round trip through a double. */
    printf("checksum %" PRIu64 "\n", check & (((uint64_t)1 << 52) - 1));
    if (flush_results() != 0)
        return 1;
    return 0;
}
