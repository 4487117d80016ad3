/* The benchmarks' tick clock: a cheap monotonic counter (the TSC, Arm's virtual counter, or
 * CLOCK_MONOTONIC elsewhere) read between fences, its rate against CLOCK_MONOTONIC calibrated
 * at start-up, and the cost of one back-to-back pair of reads. Included after bench_util.h
 * (mono_ns, cmp_u64, die) by pause_bench, walk_bench and chase_bench. */
#ifndef COHSIM_TICK_CLOCK_H
#define COHSIM_TICK_CLOCK_H

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_lfence(); /* earlier loads (a chase's last) have completed before the clock is read */
	uint64_t t = __rdtsc();
	_mm_lfence();
	return t;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
#else
	return mono_ns();
#endif
}

static const char *tick_source(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return "tsc";
#elif defined(__aarch64__)
	return "cntvct";
#else
	return "clock_monotonic";
#endif
}

static double g_ticks_per_ns = 1.0;

/* The tick rate against CLOCK_MONOTONIC: three 20-ms busy comparisons, the median; `what` the
 * program times, for the error when the clock does not advance. */
static void calibrate_ticks(const char *what)
{
	double r[3];
	for (int k = 0; k < 3; k++) {
		uint64_t n0 = mono_ns(), t0 = ticks(), n1;
		do {
			n1 = mono_ns();
		} while (n1 - n0 < 20000000ull);
		uint64_t t1 = ticks();
		r[k] = (double)(t1 - t0) / (double)(n1 - n0);
	}
	double a = r[0], b = r[1], c = r[2];
	g_ticks_per_ns = (a > b) ? ((b > c) ? b : (a > c ? c : a)) : ((a > c) ? a : (b > c ? c : b));
	if (!(g_ticks_per_ns > 0))
		die("tick clock (%s) did not advance; cannot time %s", tick_source(), what);
}

static inline double ticks_to_ns(double t) { return t / g_ticks_per_ns; }

/* Median cost of one back-to-back pair of clock reads (ticks). */
static inline double timer_overhead_ticks(void)
{
	enum { N = 2001 };
	static uint64_t v[N];
	for (int i = 0; i < N; i++) {
		uint64_t a = ticks();
		uint64_t b = ticks();
		v[i] = b - a;
	}
	qsort(v, N, sizeof *v, cmp_u64);
	return (double)v[N / 2];
}

#endif
