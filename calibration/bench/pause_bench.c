/*
 * pause_bench -- lock hand-off latency of one contended spinlock on real hardware.
 *
 * N threads, each pinned to one CPU chosen by a placement, contend for one global lock that
 * lives alone on a 64-byte cache line.  Waiters spin with PAUSE (x86) / YIELD (arm64) exactly
 * as the kernel's cpu_relax() does.  Every acquisition is timed from "start acquiring" to
 * "acquired" and recorded in a per-thread log-linear histogram (32 sub-buckets per power of
 * two, so any reported percentile is within ~1.6% of the true value; each is clamped to the
 * exact min and max, so p50 <= p99 <= max always holds).  The critical section
 * writes shared data for --cs-ns; between acquisitions a thread busy-works for --think-ns.
 * Both are busy-waited on the calibrated tick clock (TSC on x86, CNTVCT on arm64).
 *
 * Output (stdout): tidy CSV, header
 *     bench,lock,threads,placement,metric,value,unit,repeat
 * One run also measures PAUSE itself (metric pause_ns, lock "none", threads 1), the cost of
 * reading the clock (timer_overhead_ns) and the tick rate (tick_hz).  Informational lines
 * (the CPUs a placement resolved to) go to stderr prefixed "pause_bench: info:".
 * Bad arguments: one line on stderr, exit 1.  See README.md for every metric.
 *
 * Build: cc -O2 -pthread -o pause_bench pause_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define PAUSE_BENCH_VERSION "3"
#define MAX_CPUS 4096
#define MAX_LIST 256
#define SUB_BITS 5
#define SUB_COUNT (1u << SUB_BITS)
#define NBINS ((64 - SUB_BITS + 1) * SUB_COUNT)
#define CACHE_LINE 64

#define BENCH_NAME "pause_bench"
#include "bench_util.h"
#include "tick_clock.h"

/* ------------------------------------------------------------------ clock */


static inline uint64_t ns_to_ticks(uint64_t ns) { return (uint64_t)((double)ns * g_ticks_per_ns + 0.5); }

/* ------------------------------------------------------------------ histogram */

static inline unsigned bin_of(uint64_t v)
{
	if (v < SUB_COUNT)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - SUB_BITS;
	return (shift + 1u) * SUB_COUNT + (unsigned)((v >> shift) - SUB_COUNT);
}

/* Midpoint of a bin, in ticks. */
static double bin_mid(unsigned b)
{
	if (b < SUB_COUNT)
		return (double)b;
	unsigned shift = b / SUB_COUNT - 1u;
	uint64_t lo = ((uint64_t)(SUB_COUNT + b % SUB_COUNT)) << shift;
	uint64_t width = 1ull << shift;
	return (double)lo + (double)(width - 1) / 2.0;
}

/* ------------------------------------------------------------------ locks */

enum lock_kind { LOCK_TTAS, LOCK_TICKET, LOCK_MCS };

/* An MCS queue node, one per thread on its own line: the waiter spins on its own `locked`, and
 * the releaser hands over by writing it (the queue of Linux's qspinlock, kernel/locking/
 * qspinlock.c and mcs_spinlock.h, without the pending bit and the head's spin on the word). */
struct mcs_node {
	_Alignas(CACHE_LINE) _Atomic(struct mcs_node *) next;
	atomic_int locked;
};

struct shared_state {
	/* The lock: alone on its own cache line. */
	_Alignas(CACHE_LINE) atomic_uint lock_word;  /* ttas: 0 free, 1 held; ticket: next ticket */
	atomic_uint now_serving;                     /* ticket lock only (same line, as in Linux's
	                                                old ticket spinlock) */
	_Atomic(struct mcs_node *) tail;             /* mcs: the last waiter, NULL when free */
	/* Data written inside the critical section: its own line. */
	_Alignas(CACHE_LINE) volatile uint64_t data[8];
	volatile int owner;
	/* Run control: its own line, read rarely. */
	_Alignas(CACHE_LINE) atomic_int phase;       /* 0 warm-up, 1 measure, 2 stop */
	atomic_int ready;
};

static inline void lock_acquire(struct shared_state *s, enum lock_kind k, struct mcs_node *me)
{
	if (k == LOCK_MCS) {
		atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
		atomic_store_explicit(&me->locked, 0, memory_order_relaxed);
		struct mcs_node *prev = atomic_exchange_explicit(&s->tail, me, memory_order_acq_rel);
		if (prev) {
			atomic_store_explicit(&prev->next, me, memory_order_release);
			while (!atomic_load_explicit(&me->locked, memory_order_acquire))
				cpu_relax();
		}
	} else if (k == LOCK_TTAS) {
		for (;;) {
			while (atomic_load_explicit(&s->lock_word, memory_order_relaxed) != 0)
				cpu_relax();
			if (atomic_exchange_explicit(&s->lock_word, 1, memory_order_acquire) == 0)
				return;
		}
	} else {
		unsigned me = atomic_fetch_add_explicit(&s->lock_word, 1, memory_order_relaxed);
		while (atomic_load_explicit(&s->now_serving, memory_order_acquire) != me)
			cpu_relax();
	}
}

static inline void lock_release(struct shared_state *s, enum lock_kind k, struct mcs_node *me)
{
	if (k == LOCK_MCS) {
		struct mcs_node *next = atomic_load_explicit(&me->next, memory_order_acquire);
		if (!next) {
			struct mcs_node *expect = me;
			if (atomic_compare_exchange_strong_explicit(&s->tail, &expect, NULL,
								    memory_order_release, memory_order_relaxed))
				return;
			while (!(next = atomic_load_explicit(&me->next, memory_order_acquire)))
				cpu_relax();
		}
		atomic_store_explicit(&next->locked, 1, memory_order_release);
	} else if (k == LOCK_TTAS) {
		atomic_store_explicit(&s->lock_word, 0, memory_order_release);
	} else {
		unsigned n = atomic_load_explicit(&s->now_serving, memory_order_relaxed);
		atomic_store_explicit(&s->now_serving, n + 1, memory_order_release);
	}
}

/* ------------------------------------------------------------------ threads */

struct worker {
	struct mcs_node node; /* its MCS queue node (mcs only), on its own line */
	_Alignas(CACHE_LINE) int id;
	int cpu;
	enum lock_kind kind;
	struct shared_state *s;
	uint64_t cs_ticks, think_ticks;
	uint64_t count, sum, min, max, violations;
	uint64_t hist[NBINS];
};

static void pin_self(int cpu)
{
	cpu_set_t set = one_cpu(cpu);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (rc != 0)
		die("cannot pin a thread to CPU %d: %s", cpu, strerror(rc));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared_state *s = w->s;
	pin_self(w->cpu);
	atomic_fetch_add(&s->ready, 1);
	while (atomic_load(&s->phase) < 0)
		cpu_relax();
	uint64_t salt = (uint64_t)w->id;
	for (;;) {
		int ph = atomic_load_explicit(&s->phase, memory_order_relaxed);
		if (ph >= 2)
			break;
		uint64_t t0 = ticks();
		lock_acquire(s, w->kind, &w->node);
		uint64_t t1 = ticks();
		/* Critical section: write shared data for cs_ticks; check mutual exclusion. */
		s->owner = w->id;
		uint64_t end = t1 + w->cs_ticks;
		unsigned i = 0;
		do {
			s->data[i++ & 7] += salt;
		} while (ticks() < end);
		if (s->owner != w->id)
			w->violations++;
		lock_release(s, w->kind, &w->node);
		if (ph == 1) {
			uint64_t d = t1 - t0;
			w->hist[bin_of(d)]++;
			w->count++;
			w->sum += d;
			if (d > w->max)
				w->max = d;
			if (d < w->min)
				w->min = d;
		}
		/* Think time: local busy work, not spinning on anything shared. */
		if (w->think_ticks) {
			uint64_t tend = ticks() + w->think_ticks;
			while (ticks() < tend)
				__asm__ __volatile__("" ::: "memory");
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ topology */

struct cpuinfo {
	int cpu, package, core, llc, thread_index;
};

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fscanf(f, "%d", out) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* First number of a cpulist such as "0-3,8-11" (the domain's id). */
static int read_first_of_list(const char *path, int *out) { return read_int_file(path, out); }

static int parse_cpulist(const char *s, int *out, int max)
{
	int n = 0;
	const char *p = s;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -1;
		long b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a)
				return -1;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -1;
			out[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return n;
}

static int online_cpus(int *out, int max)
{
	char buf[8192];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f && fgets(buf, sizeof buf, f)) {
		fclose(f);
		int n = parse_cpulist(buf, out, max);
		if (n > 0)
			return n;
	} else if (f) {
		fclose(f);
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	for (long i = 0; i < n && i < max; i++)
		out[i] = (int)i;
	return (int)(n < max ? n : max);
}

static int gather_topology(struct cpuinfo *ci, int max)
{
	static int cpus[MAX_CPUS];
	int n = online_cpus(cpus, max < MAX_CPUS ? max : MAX_CPUS);
	/* Only CPUs this process may run on (a cpuset or taskset may exclude some online ones). */
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
		int m = 0;
		for (int i = 0; i < n; i++)
			if (cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &allowed))
				cpus[m++] = cpus[i];
		n = m;
	}
	char path[256];
	for (int i = 0; i < n; i++) {
		int c = cpus[i];
		ci[i].cpu = c;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		if (read_int_file(path, &ci[i].package))
			ci[i].package = 0;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		if (read_int_file(path, &ci[i].core))
			ci[i].core = c;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", c);
		if (read_first_of_list(path, &ci[i].llc))
			ci[i].llc = -1 - ci[i].package; /* no L3 reported: one domain per socket */
		/* Position among this CPU's SMT siblings (0 = first thread of its core). */
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		ci[i].thread_index = 0;
		FILE *f = fopen(path, "r");
		if (f) {
			char buf[1024];
			int sib[256];
			if (fgets(buf, sizeof buf, f)) {
				int ns = parse_cpulist(buf, sib, 256);
				for (int k = 0; k < ns; k++)
					if (sib[k] < c)
						ci[i].thread_index++;
			}
			fclose(f);
		}
	}
	return n;
}

/* Order CPUs for a placement; returns how many are usable. */
static int placement_order(const char *placement, struct cpuinfo *ci, int n, int *order)
{
	if (strcmp(placement, "compact") == 0) {
		for (int i = 0; i < n; i++)
			order[i] = ci[i].cpu;
		return n;
	}
	if (strcmp(placement, "one-socket") == 0) {
		int m = 0;
		for (int i = 0; i < n; i++)
			if (ci[i].package == ci[0].package)
				order[m++] = ci[i].cpu;
		return m;
	}
	if (strcmp(placement, "scatter") == 0) {
		/* Domains = distinct (package, llc) pairs.  Visit them so consecutive picks alternate
		 * sockets first, then LLC domains inside a socket: order by (rank of the domain inside
		 * its socket, socket).  Inside a domain, first threads of cores before SMT siblings. */
		static int dom_pkg[MAX_CPUS], dom_llc[MAX_CPUS], dom_rank[MAX_CPUS], dom_of[MAX_CPUS];
		static int visit[MAX_CPUS];
		int nd = 0;
		for (int i = 0; i < n; i++) {
			int d;
			for (d = 0; d < nd; d++)
				if (dom_pkg[d] == ci[i].package && dom_llc[d] == ci[i].llc)
					break;
			if (d == nd) {
				dom_pkg[nd] = ci[i].package;
				dom_llc[nd] = ci[i].llc;
				dom_rank[nd] = 0;
				for (int e = 0; e < nd; e++)
					dom_rank[nd] += dom_pkg[e] == ci[i].package;
				nd++;
			}
			dom_of[i] = d;
		}
		for (int d = 0; d < nd; d++)
			visit[d] = d;
		for (int a = 1; a < nd; a++) /* insertion sort by (rank, package) */
			for (int b = a; b > 0; b--) {
				int x = visit[b - 1], y = visit[b];
				if (dom_rank[x] < dom_rank[y] || (dom_rank[x] == dom_rank[y] && dom_pkg[x] <= dom_pkg[y]))
					break;
				visit[b - 1] = y;
				visit[b] = x;
			}
		int m = 0;
		char *used = calloc((size_t)n, 1);
		if (!used)
			die("out of memory");
		for (int smt = 0; smt < 64 && m < n; smt++) {
			int picked = 1;
			while (picked && m < n) {
				picked = 0;
				for (int v = 0; v < nd; v++) {
					for (int i = 0; i < n; i++) {
						if (!used[i] && dom_of[i] == visit[v] && ci[i].thread_index == smt) {
							used[i] = 1;
							order[m++] = ci[i].cpu;
							picked = 1;
							break;
						}
					}
				}
			}
		}
		for (int i = 0; i < n; i++) /* anything left (more than 64 SMT threads per core) */
			if (!used[i])
				order[m++] = ci[i].cpu;
		free(used);
		return m;
	}
	return -1;
}

/* ------------------------------------------------------------------ arguments */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pause_bench [--lock ttas,ticket,mcs] [--threads 1,2,4] [--placement compact|scatter|one-socket]\n"
		"                   [--cpus 0,2,4] [--cs-ns N] [--think-ns N] [--duration-ms N]\n"
		"                   [--warmup-ms N] [--repeats N] [--pause-samples N] [--version]\n"
		"Contend for one spinlock with pinned threads; print tidy CSV on stdout.\n");
}

/* ------------------------------------------------------------------ measurement */

static void emit(const char *lock, int threads, const char *placement, const char *metric,
		 double value, const char *unit, int repeat)
{
	printf("pause,%s,%d,%s,%s,%.10g,%s,%d\n", lock, threads, placement, metric, value, unit, repeat);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* PAUSE latency: median over many short bursts (short so that a hypervisor's pause-loop
 * exiting, which triggers on long uninterrupted PAUSE loops, does not fire). */
static void measure_pause(int cpu, int samples, const char *placement, int repeat)
{
	pin_self(cpu);
	enum { BURST = 32 };
	double *per = malloc(sizeof(double) * (size_t)samples);
	double *ovh = malloc(sizeof(double) * (size_t)samples);
	if (!per || !ovh)
		die("out of memory");
	for (int i = 0; i < samples; i++) {
		uint64_t a = ticks();
		uint64_t b = ticks();
		ovh[i] = (double)(b - a);
		uint64_t t0 = ticks();
		for (int k = 0; k < BURST; k++)
			cpu_relax();
		uint64_t t1 = ticks();
		per[i] = ((double)(t1 - t0) - ovh[i]) / BURST;
		/* a little non-PAUSE work between bursts */
		for (volatile int k = 0; k < 64; k++)
			;
	}
	qsort(per, (size_t)samples, sizeof(double), cmp_double);
	qsort(ovh, (size_t)samples, sizeof(double), cmp_double);
	emit("none", 1, placement, "pause_ns", ticks_to_ns(per[samples / 2]), "ns", repeat);
	emit("none", 1, placement, "pause_ticks", per[samples / 2], "ticks", repeat);
	emit("none", 1, placement, "pause_min_ns", ticks_to_ns(per[0]), "ns", repeat);
	emit("none", 1, placement, "timer_overhead_ns", ticks_to_ns(ovh[samples / 2]), "ns", repeat);
	emit("none", 1, placement, "tick_hz", g_ticks_per_ns * 1e9, "Hz", repeat);
	free(per);
	free(ovh);
}

/* The value (ticks) of rank floor(q * total) (0-based): its bin's midpoint, clamped to the
 * exact min and max (a bin's midpoint can lie past the largest value in it, which would put a
 * percentile above max_ns). */
static double hist_quantile(const uint64_t *h, uint64_t total, double q, uint64_t mn, uint64_t mx)
{
	uint64_t want = (uint64_t)(q * (double)total);
	if (want >= total)
		want = total - 1;
	uint64_t cum = 0;
	double v = (double)mx;
	for (unsigned b = 0; b < NBINS; b++) {
		cum += h[b];
		if (cum > want) {
			v = bin_mid(b);
			break;
		}
	}
	if (v < (double)mn)
		v = (double)mn;
	if (v > (double)mx)
		v = (double)mx;
	return v;
}

static void run_one(enum lock_kind kind, const char *lockname, int nthreads, const int *cpus,
		    const char *placement, uint64_t cs_ns, uint64_t think_ns, uint64_t warmup_ms,
		    uint64_t duration_ms, int repeat)
{
	struct shared_state *s = aligned_alloc(CACHE_LINE, sizeof *s);
	struct worker *w = aligned_alloc(CACHE_LINE, sizeof(struct worker) * (size_t)nthreads);
	pthread_t *tid = calloc((size_t)nthreads, sizeof(pthread_t));
	if (!s || !w || !tid)
		die("out of memory");
	memset(s, 0, sizeof *s);
	memset(w, 0, sizeof(struct worker) * (size_t)nthreads);
	atomic_store(&s->phase, -1);
	for (int i = 0; i < nthreads; i++) {
		w[i].id = i + 1;
		w[i].cpu = cpus[i];
		w[i].kind = kind;
		w[i].s = s;
		w[i].cs_ticks = ns_to_ticks(cs_ns);
		w[i].think_ticks = ns_to_ticks(think_ns);
		w[i].min = UINT64_MAX;
		int rc = pthread_create(&tid[i], NULL, worker_main, &w[i]);
		if (rc)
			die("pthread_create: %s", strerror(rc));
	}
	while (atomic_load(&s->ready) < nthreads)
		sched_yield();
	struct timespec ts = {(time_t)(warmup_ms / 1000), (long)(warmup_ms % 1000) * 1000000L};
	atomic_store(&s->phase, 0);
	nanosleep(&ts, NULL);
	uint64_t m0 = mono_ns();
	atomic_store(&s->phase, 1);
	ts.tv_sec = (time_t)(duration_ms / 1000);
	ts.tv_nsec = (long)(duration_ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	atomic_store(&s->phase, 2);
	uint64_t m1 = mono_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);

	static uint64_t h[NBINS];
	memset(h, 0, sizeof h);
	uint64_t count = 0, sum = 0, mx = 0, mn = UINT64_MAX, viol = 0, cmin = UINT64_MAX, cmax = 0;
	for (int i = 0; i < nthreads; i++) {
		for (unsigned b = 0; b < NBINS; b++)
			h[b] += w[i].hist[b];
		count += w[i].count;
		sum += w[i].sum;
		viol += w[i].violations;
		if (w[i].max > mx)
			mx = w[i].max;
		if (w[i].min < mn)
			mn = w[i].min;
		if (w[i].count < cmin)
			cmin = w[i].count;
		if (w[i].count > cmax)
			cmax = w[i].count;
	}
	double secs = (double)(m1 - m0) / 1e9;
	emit(lockname, nthreads, placement, "acquisitions", (double)count, "count", repeat);
	emit(lockname, nthreads, placement, "acquisitions_per_s", (double)count / secs, "1/s", repeat);
	emit(lockname, nthreads, placement, "duration_s", secs, "s", repeat);
	if (count) {
		emit(lockname, nthreads, placement, "mean_ns", ticks_to_ns((double)sum / (double)count), "ns", repeat);
		emit(lockname, nthreads, placement, "p50_ns", ticks_to_ns(hist_quantile(h, count, 0.50, mn, mx)), "ns", repeat);
		emit(lockname, nthreads, placement, "p90_ns", ticks_to_ns(hist_quantile(h, count, 0.90, mn, mx)), "ns", repeat);
		emit(lockname, nthreads, placement, "p99_ns", ticks_to_ns(hist_quantile(h, count, 0.99, mn, mx)), "ns", repeat);
		emit(lockname, nthreads, placement, "p999_ns", ticks_to_ns(hist_quantile(h, count, 0.999, mn, mx)), "ns", repeat);
		emit(lockname, nthreads, placement, "min_ns", ticks_to_ns((double)mn), "ns", repeat);
		emit(lockname, nthreads, placement, "max_ns", ticks_to_ns((double)mx), "ns", repeat);
		emit(lockname, nthreads, placement, "fairness_min_over_max",
		     cmax ? (double)cmin / (double)cmax : 0.0, "ratio", repeat);
	}
	emit(lockname, nthreads, placement, "mutex_violations", (double)viol, "count", repeat);
	fflush(stdout);
	if (viol)
		die("mutual exclusion violated %llu times (%s lock, %d threads)", (unsigned long long)viol,
		    lockname, nthreads);
	free(s);
	free(w);
	free(tid);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"lock", required_argument, NULL, 'l'},
		{"threads", required_argument, NULL, 't'},
		{"placement", required_argument, NULL, 'p'},
		{"cpus", required_argument, NULL, 'c'},
		{"cs-ns", required_argument, NULL, 's'},
		{"think-ns", required_argument, NULL, 'k'},
		{"duration-ms", required_argument, NULL, 'd'},
		{"warmup-ms", required_argument, NULL, 'w'},
		{"repeats", required_argument, NULL, 'r'},
		{"pause-samples", required_argument, NULL, 'P'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *locks = "ttas,ticket";
	const char *placement = "compact";
	const char *cpus_arg = NULL;
	int threads[MAX_LIST], nthreads_list = 1;
	threads[0] = 1;
	uint64_t cs_ns = 100, think_ns = 0, duration_ms = 1000, warmup_ms = 100;
	int repeats = 3, pause_samples = 2000;

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': locks = optarg; break;
		case 't': nthreads_list = parse_int_list(optarg, threads, MAX_LIST, "threads", 1, MAX_CPUS); break;
		case 'p': placement = optarg; break;
		case 'c': cpus_arg = optarg; break;
		case 's': cs_ns = parse_u64(optarg, "cs-ns", 0, 1000000000ull); break;
		case 'k': think_ns = parse_u64(optarg, "think-ns", 0, 1000000000ull); break;
		case 'd': duration_ms = parse_u64(optarg, "duration-ms", 0, 3600000ull); break;
		case 'w': warmup_ms = parse_u64(optarg, "warmup-ms", 0, 3600000ull); break;
		case 'r': repeats = (int)parse_u64(optarg, "repeats", 0, 100000ull); break;
		case 'P': pause_samples = (int)parse_u64(optarg, "pause-samples", 0, 100000000ull); break;
		case 'V': printf("pause_bench %s\n", PAUSE_BENCH_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);
	if (duration_ms == 0)
		die("--duration-ms must be at least 1");
	if (repeats < 1)
		die("--repeats must be at least 1");
	if (pause_samples < 1)
		die("--pause-samples must be at least 1");

	/* Lock kinds. */
	enum lock_kind kinds[4];
	const char *kind_names[4];
	int nk = 0;
	{
		char *dup = strdup(locks), *save = NULL;
		for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (nk >= 4)
				die("--lock: too many values");
			if (strcmp(tok, "ttas") == 0) {
				kinds[nk] = LOCK_TTAS;
				kind_names[nk++] = "ttas";
			} else if (strcmp(tok, "ticket") == 0) {
				kinds[nk] = LOCK_TICKET;
				kind_names[nk++] = "ticket";
			} else if (strcmp(tok, "mcs") == 0) {
				kinds[nk] = LOCK_MCS;
				kind_names[nk++] = "mcs";
			} else {
				die("--lock: unknown lock '%s' (expected ttas, ticket or mcs)", tok);
			}
		}
		if (nk == 0)
			die("--lock: empty list");
	}

	/* Placement -> ordered CPU list. */
	static struct cpuinfo ci[MAX_CPUS];
	static int order[MAX_CPUS];
	int ncpu = gather_topology(ci, MAX_CPUS);
	int navail;
	char placement_label[512];
	if (cpus_arg) {
		navail = parse_int_list(cpus_arg, order, MAX_CPUS, "cpus", 0, MAX_CPUS - 1);
		for (int i = 0; i < navail; i++) {
			int found = 0;
			for (int j = 0; j < ncpu; j++)
				found |= ci[j].cpu == order[i];
			if (!found)
				die("--cpus: CPU %d is not online or not allowed for this process", order[i]);
			for (int j = 0; j < i; j++)
				if (order[j] == order[i])
					die("--cpus: CPU %d listed twice", order[i]);
		}
		/* A CSV-safe label: cpus=0;2;4 */
		size_t off = (size_t)snprintf(placement_label, sizeof placement_label, "cpus=");
		for (int i = 0; i < navail && off < sizeof placement_label - 12; i++)
			off += (size_t)snprintf(placement_label + off, sizeof placement_label - off, "%s%d",
						i ? ";" : "", order[i]);
	} else {
		navail = placement_order(placement, ci, ncpu, order);
		if (navail < 0)
			die("--placement: unknown placement '%s' (expected compact, scatter or one-socket)", placement);
		snprintf(placement_label, sizeof placement_label, "%s", placement);
	}
	for (int i = 0; i < nthreads_list; i++)
		if (threads[i] > navail)
			die("--threads: %d threads but placement '%s' has only %d CPUs (no oversubscription)",
			    threads[i], placement_label, navail);

	calibrate_ticks("acquisitions");
	for (int i = 0; i < nthreads_list; i++) {
		fprintf(stderr, "pause_bench: info: placement %s threads %d -> cpus ", placement_label, threads[i]);
		for (int k = 0; k < threads[i]; k++)
			fprintf(stderr, "%s%d", k ? "," : "", order[k]);
		fputc('\n', stderr);
	}
	fprintf(stderr, "pause_bench: info: version %s tick source %s %.6f ticks/ns\n", PAUSE_BENCH_VERSION,
		tick_source(), g_ticks_per_ns);

	printf("bench,lock,threads,placement,metric,value,unit,repeat\n");
	for (int r = 0; r < repeats; r++) {
		measure_pause(order[0], pause_samples, placement_label, r);
		/* The main thread sleeps during runs; unpin it so it never competes with a worker. */
		cpu_set_t all;
		CPU_ZERO(&all);
		for (int j = 0; j < ncpu; j++)
			CPU_SET(ci[j].cpu, &all);
		pthread_setaffinity_np(pthread_self(), sizeof all, &all);
		for (int k = 0; k < nk; k++)
			for (int i = 0; i < nthreads_list; i++)
				run_one(kinds[k], kind_names[k], threads[i], order, placement_label, cs_ns, think_ns,
					warmup_ms, duration_ms, r);
	}
	return 0;
}
