/*
 * memlat.c - random dependent-load latency (shootout native kernel).
 *
 * What it measures: the average time of one load when every load depends on
 * the previous one (p = *p), over a buffer of SIZE_KIB KiB visited in a
 * random cyclic order, so neither the prefetcher nor out-of-order execution
 * can overlap the loads. Small buffers give cache latency, large ones DRAM
 * latency plus TLB misses.
 *
 * Why: this is the cost that pointer-heavy code pays per hop. The chased
 * values are real native pointers (void *), as in real code, not indices.
 * Huge pages change the TLB part of the cost a great deal, and the default
 * transparent-huge-page policy differs between systems, so --thp/--no-thp
 * ask for one explicitly with madvise() on a 2 MiB-aligned buffer.
 *
 * Layout: the buffer is an array of 8-byte slots on every ABI; each slot
 * starts with a native pointer (4 bytes of it unused on 32-bit ABIs). So a
 * given SIZE_KIB has the same number of slots, the same cycle and the same
 * cache footprint on 32- and 64-bit builds, and the checksum is identical
 * on both.
 * The cycle is one random cyclic permutation of all slots (Sattolo's
 * algorithm, fixed-seed splitmix64). Before timing, min(LOADS, slots) loads
 * are done untimed to warm caches and TLBs; the timed loads continue along
 * the cycle from there. The checksum is the slot index reached at the end
 * plus LOADS.
 *
 * Usage:  memlat SIZE_KIB LOADS [--thp|--no-thp]
 *         (SIZE_KIB 1..33554431, LOADS >= 1)
 * Output: size_kib, loads, seconds (CPU time of the timed loads, see
 *         cpu_seconds in kernel.h), ns_per_load, checksum;
 *         thp_advice_ok (1|0, whether madvise accepted the advice) only with
 *         --thp or --no-thp; anon_huge_kib (huge-page-backed KiB of the
 *         buffer, from /proc/self/smaps) only when that file is readable.
 * Exit status: 0 success, 1 runtime failure, 2 bad arguments.
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

#define KERNEL_NAME "memlat"
#define KERNEL_USAGE "SIZE_KIB LOADS [--thp|--no-thp]   " \
                     "(SIZE_KIB: 1..33554431, LOADS: >= 1)"
#include "kernel.h"

#define SLOT_BYTES 8u
#define ALIGN_2M ((size_t)2 << 20)

union slot {
    void *next;
    uint64_t pad;   /* makes every slot 8 bytes on every ABI */
};

enum thp_mode { THP_DEFAULT, THP_ON, THP_OFF };

static void *volatile g_sink;

/* Sum of AnonHugePages over the smaps entries that overlap [lo, hi), in
 * KiB; -1 if /proc/self/smaps cannot be read. */
static long anon_huge_kib(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    long total = 0;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long start, end;
        char perms[8];
        long kib;

        /* Mapping lines: "start-end perms offset dev inode [path]";
         * field lines: "Name:   value kB". */
        if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) == 3) {
            inside = start < (unsigned long long)hi
                  && end > (unsigned long long)lo;
        } else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) {
            total += kib;
        }
    }
    fclose(f);
    return total;
}

int main(int argc, char **argv)
{
    uint64_t size_kib = 0, loads = 0, k, warm, seed = 0x6d656d6c6174ull;
    enum thp_mode thp = THP_DEFAULT;
    int npos = 0, i, advice_ok = 0;
    size_t bytes, nslots, map_bytes, s;
    char *map, *base;
    union slot *slots;
    void *p;
    double t0, t1, secs;
    long huge_kib;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--thp") == 0 || strcmp(argv[i], "--no-thp") == 0) {
            enum thp_mode m = argv[i][2] == 't' ? THP_ON : THP_OFF;

            if (thp != THP_DEFAULT && thp != m)
                usage_error("--thp and --no-thp exclude each other\n");
            thp = m;
        } else if (argv[i][0] == '-') {
            usage_error("unknown option '%s'\n", argv[i]);
        } else if (npos == 0) {
            /* Slot indices must fit in 32 bits: below 2^32 slots. */
            if (parse_u64(argv[i], 1, (UINT64_C(1) << 25) - 1, &size_kib) != 0)
                usage_error("bad SIZE_KIB '%s'\n", argv[i]);
            npos++;
        } else if (npos == 1) {
            if (parse_u64(argv[i], 1, UINT64_MAX, &loads) != 0)
                usage_error("bad LOADS '%s'\n", argv[i]);
            npos++;
        } else {
            usage_error("too many arguments\n");
        }
    }
    if (npos != 2)
        usage();

    if (size_kib > (uint64_t)((SIZE_MAX - ALIGN_2M) >> 10)) {
        fprintf(stderr, "memlat: buffer of %" PRIu64 " KiB does not fit this "
                        "process's address space\n", size_kib);
        return 1;
    }
    bytes = (size_t)size_kib << 10;
    nslots = bytes / SLOT_BYTES;
    if (nslots < 2) {
        fprintf(stderr, "memlat: buffer too small for a cycle\n");
        return 1;
    }

    /* Over-allocate by 2 MiB so the buffer can start on a 2 MiB boundary,
     * where a huge page could back it. */
    map_bytes = bytes + ALIGN_2M;
    map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        fprintf(stderr, "memlat: mmap of %zu bytes failed: %s\n", map_bytes,
                strerror(errno));
        return 1;
    }
    base = (char *)(((uintptr_t)map + ALIGN_2M - 1) & ~(uintptr_t)(ALIGN_2M - 1));
    slots = (union slot *)(void *)base;

    if (thp != THP_DEFAULT) {
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
        int advice = thp == THP_ON ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;

        if (madvise(base, bytes, advice) == 0) {
            advice_ok = 1;
        } else if (errno != EINVAL) {
            fprintf(stderr, "memlat: madvise(%s) failed: %s\n",
                    thp == THP_ON ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
                    strerror(errno));
            return 1;
        } else {
            fprintf(stderr, "memlat: madvise(%s) not supported (EINVAL); "
                            "using the system default\n",
                    thp == THP_ON ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE");
        }
#else
        fprintf(stderr, "memlat: this system has no MADV_HUGEPAGE; "
                        "using the system default\n");
#endif
    }

    /* Sattolo: start with every slot pointing at itself, then swap the
     * pointers; the result is a single cycle through all slots. */
    for (s = 0; s < nslots; s++)
        slots[s].next = &slots[s];
    for (s = nslots - 1; s > 0; s--) {
        uint32_t r = (uint32_t)(splitmix64(&seed) >> 32);
        size_t j = (size_t)(((uint64_t)r * (uint64_t)s) >> 32);   /* 0..s-1 */
        void *tmp = slots[s].next;

        slots[s].next = slots[j].next;
        slots[j].next = tmp;
    }

    p = &slots[0];
    warm = loads < (uint64_t)nslots ? loads : (uint64_t)nslots;
    for (k = 0; k < warm; k++)
        p = *(void **)p;
    g_sink = p;

    /* Go on from where the warm-up stopped: when LOADS < slots the timed
     * loads visit slots the warm-up did not, so a large buffer is not
     * measured as if it were cached. */
    t0 = cpu_seconds();
    for (k = loads / 8; k > 0; k--) {
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
        p = *(void **)p;
    }
    for (k = loads % 8; k > 0; k--)
        p = *(void **)p;
    t1 = cpu_seconds();
    g_sink = p;
    secs = t1 - t0;
    if (!(secs > 0.0)) {
        fprintf(stderr, "memlat: measured time is not positive; "
                        "increase LOADS\n");
        return 1;
    }

    huge_kib = anon_huge_kib((uintptr_t)base, (uintptr_t)base + bytes);

    printf("size_kib %" PRIu64 "\n", size_kib);
    printf("loads %" PRIu64 "\n", loads);
    printf("seconds %.9g\n", secs);
    printf("ns_per_load %.9g\n", secs * 1e9 / (double)loads);
    if (thp != THP_DEFAULT)
        printf("thp_advice_ok %d\n", advice_ok);
    if (huge_kib >= 0)
        printf("anon_huge_kib %ld\n", huge_kib);
    printf("checksum %" PRIu64 "\n",
           (uint64_t)(((char *)p - base) / SLOT_BYTES) + loads);
    if (flush_results() != 0)
        return 1;
    munmap(map, map_bytes);
    return 0;
}
