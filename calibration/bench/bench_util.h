/*
 * bench_util.h: argument parsing shared by pause_bench.c, mount_bench.c and wake_bench.c.
 *
 * Each benchmark is one C file compiled on its own (cc -O2 -pthread X_bench.c); this header is
 * included by each. The including file defines die() (one "X_bench: error: ..." line, exit 1)
 * before including it.
 */
#ifndef COHSIM_BENCH_UTIL_H
#define COHSIM_BENCH_UTIL_H

#include <errno.h>
#include <stdlib.h>

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

#endif
