/*
 * ptrtree.c - pointer-chasing lookups in an unbalanced binary search tree
 * (shootout native kernel).
 *
 * What it measures: lookups per second in a binary search tree of NODES
 * nodes, each node allocated on its own with malloc(), as in ordinary
 * pointer-heavy code (trees, lists, object graphs).
 *
 * Why: a node is {uint32_t key; node *left, *right;}, so it is 12 bytes with
 * 32-bit pointers and 24 bytes with 64-bit pointers (and malloc's chunks are
 * 16 vs 32 bytes). With 32-bit pointers twice as many nodes fit in each
 * cache level and TLB reach, so once the tree outgrows a cache the 32-bit
 * build should win. That difference is the point of this kernel; everything
 * else in the measured loop uses 32-bit arithmetic only, so that it costs
 * the same on both ABIs.
 *
 * Keys: node i (0 <= i < NODES) gets key mix32(i), where mix32 is a
 * bijection on 32-bit integers that looks random. Nodes are inserted in the
 * order i = 0, 1, 2, ..., so the tree is a random BST (expected depth
 * O(log n)) and keys never repeat. A present key is mix32(i) for a random
 * i < NODES; an absent key is mix32(i) for a random i >= NODES, which is
 * guaranteed absent because mix32 is one-to-one. Even-numbered lookups are
 * present, odd-numbered ones absent.
 *
 * Only the lookups are timed, in CPU time (cpu_seconds in kernel.h);
 * building the tree is not.
 *
 * Usage:  ptrtree NODES LOOKUPS   (NODES 1..4294967294, LOOKUPS >= 1)
 * Output: nodes, lookups, seconds, lookups_per_s, node_bytes (sizeof node),
 *         checksum (number found + sum over lookups of nodes visited; the
 *         same on every ABI for the same arguments).
 * Exit status: 0 success, 1 runtime failure (e.g. malloc), 2 bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define KERNEL_NAME "ptrtree"
#define KERNEL_USAGE "NODES LOOKUPS   " \
                     "(NODES: 1..4294967294, LOOKUPS: >= 1)"
#include "kernel.h"

struct node {
    uint32_t key;
    struct node *left;
    struct node *right;
};

/* An invertible 32-bit mixer: xor-shifts and odd multipliers only. */
static inline uint32_t mix32(uint32_t x)
{
    x += 0x3c6ef372u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* Marsaglia xorshift32: 32-bit operations only, period 2^32 - 1. */
static inline uint32_t xorshift32(uint32_t *s)
{
    uint32_t x = *s;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

/* Maps r uniformly-ish onto [0, n) with one 32x32->64 multiply. */
static inline uint32_t scale32(uint32_t r, uint32_t n)
{
    return (uint32_t)(((uint64_t)r * n) >> 32);
}

int main(int argc, char **argv)
{
    uint64_t nodes64, lookups, j, found = 0, depth_sum = 0, expect_found;
    uint32_t nodes, absent_span, i, rng = 0x2545f491u;
    struct node *root = NULL;
    double t0, t1, secs;

    if (argc != 3)
        usage();
    if (parse_u64(argv[1], 1, UINT32_MAX - 1, &nodes64) != 0)
        usage_error("bad NODES '%s'\n", argv[1]);
    if (parse_u64(argv[2], 1, UINT64_MAX, &lookups) != 0)
        usage_error("bad LOOKUPS '%s'\n", argv[2]);
    nodes = (uint32_t)nodes64;
    absent_span = 0u - nodes;   /* 2^32 - nodes: count of indices >= nodes */

    /* Build (not timed). Iterative insertion; keys are distinct. */
    for (i = 0; i < nodes; i++) {
        uint32_t key = mix32(i);
        struct node **link = &root;
        struct node *n;

        while (*link)
            link = key < (*link)->key ? &(*link)->left : &(*link)->right;
        n = malloc(sizeof *n);
        if (n == NULL) {
            fprintf(stderr, "ptrtree: malloc of node %" PRIu32 " of %" PRIu32
                            " (%zu bytes each) failed\n", i + 1, nodes,
                    sizeof *n);
            return 1;
        }
        n->key = key;
        n->left = NULL;
        n->right = NULL;
        *link = n;
    }

    t0 = cpu_seconds();
    for (j = 0; j < lookups; j++) {
        uint32_t r = xorshift32(&rng);
        uint32_t key = (j & 1) ? mix32(nodes + scale32(r, absent_span))
                               : mix32(scale32(r, nodes));
        const struct node *n = root;
        uint32_t depth = 0;

        while (n != NULL) {
            depth++;
            if (key == n->key) {
                found++;
                break;
            }
            n = key < n->key ? n->left : n->right;
        }
        depth_sum += depth;
    }
    t1 = cpu_seconds();
    secs = t1 - t0;

    expect_found = lookups - lookups / 2;
    if (found != expect_found) {
        fprintf(stderr, "ptrtree: internal error: found %" PRIu64
                        " keys, expected %" PRIu64 "\n", found, expect_found);
        return 1;
    }
    if (!(secs > 0.0)) {
        fprintf(stderr, "ptrtree: measured time is not positive (%g s); "
                        "increase LOOKUPS\n", secs);
        return 1;
    }

    /* The tree is left to process exit: freeing millions of nodes one by
     * one would only add untimed run time. */
    printf("nodes %" PRIu32 "\n", nodes);
    printf("lookups %" PRIu64 "\n", lookups);
    printf("seconds %.9g\n", secs);
    printf("lookups_per_s %.9g\n", (double)lookups / secs);
    printf("node_bytes %zu\n", sizeof(struct node));
    printf("checksum %" PRIu64 "\n", found + depth_sum);
    if (flush_results() != 0)
        return 1;
    return 0;
}
