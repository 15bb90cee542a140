/* Effective CPU clock from a chain of dependent integer adds.
 *
 * Every add needs the result of the previous one, so the chain advances one add per cycle
 * on any core whose register add latency is one cycle (all x86-64 cores, Cortex-A53/A55/
 * A72/A76, Neoverse, Apple): adds per microsecond = MHz. The empty asm after each add hides
 * the value from the compiler, so it cannot fold adds together or vectorise them. The loop
 * counter and branch are independent of the chain; superscalar cores run them alongside it,
 * and with ADDS adds per iteration they would cost under 3% even on a strictly scalar core.
 * The absolute figure is an estimate; what shootout uses is its change over a run.
 *
 *   clockloop SECONDS   measure for SECONDS in ten slices; print "mhz" (fastest slice, the
 *                       clock the core reaches, robust to preemption) and "mhz_median"
 *   clockloop -n N      fixed work: N x ADDS adds; print "seconds" (a CPU-bound test load)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ADDS 100
#define BLOCK 10000L /* iterations between clock reads: 1e6 adds, ~0.5 ms at 2 GHz */
#define SLICES 10

#define A1 x += y; __asm__ volatile("" : "+r"(x));
#define A10 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1
#define A100 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t chain(long iterations, uint64_t x, uint64_t y) {
    for (long i = 0; i < iterations; i++) {
        A100
    }
    return x;
}

static int cmp(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

int main(int argc, char **argv) {
    volatile uint64_t seed = 1; /* not a constant the compiler could fold */
    uint64_t x = 0;
    if (argc == 3 && strcmp(argv[1], "-n") == 0) {
        long n = strtol(argv[2], NULL, 10);
        double t0 = now();
        x = chain(n, x, seed);
        printf("seconds %.6f\n", now() - t0);
        fprintf(stderr, "sink %llu\n", (unsigned long long)x);
        return n > 0 ? 0 : 2;
    }
    if (argc != 2 || atof(argv[1]) <= 0) {
        fprintf(stderr, "usage: clockloop SECONDS | clockloop -n ITERATIONS\n");
        return 2;
    }
    double slice = atof(argv[1]) / SLICES, mhz[SLICES];
    for (int s = 0; s < SLICES; s++) {
        double t0 = now(), t;
        long done = 0;
        do {
            x = chain(BLOCK, x, seed);
            done += BLOCK;
            t = now();
        } while (t - t0 < slice);
        mhz[s] = (double)done * ADDS / (t - t0) / 1e6;
    }
    qsort(mhz, SLICES, sizeof mhz[0], cmp);
    printf("mhz %.1f\nmhz_median %.1f\n", mhz[SLICES - 1], (mhz[SLICES / 2 - 1] + mhz[SLICES / 2]) / 2);
    fprintf(stderr, "sink %llu\n", (unsigned long long)x);
    return 0;
}
