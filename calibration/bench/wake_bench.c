/*
 * wake_bench -- wake-up latency: how long a task that slept in the kernel takes to run again
 * when it is woken onto an idle CPU.
 *
 * Two threads ping-pong through one futex (FUTEX_WAIT / FUTEX_WAKE on a shared int, private
 * futex), so each side sleeps in the kernel and is woken by the other; neither ever spins.
 * Thread 1 times every round trip (wake the partner, sleep until it wakes us back) with
 * clock_gettime(CLOCK_MONOTONIC).  Two placements per repeat:
 *
 *   same-cpu   both threads pinned to CPU A: no idle CPU is involved, every wake-up is a
 *              context switch on A;
 *   cross-cpu  thread 1 on CPU A, thread 2 on CPU B: every wake-up lands on a CPU that went idle
 *              when its thread slept (wake-up IPI + the idle CPU's exit from its idle state;
 *              on a VM the host must run the halted vCPU again).
 *
 * A round trip holds two wake-ups and the same syscalls in both placements, so per repeat
 *     wake_ns = max(0, (cross-cpu p50 - same-cpu p50) / 2)
 * is the extra latency of one wake-up onto an idle CPU over one onto the waker's own CPU.
 *
 * With --pace N,... it measures instead how fast one task wakes many (wake_up_q(), as a
 * release of namespace_sem wakes the readers it granted the lock, kernel/locking/rwsem.c
 * rwsem_mark_wake(), and a FUTEX_WAKE of many does, kernel/futex/waitwake.c): N sleepers, on
 * the CPUs other than A in turn, FUTEX_WAIT on one word; once every one is asleep (and its CPU
 * idle for 2 ms) the waker on A bumps the word and calls FUTEX_WAKE(INT_MAX), timed, and each
 * sleeper notes when it runs again.  Per round: step = the waker's call over N (the pace of
 * its wake-ups), spread = first to last sleeper running over N - 1, first = the wake call's
 * start to the first sleeper running.  --pace-busy keeps every sleeper's CPU busy (a spinning
 * thread on each), so a wake-up lands on a running CPU rather than an idle (on a VM, halted)
 * one.  Rows: bench "wake", lock "wake-q", threads N, placement "spread-idle" or
 * "spread-busy"; `cohsim calibrate` reads their step_p50 as the host's wake-up pace.
 *
 * Output (stdout): tidy CSV, the same header as pause_bench:
 *     bench,lock,threads,placement,metric,value,unit,repeat
 * (bench "wake", lock "futex", threads 2).  Informational lines go to stderr prefixed
 * "wake_bench: info:".  Bad arguments or fewer than 2 usable CPUs: one line on stderr, exit 1.
 * See README.md for every metric.
 *
 * Build: cc -O2 -pthread -o wake_bench wake_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAKE_BENCH_VERSION "2"
#define WARMUP_ROUND_TRIPS 500
#define MAX_LIST 256
#define CACHE_LINE 64

#define BENCH_NAME "wake_bench"
#include "bench_util.h"

/* ------------------------------------------------------------------ futex ping-pong */

/* The futex word, alone on its cache line.  0: thread 1's turn (thread 2 sleeps on it);
 * 1: thread 2's turn (thread 1 sleeps on it); 2: stop. */
enum { TURN_PING = 0, TURN_PONG = 1, TURN_STOP = 2 };

struct pingpong {
	_Alignas(CACHE_LINE) atomic_int word;
	_Alignas(CACHE_LINE) uint64_t *samples; /* round trips, ns; thread 1 writes them */
	int warmup, count;
};

static void futex_wait(atomic_int *addr, int expected)
{
	/* Returns at once (EAGAIN) if *addr != expected; spurious returns are re-checked. */
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(atomic_int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Thread 1: hand the turn over, sleep until it comes back; one clock read per round trip. */
static void *ping_main(void *arg)
{
	struct pingpong *p = arg;
	uint64_t t = mono_ns();
	for (int i = 0; i < p->warmup + p->count; i++) {
		atomic_store_explicit(&p->word, TURN_PONG, memory_order_release);
		futex_wake(&p->word);
		while (atomic_load_explicit(&p->word, memory_order_acquire) == TURN_PONG)
			futex_wait(&p->word, TURN_PONG);
		uint64_t now = mono_ns();
		if (i >= p->warmup)
			p->samples[i - p->warmup] = now - t;
		t = now;
	}
	atomic_store_explicit(&p->word, TURN_STOP, memory_order_release);
	futex_wake(&p->word);
	return NULL;
}

/* Thread 2: sleep until it is our turn, hand it straight back. */
static void *pong_main(void *arg)
{
	struct pingpong *p = arg;
	for (;;) {
		int w;
		while ((w = atomic_load_explicit(&p->word, memory_order_acquire)) == TURN_PING)
			futex_wait(&p->word, TURN_PING);
		if (w == TURN_STOP)
			return NULL;
		atomic_store_explicit(&p->word, TURN_PING, memory_order_release);
		futex_wake(&p->word);
	}
}

static void start_pinned(pthread_t *tid, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set = one_cpu(cpu);
	int rc = pthread_attr_init(&attr);
	if (rc == 0)
		rc = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
	if (rc == 0)
		rc = pthread_create(tid, &attr, fn, arg);
	if (rc != 0)
		die("cannot start a thread pinned to CPU %d: %s", cpu, strerror(rc));
	pthread_attr_destroy(&attr);
}

/* ------------------------------------------------------------------ one waker, N sleepers */

#define PACE_IDLE_NS 2000000 /* the sleepers' CPUs idle this long before each wake */

struct pace {
	_Alignas(CACHE_LINE) atomic_int word;   /* the round: a sleeper waits while it is unchanged */
	_Alignas(CACHE_LINE) atomic_int asleep; /* sleepers that have begun waiting, all rounds */
	_Alignas(CACHE_LINE) atomic_int awake;  /* sleepers that ran again this round */
	_Alignas(CACHE_LINE) atomic_int stop;   /* the sleepers (after a last bump) and hogs end */
	uint64_t *woke;                         /* per sleeper: when it ran again, this round */
};

struct sleeper {
	struct pace *p;
	int id;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct pace *p = s->p;
	for (;;) {
		int round = atomic_load_explicit(&p->word, memory_order_acquire);
		atomic_fetch_add_explicit(&p->asleep, 1, memory_order_acq_rel);
		while (atomic_load_explicit(&p->word, memory_order_acquire) == round)
			futex_wait(&p->word, round);
		p->woke[s->id] = mono_ns();
		atomic_fetch_add_explicit(&p->awake, 1, memory_order_acq_rel);
		if (atomic_load_explicit(&p->stop, memory_order_acquire))
			return NULL;
	}
}

static void *hog_main(void *arg)
{
	struct pace *p = arg;
	while (!atomic_load_explicit(&p->stop, memory_order_acquire))
		cpu_relax();
	return NULL;
}

static void wait_for(atomic_int *counter, int value)
{
	while (atomic_load_explicit(counter, memory_order_acquire) < value)
		sched_yield();
}

static void pace_emit(int n, const char *placement, const char *metric, double value, const char *unit,
		      int repeat)
{
	printf("wake,wake-q,%d,%s,%s,%.10g,%s,%d\n", n, placement, metric, value, unit, repeat);
}

/* N sleepers on `cpus[1..ncpus-1]` in turn, the waker (this thread, pinned) on cpus[0];
 * `rounds` timed wakes after one untimed. */
static void run_pace(const int *cpus, int ncpus, int n, int rounds, int busy, int repeat)
{
	struct pace *p = aligned_alloc(CACHE_LINE, sizeof *p);
	if (!p)
		die("out of memory");
	memset(p, 0, sizeof *p);
	p->woke = calloc((size_t)n, sizeof(uint64_t));
	struct sleeper *sl = calloc((size_t)n, sizeof *sl);
	pthread_t *tids = calloc((size_t)(n + ncpus), sizeof(pthread_t));
	uint64_t *step = malloc(sizeof(uint64_t) * (size_t)rounds), *spread = malloc(sizeof(uint64_t) * (size_t)rounds),
		 *first = malloc(sizeof(uint64_t) * (size_t)rounds);
	if (!p->woke || !sl || !tids || !step || !spread || !first)
		die("out of memory (%d sleepers)", n);
	cpu_set_t mine = one_cpu(cpus[0]);
	if (sched_setaffinity(0, sizeof mine, &mine) != 0)
		die("cannot pin the waker to CPU %d: %s", cpus[0], strerror(errno));
	int hogs = 0;
	if (busy)
		for (int k = 1; k < ncpus && k <= n; k++)
			start_pinned(&tids[n + hogs++], cpus[k], hog_main, p);
	for (int i = 0; i < n; i++) {
		sl[i] = (struct sleeper){.p = p, .id = i};
		start_pinned(&tids[i], cpus[1 + i % (ncpus - 1)], sleeper_main, &sl[i]);
	}
	const struct timespec idle = {.tv_sec = 0, .tv_nsec = PACE_IDLE_NS};
	for (int r = -1; r < rounds; r++) {
		wait_for(&p->asleep, n * (r + 2));
		nanosleep(&idle, NULL);
		atomic_store_explicit(&p->awake, 0, memory_order_release);
		int last = r == rounds - 1;
		if (last)
			atomic_store_explicit(&p->stop, 1, memory_order_release);
		uint64_t t0 = mono_ns();
		atomic_fetch_add_explicit(&p->word, 1, memory_order_acq_rel);
		syscall(SYS_futex, &p->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
		uint64_t t1 = mono_ns();
		wait_for(&p->awake, n);
		if (r < 0)
			continue;
		uint64_t lo = UINT64_MAX, hi = 0;
		for (int i = 0; i < n; i++) {
			lo = p->woke[i] < lo ? p->woke[i] : lo;
			hi = p->woke[i] > hi ? p->woke[i] : hi;
		}
		step[r] = (t1 - t0) / (uint64_t)n;
		spread[r] = n > 1 ? (hi - lo) / (uint64_t)(n - 1) : 0;
		first[r] = lo > t0 ? lo - t0 : 0;
	}
	for (int i = 0; i < n + hogs; i++)
		pthread_join(tids[i], NULL);
	const char *placement = busy ? "spread-busy" : "spread-idle";
	struct dist d = dist_of(step, (size_t)rounds);
	pace_emit(n, placement, "samples", (double)rounds, "count", repeat);
	pace_emit(n, placement, "step_p50", d.p50, "ns", repeat);
	pace_emit(n, placement, "step_p90", d.p90, "ns", repeat);
	if (n > 1)
		pace_emit(n, placement, "spread_p50", dist_of(spread, (size_t)rounds).p50, "ns", repeat);
	pace_emit(n, placement, "first_p50", dist_of(first, (size_t)rounds).p50, "ns", repeat);
	fflush(stdout);
	free(step);
	free(spread);
	free(first);
	free(tids);
	free(sl);
	free(p->woke);
	free(p);
}

/* ------------------------------------------------------------------ measurement */

static void emit(const char *placement, const char *metric, double value, const char *unit, int repeat)
{
	printf("wake,futex,2,%s,%s,%.10g,%s,%d\n", placement, metric, value, unit, repeat);
}

/* One placement: `samples` timed round trips after the warm-up; returns their p50 (ns). */
static double run_one(const char *placement, int cpu1, int cpu2, int samples, int repeat)
{
	struct pingpong *p = aligned_alloc(CACHE_LINE, sizeof *p);
	if (!p)
		die("out of memory");
	memset(p, 0, sizeof *p);
	p->samples = malloc(sizeof(uint64_t) * (size_t)samples);
	if (!p->samples)
		die("out of memory (%d samples)", samples);
	p->warmup = WARMUP_ROUND_TRIPS;
	p->count = samples;
	atomic_store(&p->word, TURN_PING);
	pthread_t t1, t2;
	/* Thread 2 first, so it is asleep on the futex when the first round trip starts. */
	start_pinned(&t2, cpu2, pong_main, p);
	start_pinned(&t1, cpu1, ping_main, p);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);

	struct dist d = dist_of(p->samples, (size_t)samples);
	emit(placement, "p50_ns", d.p50, "ns", repeat);
	emit(placement, "p90_ns", d.p90, "ns", repeat);
	emit(placement, "p99_ns", d.p99, "ns", repeat);
	emit(placement, "mean_ns", d.mean, "ns", repeat);
	emit(placement, "min_ns", d.min, "ns", repeat);
	emit(placement, "max_ns", d.max, "ns", repeat);
	emit(placement, "round_trips", (double)samples, "count", repeat);
	fflush(stdout);
	free(p->samples);
	free(p);
	return d.p50;
}

/* ------------------------------------------------------------------ arguments */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wake_bench [--cpus A,B] [--samples N] [--repeats N] [--version]\n"
		"       wake_bench --pace N,... [--pace-busy] [--samples ROUNDS] [--repeats N]\n"
		"Two threads ping-pong through a futex, on one CPU (A) and across two (A and B);\n"
		"print round-trip latencies and the derived wake-up latency as tidy CSV on stdout.\n"
		"Default CPUs: the first two this process may run on.  With --pace: one waker on the\n"
		"first CPU wakes N sleepers spread over the others at once (FUTEX_WAKE), timed.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"cpus", required_argument, NULL, 'c'},
		{"samples", required_argument, NULL, 's'},
		{"repeats", required_argument, NULL, 'r'},
		{"pace", required_argument, NULL, 'p'},
		{"pace-busy", no_argument, NULL, 'b'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *cpus_arg = NULL, *pace_arg = NULL;
	int samples = -1, repeats = 5, pace_busy = 0;

	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cpus_arg = optarg; break;
		case 's': samples = (int)parse_u64(optarg, "samples", 1, 10000000ull); break;
		case 'r': repeats = (int)parse_u64(optarg, "repeats", 1, 100000ull); break;
		case 'p': pace_arg = optarg; break;
		case 'b': pace_busy = 1; break;
		case 'V': printf("wake_bench %s\n", WAKE_BENCH_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);

	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	if (pace_busy && !pace_arg)
		die("--pace-busy: only with --pace");
	if (pace_arg) {
		if (cpus_arg)
			die("--cpus: not with --pace (the waker takes the first allowed CPU, the sleepers the others)");
		int ns[MAX_LIST], cpus[CPU_SETSIZE], ncpus = 0;
		int nn = parse_int_list(pace_arg, ns, MAX_LIST, "pace", 1, 4096);
		for (int k = 0; k < CPU_SETSIZE; k++)
			if (CPU_ISSET(k, &allowed))
				cpus[ncpus++] = k;
		if (ncpus < 2)
			die("--pace needs 2 CPUs (a waker and the sleepers' CPUs), but this process may run on one");
		int rounds = samples > 0 ? samples : 50;
		fprintf(stderr, "wake_bench: info: version %s pace waker CPU %d, sleepers on %d CPUs, %s, %d rounds\n",
			WAKE_BENCH_VERSION, cpus[0], ncpus - 1, pace_busy ? "busy" : "idle", rounds);
		printf("bench,lock,threads,placement,metric,value,unit,repeat\n");
		for (int r = 0; r < repeats; r++)
			for (int i = 0; i < nn; i++)
				run_pace(cpus, ncpus, ns[i], rounds, pace_busy, r);
		return 0;
	}
	if (samples < 0)
		samples = 20000;
	int cpus[MAX_LIST];
	if (cpus_arg) {
		int n = parse_int_list(cpus_arg, cpus, MAX_LIST, "cpus", 0, INT_MAX);
		if (n != 2)
			die("--cpus: '%s' names %d CPU%s; give exactly two, A,B", cpus_arg, n, n == 1 ? "" : "s");
		if (cpus[0] == cpus[1])
			die("--cpus: '%s' names CPU %d twice; give two different CPUs", cpus_arg, cpus[0]);
		for (int i = 0; i < 2; i++)
			if (cpus[i] >= CPU_SETSIZE || !CPU_ISSET(cpus[i], &allowed))
				die("--cpus: CPU %d is not online or not allowed for this process", cpus[i]);
	} else {
		int n = 0;
		for (int k = 0; k < CPU_SETSIZE && n < 2; k++)
			if (CPU_ISSET(k, &allowed))
				cpus[n++] = k;
		if (n < 2)
			die("needs 2 CPUs to measure a cross-CPU wake-up, but this process may run on only "
			    "one (CPU %d; see taskset/cpuset)", n ? cpus[0] : -1);
	}
	fprintf(stderr, "wake_bench: info: version %s cpus %d,%d samples %d warm-up %d\n",
		WAKE_BENCH_VERSION, cpus[0], cpus[1], samples, WARMUP_ROUND_TRIPS);

	printf("bench,lock,threads,placement,metric,value,unit,repeat\n");
	for (int r = 0; r < repeats; r++) {
		double same = run_one("same-cpu", cpus[0], cpus[0], samples, r);
		double cross = run_one("cross-cpu", cpus[0], cpus[1], samples, r);
		double wake = (cross - same) / 2.0;
		emit("derived", "wake_ns", wake > 0 ? wake : 0.0, "ns", r);
		fflush(stdout);
	}
	return 0;
}
