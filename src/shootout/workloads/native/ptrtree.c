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
 * O(log n)) and keys never repeat. build() links that same tree without
 * the insertions' descents (its scratch: 24 more bytes a node, freed before
 * the lookups). A present key is mix32(i) for a random i < NODES; an
 * absent key is mix32(i) for a random i >= NODES, which is guaranteed absent
 * because mix32 is one-to-one. Even-numbered lookups are
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

/* Sorts v[0..n) by the upper 32 bits (the keys, which are distinct), two
 * 16-bit counting passes through tmp. */
static void sort_by_key(uint64_t *v, uint64_t *tmp, uint32_t n)
{
    static uint32_t count[1u << 16];
    unsigned shift;

    for (shift = 32; shift < 64; shift += 16) {
        uint32_t i, sum = 0;

        for (i = 0; i < (1u << 16); i++)
            count[i] = 0;
        for (i = 0; i < n; i++)
            count[(v[i] >> shift) & 0xffffu]++;
        for (i = 0; i < (1u << 16); i++) {
            uint32_t c = count[i];

            count[i] = sum;
            sum += c;
        }
        for (i = 0; i < n; i++)
            tmp[count[(v[i] >> shift) & 0xffffu]++] = v[i];
        for (i = 0; i < n; i++)
            v[i] = tmp[i];
    }
}

/*
 * The tree that inserting mix32(0), mix32(1), ... one by one would make, with
 * node i the i-th malloc() as there, so the same nodes sit at the same
 * addresses. That tree is the treap with priority i (every node's index is
 * below its children's), so it is linked in one pass over the keys in sorted
 * order with a stack of its right spine: a few cache misses a node instead of
 * a descent from the root for each, which made the untimed build four times
 * the timed lookups. The scratch arrays are large enough to be mmap'd by
 * malloc, apart from the nodes. Returns the root, or NULL after a message.
 */
static struct node *build(uint32_t nodes)
{
    struct node **at = NULL, *root = NULL;
    uint64_t *order = NULL, *tmp = NULL;
    uint32_t *spine = NULL, i, top = 0;

    /* on a 32-bit ABI nodes * 8 can wrap size_t: a small block that the loops would overrun */
    if ((size_t)nodes * sizeof *order / sizeof *order != nodes) {
        fprintf(stderr, "ptrtree: %" PRIu32 " nodes do not fit this address space\n", nodes);
        goto out;
    }
    at = malloc((size_t)nodes * sizeof *at);
    order = malloc((size_t)nodes * sizeof *order);
    tmp = malloc((size_t)nodes * sizeof *tmp);
    spine = malloc((size_t)nodes * sizeof *spine);
    if (at == NULL || order == NULL || tmp == NULL || spine == NULL) {
        fprintf(stderr, "ptrtree: malloc of the build's index arrays (%" PRIu32
                        " entries) failed\n", nodes);
        goto out;
    }
    for (i = 0; i < nodes; i++) {
        at[i] = malloc(sizeof *at[i]);
        if (at[i] == NULL) {
            fprintf(stderr, "ptrtree: malloc of node %" PRIu32 " of %" PRIu32
                            " (%zu bytes each) failed\n", i + 1, nodes,
                    sizeof *at[i]);
            goto out;
        }
        at[i]->key = mix32(i);
        at[i]->left = NULL;
        at[i]->right = NULL;
        order[i] = (uint64_t)at[i]->key << 32 | i;
    }
    sort_by_key(order, tmp, nodes);
    /* spine: the indices on the right spine so far, root first; a node
     * inserted later than the top ones goes below them, to their right, and
     * the ones it displaces become its left subtree. */
    for (i = 0; i < nodes; i++) {
        uint32_t idx = (uint32_t)order[i];
        struct node *left = NULL;

        while (top > 0 && spine[top - 1] > idx)
            left = at[spine[--top]];
        at[idx]->left = left;
        if (top > 0)
            at[spine[top - 1]]->right = at[idx];
        spine[top++] = idx;
    }
    root = at[spine[0]];
out:
    free(spine);
    free(tmp);
    free(order);
    free(at);
    return root;
}

int main(int argc, char **argv)
{
    uint64_t nodes64, lookups, j, found = 0, depth_sum = 0, expect_found;
    uint32_t nodes, absent_span, rng = 0x2545f491u;
    struct node *root;
    double t0, t1, secs;

    if (argc != 3)
        usage();
    if (parse_u64(argv[1], 1, UINT32_MAX - 1, &nodes64) != 0)
        usage_error("bad NODES '%s'\n", argv[1]);
    if (parse_u64(argv[2], 1, UINT64_MAX, &lookups) != 0)
        usage_error("bad LOOKUPS '%s'\n", argv[2]);
    nodes = (uint32_t)nodes64;
    absent_span = 0u - nodes;   /* 2^32 - nodes: count of indices >= nodes */

    /* Build (not timed). */
    root = build(nodes);
    if (root == NULL)
        return 1;

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
