/*
 * work.c - a fixed CPU-bound program for the benchmarks in this directory.
 *
 * Usage: work ITERATIONS
 * Runs ITERATIONS * (1 + BENCH_EXTRA_PCT / 100) steps of a dependent integer
 * recurrence (BENCH_EXTRA_PCT from the environment, default 0), so that a
 * configuration can be made exactly N% slower by its environment alone, and
 * prints the final state so the loop cannot be optimised away.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *extra = getenv("BENCH_EXTRA_PCT");
    uint64_t n, i, x = 0x9e3779b97f4a7c15ull;

    if (argc != 2) {
        fprintf(stderr, "usage: work ITERATIONS\n");
        return 2;
    }
    n = strtoull(argv[1], NULL, 10);
    if (extra != NULL)
        n += (uint64_t)((double)n * atof(extra) / 100.0 + 0.5);
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x *= 0x2545f4914f6cdd1dull;
    }
    printf("%llu\n", (unsigned long long)x);
    return 0;
}
