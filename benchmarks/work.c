/*
 * work.c - a fixed CPU-bound program for the benchmarks in this directory.
 *
 * Usage: work ITERATIONS [TABLE_KIB]
 * Runs ITERATIONS * (1 + BENCH_EXTRA_PCT / 100) steps of a dependent integer
 * recurrence (BENCH_EXTRA_PCT from the environment, default 0), so that a
 * configuration can be made exactly N% slower by its environment alone, and
 * prints the final state so the loop cannot be optimised away.
 *
 * Without TABLE_KIB the loop never leaves the registers. With it, every step
 * also reads and rewrites one random word of a table of TABLE_KIB KiB (a few
 * hundred: larger than L1 and L2 on most machines), as ptrtree, membw and sha1
 * meet the caches: this is the work on which other programs' cache traffic shows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *extra = getenv("BENCH_EXTRA_PCT");
    uint64_t n, i, x = 0x9e3779b97f4a7c15ull, words = 0, *table = NULL;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: work ITERATIONS [TABLE_KIB]\n");
        return 2;
    }
    n = strtoull(argv[1], NULL, 10);
    if (extra != NULL)
        n += (uint64_t)((double)n * atof(extra) / 100.0 + 0.5);
    if (argc == 3) {
        words = strtoull(argv[2], NULL, 10) * 1024 / sizeof(uint64_t);
        table = calloc(words ? words : 1, sizeof(uint64_t));
        if (table == NULL || words == 0) {
            fprintf(stderr, "work: cannot allocate a table of %s KiB\n", argv[2]);
            return 2;
        }
        for (i = 0; i < words; i++)
            table[i] = i * 0x9e3779b97f4a7c15ull;
    }
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x *= 0x2545f4914f6cdd1dull;
        if (table != NULL) {
            uint64_t *w = &table[(x >> 11) % words];
            x += *w;
            *w = x;
        }
    }
    printf("%llu\n", (unsigned long long)x);
    free(table);
    return 0;
}
