/*
 * intmix.c - a Dhrystone-style integer mix (shootout native kernel).
 *
 * What it measures: the speed of ordinary "systems" integer code - copying
 * and comparing 30-character strings through libc, assigning whole records
 * (structs that contain a pointer) through pointers, calls into functions
 * that are kept out of line, small integer arithmetic including a division,
 * switch statements and data-dependent branches, and array updates.
 *
 * Why: this is the kind of code the classic Dhrystone figure stands for. A
 * 32-bit and a 64-bit build of it differ in the things that matter for such
 * code: register count, calling convention (stack vs register arguments),
 * record size (the record holds a pointer), and the libc string routines.
 * The operations are the same kinds as Dhrystone's; the code is our own, and
 * is not a Dhrystone implementation, so its figure is not "DMIPS".
 *
 * Usage:  intmix ITERATIONS          (1 .. 4294967295)
 * Output (stdout, one "name value" per line):
 *   iterations N, seconds T, iter_per_s R, checksum C
 * seconds is the CPU time of the timed loop (see cpu_seconds in kernel.h).
 * The checksum is a 32-bit value computed with fixed-width unsigned
 * arithmetic; it depends only on ITERATIONS, so it is identical for every
 * ABI and compiler.
 * Exit status: 0 success, 1 runtime failure, 2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_NAME "intmix"
#define KERNEL_USAGE "ITERATIONS   (ITERATIONS: 1..4294967295)"
#include "kernel.h"

#define TEXT_LEN 30
#define VEC_N 64
#define GRID_N 32

enum tag { TAG_RED, TAG_GREEN, TAG_BLUE, TAG_GREY, TAG_WHITE };

struct rec {
    struct rec *link;   /* a pointer: the record is larger on 64-bit */
    enum tag tag;
    int32_t count;
    int32_t weight;
    char text[TEXT_LEN + 2];
};

/* Writable (not const) so the compiler cannot know their lengths. */
static char g_names[4][TEXT_LEN + 1] = {
    "SHOOTOUT INTEGER MIX, 1ST TEXT",
    "SHOOTOUT INTEGER MIX, 2ND TEXT",
    "SHOOTOUT INTEGER MIX, 3RD TEXT",
    "SHOOTOUT INTEGER MIX, 4TH TEXT",
};

static struct rec g_recs[2];
static struct rec *g_head;
static char g_text[TEXT_LEN + 2];
static char g_ref[TEXT_LEN + 2];
static int32_t g_vec[VEC_N];
static int32_t g_grid[GRID_N][GRID_N];
static int32_t g_level;
static char g_mark;
static int g_same;

NOINLINE static void copy_text(char *dst, const char *src)
{
    strcpy(dst, src);
}

NOINLINE static enum tag classify(char x, char y)
{
    if (x == y) {
        g_mark = x;
        return TAG_GREEN;
    }
    return x < y ? TAG_RED : TAG_BLUE;
}

/* A cheap character test first, then the full libc comparison. */
NOINLINE static int texts_same(const char *x, const char *y)
{
    enum tag t = classify(x[22], y[22]);

    if (t == TAG_RED)
        return 0;
    if (strcmp(x, y) != 0)
        return 0;
    return t == TAG_GREEN;
}

NOINLINE static enum tag next_tag(enum tag t, int32_t level)
{
    switch (t) {
    case TAG_RED:
        return level > 20 ? TAG_GREEN : TAG_GREY;
    case TAG_GREEN:
        return TAG_BLUE;
    case TAG_BLUE:
        return (level & 1) ? TAG_WHITE : TAG_RED;
    case TAG_GREY:
        return TAG_RED;
    default:
        return TAG_GREEN;
    }
}

/* Add and keep the value bounded (no signed overflow for any run length). */
NOINLINE static void bump(int32_t *p, int32_t by)
{
    int32_t v = *p + by;

    if (v > 1000)
        v -= 997;
    *p = v;
}

NOINLINE static void update_tables(int32_t *vec, int32_t (*grid)[GRID_N],
                                   int32_t a, int32_t b)
{
    int32_t k = a + 5;  /* a is 2..17, so k is 7..22 */
    int32_t j;

    vec[k] = b;
    vec[k + 1] = vec[k];
    vec[k + 30] = k;
    for (j = k; j <= k + 1; j++)
        grid[k][j] = k;
    grid[k][k - 1] = (grid[k][k - 1] + 1) & 0xffff;
    grid[k + 9][k] = vec[k];
    g_level = 5;
}

/* Whole-record assignments through pointers, with a branch on the tag. */
NOINLINE static void refresh_record(struct rec *r)
{
    struct rec *n = r->link;

    *n = *g_head;
    r->count = 5;
    n->count = r->count;
    n->link = r->link;
    bump(&n->weight, r->count);
    if (n->tag == TAG_RED) {
        n->count = 6;
        n->tag = next_tag(r->tag, n->count);
        n->link = g_head->link;
        bump(&n->count, 10);
    } else {
        *r = *n;
    }
}

int main(int argc, char **argv)
{
    uint64_t arg;
    uint32_t iters, i, acc = 0, check;
    double t0, t1, secs;
    int j, k;

    if (argc != 2)
        usage();
    if (parse_u64(argv[1], 1, UINT32_MAX, &arg) != 0)
        usage_error("bad ITERATIONS '%s'\n", argv[1]);
    iters = (uint32_t)arg;

    g_recs[0].link = &g_recs[1];
    g_recs[0].tag = TAG_BLUE;
    g_recs[0].count = 40;
    g_recs[0].weight = 0;
    strcpy(g_recs[0].text, "SHOOTOUT RECORD, SOME STRING 0");
    g_head = &g_recs[0];
    strcpy(g_ref, g_names[2]);
    g_mark = 'A';

    t0 = cpu_seconds();
    for (i = 0; i < iters; i++) {
        int32_t a = (int32_t)(i & 15) + 2;  /* 2..17 */
        int32_t b = 3;
        int32_t c;
        char ch;

        copy_text(g_text, g_names[i & 3]);
        g_same = texts_same(g_text, g_ref);
        c = a * b;                          /* 6..51 */
        b = c / a + g_same;                 /* 3 or 4 */
        c = c - 2 * b + a % 5;              /* 0..47 */
        update_tables(g_vec, g_grid, a, c);
        g_head->tag = next_tag(g_head->tag, c);
        refresh_record(g_head);
        for (ch = 'A'; ch <= 'C'; ch++) {
            if (classify(ch, 'B') == TAG_GREEN)
                b += a;
        }
        if (g_head->count > a)
            c += g_level;
        else
            c -= g_level;
        acc += (uint32_t)(a + b + c) + (uint32_t)g_head->count
             + (uint32_t)g_head->weight + (uint32_t)g_head->tag;
    }
    t1 = cpu_seconds();
    secs = t1 - t0;
    if (!(secs > 0.0)) {
        fprintf(stderr, "intmix: measured time is not positive (%g s); "
                        "increase ITERATIONS\n", secs);
        return 1;
    }

    check = acc * 2654435761u;
    for (j = 0; j < VEC_N; j++)
        check = check * 31u + (uint32_t)g_vec[j];
    for (j = 0; j < GRID_N; j++)
        for (k = 0; k < GRID_N; k++)
            check = check * 31u + (uint32_t)g_grid[j][k];
    check += (uint32_t)(unsigned char)g_mark + (uint32_t)g_level
           + (uint32_t)(unsigned char)g_text[22] + (uint32_t)g_same;

    printf("iterations %" PRIu32 "\n", iters);
    printf("seconds %.9g\n", secs);
    printf("iter_per_s %.9g\n", (double)iters / secs);
    printf("checksum %" PRIu32 "\n", check);
    if (flush_results() != 0)
        return 1;
    return 0;
}
