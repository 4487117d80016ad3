/*
 * bench_util.h: what the benchmarks (pause, mount, wake, corun) share -- the one-line error
 * exit, command-line parsing, the monotonic clock, latency summaries, CPU pinning and the
 * spin-wait's relax.
 *
 * Each benchmark is one C file compiled on its own (cc -O2 -pthread X_bench.c); this header is
 * included by each, right after its system headers, with BENCH_NAME ("X_bench") defined first
 * (and _GNU_SOURCE, for the CPU-set macros).  The helpers only some benchmarks use are static
 * inline, so the others build without unused-function warnings.
 */
#ifndef COHSIM_BENCH_UTIL_H
#define COHSIM_BENCH_UTIL_H

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name, for its messages) before including bench_util.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* ------------------------------------------------------------------ spinning */

/* One iteration of a spin-wait: PAUSE on x86 (whose latency pause_bench measures), YIELD on
 * Arm, a compiler barrier elsewhere. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ------------------------------------------------------------------ errors */

/* Run by die() before it exits, where a benchmark has something to undo (mount_bench: its
 * mounts and scratch directory); NULL otherwise. */
static void (*die_cleanup)(void);

/* One line "X_bench: error: ..." on stderr, exit 1.  stdout is flushed first so the CSV rows
 * written so far come out ahead of the error. */
static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs(BENCH_NAME ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (die_cleanup)
		die_cleanup();
	exit(1);
}

/* ------------------------------------------------------------------ arguments */

/* "1,2,4" -> out[0..n); every value in lo..hi, at most max of them; anything else dies. */
static int parse_int_list(const char *s, int *out, int max, const char *what, long lo, long hi)
{
	int n = 0;
	const char *p = s;
	if (!*p)
		die("--%s: empty list", what);
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < lo || v > hi)
			die("--%s: '%s' is not a comma-separated list of integers in %ld..%ld", what, s, lo, hi);
		if (n >= max)
			die("--%s: more than %d values", what, max);
		out[n++] = (int)v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			die("--%s: '%s' is not a comma-separated list of integers", what, s);
	}
	return n;
}

/* One integer in lo..hi; a sign, a suffix or an overflow dies. */
static inline uint64_t parse_u64(const char *s, const char *what, uint64_t lo, uint64_t hi)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		die("--%s: '%s' is not a non-negative integer", what, s);
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v < lo || v > hi)
		die("--%s: '%s' is not an integer in %llu..%llu", what, s, (unsigned long long)lo,
		    (unsigned long long)hi);
	return v;
}

/* getopt_long (with opterr = 0) returned '?': name the option it stopped at and die. */
static void die_bad_option(char *const *argv) __attribute__((noreturn));
static void die_bad_option(char *const *argv)
{
	if (optopt)
		die("option -%c is unknown or lacks its value (see --help)", optopt);
	die("option '%s' is unknown or lacks its value (see --help)", argv[optind - 1]);
}

/* After the options: the benchmarks take no other arguments. */
static void die_if_operands(int argc, char *const *argv)
{
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
}

/* ------------------------------------------------------------------ clock, statistics, CPUs */

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static inline uint64_t pct(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* What each benchmark reports of a set of latencies (ns). */
struct dist {
	double p50, p90, p99, mean, min, max, sum;
};

/* Sorts v[0..n) (n >= 1) in place and summarises it. */
static inline struct dist dist_of(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	return (struct dist){
		.p50 = (double)pct(v, n, 0.50),
		.p90 = (double)pct(v, n, 0.90),
		.p99 = (double)pct(v, n, 0.99),
		.mean = sum / (double)n,
		.min = (double)v[0],
		.max = (double)v[n - 1],
		.sum = sum,
	};
}

/* The CPU set holding `cpu` alone: what a thread pinned to it may run on. */
static inline cpu_set_t one_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return set;
}

#endif
