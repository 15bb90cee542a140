/*
 * membw.c - main-memory bandwidth of a locked buffer (shootout native kernel).
 *
 * What it measures: for a buffer of SIZE_MIB MiB that is mlock()ed (so it is
 * resident and cannot be swapped or reclaimed while measured), the best of
 * REPS repetitions of five passes, each in MB/s (MB = 10^6 bytes):
 *   write     - a plain C loop storing a 64-bit pattern into every uint64_t word;
 *   read      - a plain C loop summing every uint64_t word;
 *   copy      - memcpy() of the whole buffer into a second buffer of equal size;
 *   fill      - memset() of the whole buffer;
 *   writeread - write then read back, timed together: the articles' RAM test.
 *               Its rate counts the bytes written plus the bytes read.
 * The write and read loops are compiled code, so they show how well each ABI
 * moves 64-bit words (a 32-bit build without vector registers needs two
 * 32-bit accesses per word); copy and fill show the C library's routines,
 * whose strategy may differ between two C libraries for the same size.
 *
 * --paths adds one probe after the measurement: does memcpy (and memset) of
 * this size leave its destination in the cache, or bypass it (non-temporal
 * stores, as glibc uses above a size it derives from the cache sizes)?  It
 * prints the latency of dependent loads in random order over the last
 * PROBE_BYTES of the destination right after the call (copy_dst_ns,
 * fill_dst_ns), against two references over regions of the same size: one
 * just written by the C loop (warm_ns: in the cache) and the first bytes of
 * the destination (cold_ns: evicted by the rest of the pass); medians of
 * PROBE_REPS calls, and in how many calls the destination was bypassed
 * (copy_bypass_reps, fill_bypass_reps of probe_valid_reps).
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
 * Usage:  membw SIZE_MIB REPS [--no-mlock] [--kib] [--paths]
 *         (SIZE_MIB >= 1, in KiB with --kib; REPS 1..1000000)
 * Output: size_mib (size_kib with --kib), reps, inner, mlocked (1|0),
 *         write_mbps, read_mbps, copy_mbps, fill_mbps, writeread_mbps,
 *         checksum (depends only on the size and REPS); with --paths also
 *         probe_reps, probe_valid_reps, copy_bypass_reps, fill_bypass_reps,
 *         warm_ns, cold_ns, copy_dst_ns, fill_dst_ns.
 * Exit status: 0 success, 1 runtime failure (mapping or mlock failed, ...),
 *              2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KERNEL_NAME "membw"
#define KERNEL_USAGE "SIZE_MIB REPS [--no-mlock] [--kib] [--paths]   " \
                     "(SIZE_MIB: >= 1, in KiB with --kib; REPS: 1..1000000)"
#include "kernel.h"

#define INNER_BYTES ((size_t)32 << 20)
#define PROBE_BYTES ((size_t)256 << 10)  /* fits every L2; small against any L3 */
#define PROBE_LINE 64
#define NPASS 5
#define PROBE_REPS 7
/* Repeated passes over the same buffer look redundant to the compiler (read_words
 * is pure, a second identical memset is dead): a memory clobber keeps each one. */
#define BARRIER() __asm__ __volatile__("" : : : "memory")

static volatile uint64_t g_sink;
static volatile size_t g_zero;  /* 0, but the compiler must read it */
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

/* Nanoseconds per load over the PROBE_BYTES at region, one byte per cache line in the
 * order of perm; each address depends on the previous load (x & zero is 0, but the
 * compiler cannot know), so the loads cannot overlap and their latency shows. */
NOINLINE static double chase_ns(const unsigned char *region, const uint32_t *perm, size_t lines)
{
    size_t i, x = 0, zero = g_zero;
    double t0, t1;

    t0 = cpu_seconds();
    for (i = 0; i < lines; i++)
        x = region[perm[i] + (x & zero)];
    t1 = cpu_seconds();
    g_sink += x;
    return (t1 - t0) * 1e9 / (double)lines;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The probe of --paths (see the header comment); a and b are the measured buffers.
 * PROBE_REPS calls of each routine: each call's destination counts as bypassed when
 * its latency is nearer cold_ns than warm_ns on a log scale (above their geometric
 * mean); a repetition whose references do not separate (cold < 2 x warm) is not counted. */
static void probe_paths(uint64_t *a, uint64_t *b, size_t bytes)
{
    size_t lines = PROBE_BYTES / PROBE_LINE, i;
    uint64_t seed = 0x7061746873ull;
    uint32_t *perm = malloc(lines * sizeof *perm);
    unsigned char *tail_a = (unsigned char *)a + bytes - PROBE_BYTES;
    unsigned char *tail_b = (unsigned char *)b + bytes - PROBE_BYTES;
    double warm[PROBE_REPS], cold[PROBE_REPS], copy[PROBE_REPS], fill[PROBE_REPS];
    int r, valid = 0, copy_bypass = 0, fill_bypass = 0;

    if (perm == NULL || bytes < 2 * PROBE_BYTES) {
        fprintf(stderr, "membw: --paths needs a buffer of at least %zu KiB\n", 2 * PROBE_BYTES >> 10);
        exit(1);
    }
    for (i = 0; i < lines; i++)
        perm[i] = (uint32_t)(i * PROBE_LINE);
    for (i = lines - 1; i > 0; i--) {   /* Fisher-Yates: no pattern for the prefetcher */
        size_t j = (size_t)(splitmix64(&seed) % (i + 1));
        uint32_t t = perm[i];

        perm[i] = perm[j];
        perm[j] = t;
    }
    for (r = 0; r < PROBE_REPS; r++) {
        double mid;

        memcpy(b, a, bytes);
        copy[r] = chase_ns(tail_b, perm, lines);
        cold[r] = chase_ns((unsigned char *)b, perm, lines);
        memset(b, 3 + r, bytes);
        fill[r] = chase_ns(tail_b, perm, lines);
        write_words((uint64_t *)tail_a, PROBE_BYTES / sizeof(uint64_t), splitmix64(&seed));
        warm[r] = chase_ns(tail_a, perm, lines);
        if (cold[r] < 2 * warm[r])
            continue;
        mid = sqrt(warm[r] * cold[r]);
        valid++;
        copy_bypass += copy[r] > mid;
        fill_bypass += fill[r] > mid;
    }
    free(perm);
    printf("probe_reps %d\nprobe_valid_reps %d\ncopy_bypass_reps %d\nfill_bypass_reps %d\n",
           PROBE_REPS, valid, copy_bypass, fill_bypass);
    printf("warm_ns %.4g\ncold_ns %.4g\ncopy_dst_ns %.4g\nfill_dst_ns %.4g\n", median(warm, PROBE_REPS),
           median(cold, PROBE_REPS), median(copy, PROBE_REPS), median(fill, PROBE_REPS));
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
    int use_mlock = 1, paths = 0, npos = 0, i;
    /* write, read, copy, fill, writeread; writeread moves twice the bytes */
    double best[NPASS] = {0}, mbps[NPASS], moved[NPASS] = {1, 1, 1, 1, 2};

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-mlock") == 0) {
            use_mlock = 0;
        } else if (strcmp(argv[i], "--paths") == 0) {
            paths = 1;
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
        uint64_t v = splitmix64(&seed), sum, sum2 = 0;
        int fill = (int)(v >> 56) | 1;
        double t[NPASS + 1], d;
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
        for (j = 0; j < inner; j++) {
            BARRIER();
            write_words(b, n, ~v);
            BARRIER();
            sum2 = read_words(b, n);
        }
        t[5] = cpu_seconds();

        if (sum != v * (uint64_t)n || sum2 != ~v * (uint64_t)n || b[n - 1] != ~v
            || ((const unsigned char *)a)[bytes - 1] != (unsigned char)fill) {
            fprintf(stderr, "membw: internal error: buffer contents wrong "
                            "in repetition %" PRIu64 "\n", rep + 1);
            return 1;
        }
        g_sink = sum;
        check = check * 31u + sum + sum2 + b[n / 2] + a[n / 3];
        for (k = 0; k < NPASS; k++) {
            d = t[k + 1] - t[k];
            if (rep == 0 || d < best[k])
                best[k] = d;
        }
    }
    for (i = 0; i < NPASS; i++) {
        if (!(best[i] > 0.0)) {
            fprintf(stderr, "membw: measured time is not positive; "
                            "increase SIZE_MIB\n");
            return 1;
        }
        mbps[i] = moved[i] * (double)bytes * (double)inner / 1e6 / best[i];
    }
    if (paths)
        probe_paths(a, b, bytes);

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
    printf("writeread_mbps %.9g\n", mbps[4]);
    /* 52 bits, so the value survives a round trip through a double. */
    printf("checksum %" PRIu64 "\n", check & (((uint64_t)1 << 52) - 1));
    if (flush_results() != 0)
        return 1;
    return 0;
}
