/*
 * maxalloc.c - the largest single buffer this process can really get
 * (shootout native kernel).
 *
 * What it measures: the largest anonymous mmap() buffer, in MiB, that can be
 * mapped, locked in memory with mlock() (when this process is allowed to
 * lock that much) and written to on every page, trying sizes no larger than
 * LIMIT_MIB. Sizes are searched by doubling from STEP_MIB (capped at
 * LIMIT_MIB), then by bisection between the largest success and the smallest
 * failure until they are at most STEP_MIB apart. Every attempt is unmapped
 * before the next one.
 *
 * The search runs twice, so that a trial touches memory about once: first
 * over address space alone (PROT_NONE mappings: nothing is committed or
 * touched, each try costs microseconds), then the size it found is mapped,
 * locked and touched for real. Only when that fails (memory, not address
 * space, is short) is the search repeated below it with touching.
 *
 * Why: a 32-bit process has at most about 3-4 GiB of address space, and less
 * in one piece, whatever the machine's memory; the published comparisons saw
 * a 3 GB buffer fail on 32-bit and work on 64-bit. This kernel shows that
 * ceiling directly. It really touches (and locks) what it maps, so the
 * caller must keep LIMIT_MIB well below the free memory: with overcommit, a
 * buffer that cannot be backed is found out only by the OOM killer, unless
 * mlock() (which fails cleanly) is in use.
 *
 * mlock is used when RLIMIT_MEMLOCK allows LIMIT_MIB or the process has
 * CAP_IPC_LOCK (for example root); then a failing mlock() counts as a
 * failed size. Without it the buffer is only touched.
 *
 * Usage:  maxalloc LIMIT_MIB [STEP_MIB]   (LIMIT_MIB >= 1, STEP_MIB >= 1,
 *                                          default 64, capped at LIMIT_MIB)
 * Output: max_mib, limit_mib, step_mib, attempts (touched buffers),
 *         probes (address-space tries), mlocked (1|0).
 * Exit status: 0 success, 1 runtime failure (including: not even STEP_MIB
 *              could be allocated), 2 bad arguments.
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
#include <sys/resource.h>
#include <unistd.h>

#define KERNEL_NAME "maxalloc"
#define KERNEL_USAGE "LIMIT_MIB [STEP_MIB]   " \
                     "(LIMIT_MIB: >= 1, STEP_MIB: >= 1, default 64)"
#include "kernel.h"

#define CAP_IPC_LOCK_BIT 14

static unsigned g_attempts, g_probes;

/* Whether CAP_IPC_LOCK is in the effective set (Linux /proc). */
static int has_cap_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps;
    int found = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "CapEff: %llx", &caps) == 1) {
            found = (caps >> CAP_IPC_LOCK_BIT) & 1;
            break;
        }
    }
    fclose(f);
    return found;
}

static int mlock_permitted(uint64_t limit_mib)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
        if (rl.rlim_cur == RLIM_INFINITY)
            return 1;
        if ((uint64_t)rl.rlim_cur >> 20 >= limit_mib)
            return 1;
    }
    return has_cap_ipc_lock();
}

/* 1 if a buffer of mib MiB could be mapped, locked (if asked) and touched. */
static int try_size(uint64_t mib, int use_mlock, size_t page)
{
    size_t bytes, off;
    volatile unsigned char *c;
    void *p;

    g_attempts++;
    if (mib > (uint64_t)(SIZE_MAX >> 20)) {
        fprintf(stderr, "maxalloc: %" PRIu64 " MiB: larger than the address "
                        "space\n", mib);
        return 0;
    }
    bytes = (size_t)mib << 20;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "maxalloc: %" PRIu64 " MiB: mmap failed: %s\n", mib,
                strerror(errno));
        return 0;
    }
    if (use_mlock && mlock(p, bytes) != 0) {
        fprintf(stderr, "maxalloc: %" PRIu64 " MiB: mlock failed: %s\n", mib,
                strerror(errno));
        munmap(p, bytes);
        return 0;
    }
    c = p;
    for (off = 0; off < bytes; off += page)
        c[off] = (unsigned char)(off >> 12);
    if (use_mlock)
        munlock(p, bytes);
    munmap(p, bytes);
    fprintf(stderr, "maxalloc: %" PRIu64 " MiB: ok\n", mib);
    return 1;
}

/* 1 if mib MiB of address space can be had in one piece: a PROT_NONE
 * mapping commits and touches nothing. */
static int fits(uint64_t mib, int use_mlock, size_t page)
{
    size_t bytes;
    void *p;

    (void)use_mlock;
    (void)page;
    g_probes++;
    if (mib > (uint64_t)(SIZE_MAX >> 20))
        return 0;
    bytes = (size_t)mib << 20;
    p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    if (p == MAP_FAILED)
        return 0;
    munmap(p, bytes);
    return 1;
}

typedef int (*attempt_fn)(uint64_t mib, int use_mlock, size_t page);

/* The largest size <= limit that attempt() accepts, to within step: doubling
 * from step (capped at limit), then bisection. 0 when not even step works. */
static uint64_t search(uint64_t limit, uint64_t step, attempt_fn attempt,
                       int use_mlock, size_t page)
{
    uint64_t size = step, good = 0, bad = 0;

    for (;;) {
        if (!attempt(size, use_mlock, page)) {
            bad = size;
            break;
        }
        good = size;
        if (size == limit)
            break;
        size = size * 2 > limit ? limit : size * 2;
    }
    while (bad != 0 && bad - good > step) {
        uint64_t mid = good + (bad - good) / 2 / step * step;

        if (mid == good)
            mid = good + step;
        if (attempt(mid, use_mlock, page))
            good = mid;
        else
            bad = mid;
    }
    return good;
}

int main(int argc, char **argv)
{
    uint64_t limit, step = 64, good;
    long page_l;
    size_t page;
    int use_mlock;

    if (argc != 2 && argc != 3)
        usage();
    if (parse_u64(argv[1], 1, UINT64_MAX >> 21, &limit) != 0)
        usage_error("bad LIMIT_MIB '%s'\n", argv[1]);
    if (argc == 3 && parse_u64(argv[2], 1, UINT64_MAX >> 21, &step) != 0)
        usage_error("bad STEP_MIB '%s'\n", argv[2]);
    if (step > limit)
        step = limit;

    page_l = sysconf(_SC_PAGESIZE);
    page = page_l > 0 ? (size_t)page_l : 4096;
    use_mlock = mlock_permitted(limit);

    /* Address space first (cheap), then the size it allows for real; below
     * it with touching only when memory, not address space, is short. */
    good = search(limit, step, fits, use_mlock, page);
    if (good != 0 && !try_size(good, use_mlock, page))
        good = good > step ? search(good - step, step, try_size, use_mlock, page)
                           : 0;

    if (good == 0) {
        fprintf(stderr, "maxalloc: could not allocate even %" PRIu64 " MiB\n",
                step);
        return 1;
    }
    printf("max_mib %" PRIu64 "\n", good);
    printf("limit_mib %" PRIu64 "\n", limit);
    printf("step_mib %" PRIu64 "\n", step);
    printf("attempts %u\n", g_attempts);
    printf("probes %u\n", g_probes);
    printf("mlocked %d\n", use_mlock);
    if (flush_results() != 0)
        return 1;
    return 0;
}
