/*
 * tabs.c - switching between browser-like tabs under memory pressure
 * (shootout native kernel, workload `tabs`).
 *
 * What it measures: a driver process opens TABS worker processes ("tabs"),
 * one after the other; each maps TAB_MIB MiB of anonymous memory and fills
 * it with a fixed, seeded mix of 4 KiB blocks: zero blocks, random blocks
 * (incompressible) and text-like blocks (phrases repeated within the block,
 * TEXT_REPEAT_PERMILLE of its bytes). Then the driver "switches" SWITCHES
 * times to a tab chosen in a seeded random order (never the current one):
 * the tab touches TOUCH_PCT percent of its blocks, in random runs of 16
 * (64 KiB), reading one word of each block and writing every fourth back
 * unchanged (a tab brought to the front reads much of its state and
 * dirties some), then answers. The switch latency is the time from the
 * request to the answer. When the memory limit around all this is smaller
 * than the tabs, the kernel swaps (or compresses) the tabs in the
 * background and brings their pages back on a switch; that is what the
 * latency shows.
 *
 * A tab the OOM killer killed (SIGKILL) is counted and reloaded when it is
 * next switched to, as a browser reloads a discarded tab: the switch then
 * lasts as long as the reload (respawn and refill). Tabs raise their own
 * oom_score_adj so the killer picks a tab, not the driver. Tabs die with the
 * driver (PR_SET_PDEATHSIG), and the driver with its parent.
 *
 * Usage:  tabs TABS TAB_MIB SWITCHES [TEXT_PERMILLE ZERO_PERMILLE TOUCH_PCT SEED MAX_SECONDS]
 *         tabs --dump TAB_MIB TEXT_PERMILLE ZERO_PERMILLE SEED
 *   TEXT_PERMILLE, ZERO_PERMILLE: shares of text-like and zero blocks in
 *   thousandths (the rest is random; default 450 and 150); TOUCH_PCT:
 *   1..100 (default 10); SEED (default 1); MAX_SECONDS: stop switching after
 *   this long (default 0: no limit). --dump writes tab 0's memory to stdout
 *   (for the tests that measure its compressibility) and exits.
 * Output: p50_ms, p95_ms, p99_ms, max_ms, mean_ms (switch latency, linear
 *   interpolation between ranks), switches, seconds, switches_per_s, open_s
 *   (time to open every tab), tabs_killed, reloads, major_faults,
 *   minor_faults (of all tabs and the driver), truncated (1 if MAX_SECONDS
 *   ended the switching early).
 * Exit status: 0 success, 1 runtime failure (including a tab that cannot
 *   be loaded at all: the limit is below what one tab needs), 2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define KERNEL_NAME "tabs"
#define KERNEL_USAGE "TABS TAB_MIB SWITCHES [TEXT_PERMILLE ZERO_PERMILLE TOUCH_PCT SEED MAX_SECONDS]\n" \
                     "       tabs --dump TAB_MIB TEXT_PERMILLE ZERO_PERMILLE SEED"
#include "kernel.h"

#define BLOCK 4096u
#define RUN_BLOCKS 16u            /* blocks touched together: 64 KiB */
#define TEXT_REPEAT_PERMILLE 850u /* bytes of a text-like block that repeat earlier ones */
#define MAX_LOAD_ATTEMPTS 20      /* kills while loading one tab before giving up */

/* Wall time, not kernel.h's thread CPU time: a switch waits for another process (the tab)
 * and for its pages to come back from swap, which is exactly what a user feels. */
static double wall_seconds(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        perror(KERNEL_NAME ": clock_gettime(CLOCK_MONOTONIC) failed");
        exit(1);
    }
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct command {
    uint32_t blocks; /* 0: exit */
    uint32_t seed;
};

struct tab {
    pid_t pid;
    int cmd;   /* driver -> tab */
    int reply; /* tab -> driver */
};

static uint64_t g_seed = 1, g_blocks;
static unsigned g_text = 450, g_zero = 150, g_touch = 10;
static unsigned g_killed, g_reloads;
static struct tab *g_tabs;
static unsigned g_ntabs;

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t s = a * 0x9e3779b97f4a7c15ull ^ b;

    return splitmix64(&s);
}

static void random_bytes(unsigned char *p, size_t n, uint64_t *s)
{
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        uint64_t v = splitmix64(s);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++)
        p[i] = (unsigned char)splitmix64(s);
}

/* Phrases of 64..256 bytes: fresh random bytes, or a copy of an earlier part
 * of the same block, chosen so that the copied share stays at the target. */
static void text_block(unsigned char *p, uint64_t *s)
{
    size_t pos = 0, copied = 0;

    while (pos < BLOCK) {
        size_t len = 64 + splitmix64(s) % 193;

        if (len > BLOCK - pos)
            len = BLOCK - pos;
        if (pos >= len && copied * 1000 < (uint64_t)TEXT_REPEAT_PERMILLE * (pos + len)) {
            size_t src = splitmix64(s) % (pos - len + 1);
            memcpy(p + pos, p + src, len);
            copied += len;
        } else {
            random_bytes(p + pos, len, s);
        }
        pos += len;
    }
}

/* Block kinds follow a golden-ratio (Weyl) sequence: the shares are exact to
 * within one block over any stretch, and the kinds are well interleaved. */
static void fill_tab(unsigned char *mem, unsigned tab)
{
    uint64_t offset = mix(g_seed, tab), b;

    for (b = 0; b < g_blocks; b++) {
        uint64_t w = b * 0x9e3779b97f4a7c15ull + offset;
        unsigned kind = (unsigned)(((w >> 32) * 1000) >> 32);
        uint64_t s = mix(mix(g_seed, tab), b);
        unsigned char *p = mem + b * BLOCK;

        if (kind < g_zero)
            memset(p, 0, BLOCK);
        else if (kind < g_zero + g_text)
            text_block(p, &s);
        else
            random_bytes(p, BLOCK, &s);
    }
}

static uint64_t touch(volatile unsigned char *mem, uint32_t want, uint32_t seed)
{
    uint64_t s = seed, sum = 0, runs = g_blocks / RUN_BLOCKS, done = 0;

    if (runs == 0)
        runs = 1;
    while (done < want) {
        uint64_t first = (splitmix64(&s) % runs) * RUN_BLOCKS, b;

        for (b = first; b < first + RUN_BLOCKS && b < g_blocks && done < want; b++, done++) {
            volatile unsigned char *q = mem + b * BLOCK + (b % (BLOCK / 8)) * 8;
            unsigned char v = *q;

            sum += v;
            if (b % 4 == 0)
                *q = v; /* dirty it without changing it */
        }
    }
    return sum;
}

static void tab_main(unsigned index, int in, int out, pid_t driver)
{
    size_t bytes = (size_t)g_blocks * BLOCK;
    struct command c;
    unsigned char *mem;
    FILE *adj;
    char ok = 'r';

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != driver)
        _exit(1);
    adj = fopen("/proc/self/oom_score_adj", "w");
    if (adj != NULL) { /* the OOM killer should take a tab, never the driver */
        fputs("1000", adj);
        fclose(adj);
    }
    mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        perror("tabs: mmap");
        _exit(1);
    }
    madvise(mem, bytes, MADV_NOHUGEPAGE); /* page-sized swapping, as most tab heaps */
    fill_tab(mem, index);
    if (write(out, &ok, 1) != 1)
        _exit(1);
    while (read(in, &c, sizeof c) == (ssize_t)sizeof c && c.blocks != 0) {
        ok = (char)('a' + touch(mem, c.blocks, c.seed) % 26);
        if (write(out, &ok, 1) != 1)
            _exit(1);
    }
    _exit(0);
}

/* Start tab i (again); returns 0 when it reported loaded, -1 when it died first. */
static int spawn(unsigned i)
{
    int to[2], from[2];
    pid_t driver = getpid(), pid;
    unsigned j;
    char ok;

    if (pipe(to) != 0 || pipe(from) != 0) {
        perror("tabs: pipe");
        exit(1);
    }
    pid = fork();
    if (pid < 0) {
        perror("tabs: fork");
        exit(1);
    }
    if (pid == 0) {
        /* Keep no other tab's pipe ends open: the driver must see EOF when one dies. */
        for (j = 0; j < g_ntabs; j++) {
            if (g_tabs[j].pid > 0) {
                close(g_tabs[j].cmd);
                close(g_tabs[j].reply);
            }
        }
        close(to[1]);
        close(from[0]);
        tab_main(i, to[0], from[1], driver);
    }
    close(to[0]);
    close(from[1]);
    g_tabs[i] = (struct tab){pid, to[1], from[0]};
    return read(from[0], &ok, 1) == 1 ? 0 : -1;
}

/* Wait for tab i to end and count it if the OOM killer (SIGKILL) ended it. */
static void reap(unsigned i)
{
    int status;

    close(g_tabs[i].cmd);
    close(g_tabs[i].reply);
    if (waitpid(g_tabs[i].pid, &status, 0) < 0) {
        perror("tabs: waitpid");
        exit(1);
    }
    g_tabs[i].pid = 0;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        g_killed++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tabs: tab %u failed (status %d)\n", i, status);
        exit(1);
    }
}

static void load(unsigned i)
{
    int attempt;

    for (attempt = 0; attempt < MAX_LOAD_ATTEMPTS; attempt++) {
        if (spawn(i) == 0)
            return;
        reap(i);
    }
    fprintf(stderr, "tabs: tab %u was killed %d times while loading: the memory limit is below "
                    "what one tab needs\n", i, MAX_LOAD_ATTEMPTS);
    exit(1);
}

static int switch_to(unsigned i, uint32_t blocks, uint32_t seed)
{
    struct command c = {blocks, seed};
    char ok;

    if (write(g_tabs[i].cmd, &c, sizeof c) != (ssize_t)sizeof c)
        return -1;
    return read(g_tabs[i].reply, &ok, 1) == 1 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double percentile(const double *sorted, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)pos;

    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (pos - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

static void parse_mix(char **argv)
{
    uint64_t text, zero;

    if (parse_u64(argv[0], 0, 1000, &text) != 0)
        usage_error("bad TEXT_PERMILLE '%s'\n", argv[0]);
    if (parse_u64(argv[1], 0, 1000 - text, &zero) != 0)
        usage_error("bad ZERO_PERMILLE '%s' (TEXT + ZERO must be at most 1000)\n", argv[1]);
    g_text = (unsigned)text;
    g_zero = (unsigned)zero;
}

static int dump(int argc, char **argv)
{
    uint64_t mib;
    unsigned char *mem;
    size_t bytes;

    if (argc != 6)
        usage();
    if (parse_u64(argv[2], 1, 1 << 20, &mib) != 0)
        usage_error("bad TAB_MIB '%s'\n", argv[2]);
    parse_mix(argv + 3);
    if (parse_u64(argv[5], 0, UINT32_MAX, &g_seed) != 0)
        usage_error("bad SEED '%s'\n", argv[5]);
    g_blocks = mib * (1 << 20) / BLOCK;
    bytes = (size_t)g_blocks * BLOCK;
    mem = malloc(bytes);
    if (mem == NULL) {
        perror("tabs: malloc");
        return 1;
    }
    fill_tab(mem, 0);
    if (fwrite(mem, 1, bytes, stdout) != bytes)
        return 1;
    free(mem);
    return flush_results();
}

int main(int argc, char **argv)
{
    uint64_t ntabs, mib, switches, seed = 1, maxs = 0, touch_pct = 10, s, done = 0;
    double *lat, t0, start, open_s, seconds, sum = 0;
    uint64_t rng;
    struct rusage self, kids;
    unsigned i, cur = UINT32_MAX;
    uint32_t want;
    int truncated = 0;

    if (argc >= 2 && strcmp(argv[1], "--dump") == 0)
        return dump(argc, argv);
    if (argc != 4 && argc != 9)
        usage();
    if (parse_u64(argv[1], 1, 4096, &ntabs) != 0)
        usage_error("bad TABS '%s'\n", argv[1]);
    if (parse_u64(argv[2], 1, 1 << 20, &mib) != 0)
        usage_error("bad TAB_MIB '%s'\n", argv[2]);
    if (parse_u64(argv[3], 1, 100000000, &switches) != 0)
        usage_error("bad SWITCHES '%s'\n", argv[3]);
    if (argc == 9) {
        parse_mix(argv + 4);
        if (parse_u64(argv[6], 1, 100, &touch_pct) != 0)
            usage_error("bad TOUCH_PCT '%s'\n", argv[6]);
        if (parse_u64(argv[7], 0, UINT32_MAX, &seed) != 0)
            usage_error("bad SEED '%s'\n", argv[7]);
        if (parse_u64(argv[8], 0, 1000000, &maxs) != 0)
            usage_error("bad MAX_SECONDS '%s'\n", argv[8]);
    }
    g_seed = seed;
    g_touch = (unsigned)touch_pct;
    g_blocks = mib * (1 << 20) / BLOCK;
    g_ntabs = (unsigned)ntabs;
    want = (uint32_t)(g_blocks * g_touch / 100);
    if (want == 0)
        want = 1;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    g_tabs = calloc(ntabs, sizeof *g_tabs);
    lat = malloc(switches * sizeof *lat);
    if (g_tabs == NULL || lat == NULL) {
        perror("tabs: malloc");
        return 1;
    }

    t0 = wall_seconds();
    for (i = 0; i < ntabs; i++)
        load(i);
    open_s = wall_seconds() - t0;

    rng = mix(seed, 0x7ab5);
    start = wall_seconds();
    for (s = 0; s < switches; s++) {
        unsigned next;
        double t;

        if (s > 0 && maxs > 0 && wall_seconds() - start > (double)maxs) {
            truncated = 1;
            break;
        }
        do
            next = (unsigned)(splitmix64(&rng) % ntabs);
        while (ntabs > 1 && next == cur);
        t = wall_seconds();
        if (g_tabs[next].pid == 0 || switch_to(next, want, (uint32_t)splitmix64(&rng)) != 0) {
            if (g_tabs[next].pid != 0)
                reap(next); /* it died: killed, or failed (then reap exits) */
            load(next);     /* the reload is what this switch costs */
            g_reloads++;
        }
        lat[done] = (wall_seconds() - t) * 1e3;
        sum += lat[done++];
        cur = next;
    }
    seconds = wall_seconds() - start;

    for (i = 0; i < ntabs; i++) {
        struct command quit = {0, 0};

        if (g_tabs[i].pid == 0)
            continue;
        if (write(g_tabs[i].cmd, &quit, sizeof quit) != (ssize_t)sizeof quit) {
            /* already dead: reap() below tells how */
        }
        reap(i);
    }
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);

    qsort(lat, done, sizeof *lat, cmp_double);
    printf("tabs %" PRIu64 "\n", ntabs);
    printf("tab_mib %" PRIu64 "\n", mib);
    printf("switches %" PRIu64 "\n", done);
    printf("seconds %.6f\n", seconds);
    printf("switches_per_s %.3f\n", seconds > 0 ? (double)done / seconds : 0.0);
    printf("open_s %.6f\n", open_s);
    printf("p50_ms %.6f\n", percentile(lat, done, 0.50));
    printf("p95_ms %.6f\n", percentile(lat, done, 0.95));
    printf("p99_ms %.6f\n", percentile(lat, done, 0.99));
    printf("max_ms %.6f\n", lat[done - 1]);
    printf("mean_ms %.6f\n", sum / (double)done);
    printf("tabs_killed %u\n", g_killed);
    printf("reloads %u\n", g_reloads);
    printf("major_faults %ld\n", self.ru_majflt + kids.ru_majflt);
    printf("minor_faults %ld\n", self.ru_minflt + kids.ru_minflt);
    printf("truncated %d\n", truncated);
    free(lat);
    free(g_tabs);
    return flush_results();
}
