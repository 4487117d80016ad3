/*
 * chase_bench -- load-to-use latency of dependent loads against the working set's size, for lines
 * warm in the reading core's own caches and for lines last written by another CPU.
 *
 * The kernel's peer-group walk (fs/pnode.c propagate_mnt(), next_peer()) follows a linked list
 * through every struct mount of a shared mount's peer group: each step's address comes from the
 * load before it, so the walk costs about (loads per step) x (the latency of the cache level its
 * working set fits in).  chase_bench measures that latency on this host: a pointer chase over a
 * random cyclic permutation of 64-byte nodes (one node per cache line, `next` and a payload word
 * in each) spanning S bytes, for each S of --sizes.
 *
 *   local    the reader (the main thread, pinned to CPU A) builds and touches the set, chases
 *            it unrecorded (one pass at least, then more until a pass estimate is good), then
 *            chases timed chunks of whole passes (as many as the estimate says fill --min-ms)
 *            until they add up to --min-ms.
 *   remote   a writer thread pinned to CPU B writes the payload word of every node (in address
 *            order) right before each timed pass; the reader on CPU A then chases exactly one
 *            pass (every node once), timed: every line it loads was last modified by the other
 *            CPU.  Rounds (write, then timed pass) repeat until the passes add up to --min-ms;
 *            one unrecorded round first.  The two threads hand over through two flags on lines
 *            of their own (spinning with PAUSE), outside the timed intervals.
 *
 * The permutation comes from a splitmix64 stream seeded by --seed and the node count (Sattolo's
 * shuffle: one cycle through every node), so a seed gives the same chase on every run; its
 * digest is a CSV row.  The set is mmap'd per (size, repeat) and built by the reader (first
 * touch on CPU A).  --pages small (default) asks for 4 KiB pages (MADV_NOHUGEPAGE), so a chase
 * beyond the TLB's reach pays page walks too; --pages huge asks for transparent huge pages
 * (MADV_HUGEPAGE on a 2 MiB-aligned mapping); the AnonHugePages the kernel really gave is a
 * CSV row either way.  Every timed interval is read on the tick clock (TSC on x86, as
 * walk_bench) and the cost of one clock-read pair is subtracted from it.
 *
 * Per repeat (rounds: repeat 0 of every size and mode, then repeat 1, ...), per size: the set's
 * rows, then each mode's.  Output (stdout): tidy CSV, header
 *     bench,mode,size_bytes,metric,value,unit,repeat
 * documented in README.md.  Bad arguments: one line on stderr, exit 1.  Needs no privileges;
 * a signal ends it at once (nothing to undo: its memory goes with the process).
 *
 * Build: cc -O2 -pthread -o chase_bench chase_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define CHASE_BENCH_VERSION "1"
#define BENCH_NAME "chase_bench"
#include "bench_util.h"
#include "tick_clock.h"

#define CACHE_LINE 64
#define HUGE_PAGE (2ull << 20)
#define MAX_SIZES 64
#define MIN_SIZE (2ull * CACHE_LINE)	/* two nodes: the smallest cycle */
#define MAX_SIZE (64ull << 30)		/* 2^30 nodes: indices fit 32 bits */

/* One node per cache line: the chase reads `next`, the remote writer writes `payload`. */
struct node {
	struct node *next;
	uint64_t payload;
	char pad[CACHE_LINE - sizeof(struct node *) - sizeof(uint64_t)];
} __attribute__((aligned(CACHE_LINE)));
_Static_assert(sizeof(struct node) == CACHE_LINE, "a node is one cache line");

enum { MODE_LOCAL, MODE_REMOTE, NMODES };
static const char *const mode_name[NMODES] = {"local", "remote"};

/* ------------------------------------------------------------------ clock (as walk_bench) */



/* ------------------------------------------------------------------ the set */

struct set {
	struct node *nodes; /* nodes[0..n) */
	uint64_t n;
	void *map;	    /* the mapping (nodes lie inside it, 2 MiB-aligned for huge pages) */
	size_t map_bytes;
	uint32_t digest;    /* FNV-1a of the permutation */
};

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in 0..bound-1 (Lemire's multiply; the bias, < bound / 2^64, does not matter here). */
static inline uint64_t below(uint64_t *state, uint64_t bound)
{
	return (uint64_t)(((unsigned __int128)splitmix64(state) * bound) >> 64);
}

/* mmap S bytes (huge: whole 2 MiB pages, aligned, MADV_HUGEPAGE; else MADV_NOHUGEPAGE) and link its nodes
 * into one random cycle (Sattolo's shuffle), written by the calling thread (first touch). */
static struct set build_set(uint64_t bytes, uint64_t seed, int huge)
{
	struct set s = {.n = bytes / CACHE_LINE};
	/* huge: whole 2 MiB pages from an aligned start, so a set of any size lies on huge pages */
	s.map_bytes = huge ? (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE : bytes;
	s.map = mmap(NULL, s.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.map == MAP_FAILED)
		die("mmap of %llu bytes: %s", (unsigned long long)s.map_bytes, strerror(errno));
	uintptr_t base = (uintptr_t)s.map;
	if (huge)
		base = (base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	s.nodes = (struct node *)base;
	/* Advice only: a kernel without THP refuses it, and the smaps row says what was given. */
	(void)madvise(s.map, s.map_bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);

	uint32_t *perm = malloc(s.n * sizeof *perm);
	if (!perm)
		die("malloc of %llu indices: %s", (unsigned long long)s.n, strerror(errno));
	for (uint64_t i = 0; i < s.n; i++)
		perm[i] = (uint32_t)i;
	uint64_t state = seed ^ (s.n * 0xd1b54a32d192ed03ull);
	for (uint64_t i = s.n - 1; i > 0; i--) { /* Sattolo: j < i, so i -> perm[i] is one cycle */
		uint64_t j = below(&state, i);
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	s.digest = 2166136261u;
	for (uint64_t i = 0; i < s.n; i++) {
		s.nodes[i].next = &s.nodes[perm[i]];
		s.nodes[i].payload = 0;
		for (int b = 0; b < 4; b++)
			s.digest = (s.digest ^ ((perm[i] >> (8 * b)) & 0xffu)) * 16777619u;
	}
	free(perm);
	return s;
}

/* AnonHugePages (kB) of the mapping holding `addr`, from /proc/self/smaps; -1 if unknown. */
static long anon_huge_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int inside = 0;
	long kb = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (inside)
				break;
			inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		} else if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb;
}

/* `loads` dependent loads from *p; returns where it stopped (the next chase starts there). */
static struct node *chase(struct node *p, uint64_t loads)
{
	for (uint64_t i = loads / 8; i; i--) {
		p = p->next; p = p->next; p = p->next; p = p->next;
		p = p->next; p = p->next; p = p->next; p = p->next;
	}
	for (uint64_t i = loads % 8; i; i--)
		p = p->next;
	return p;
}

static struct node *volatile g_sink; /* the chase's end, kept so the compiler keeps the loads */

/* ------------------------------------------------------------------ the writer (remote) */

#define STOP UINT64_MAX

struct writer {
	_Alignas(CACHE_LINE) atomic_uint_fast64_t go;	/* the reader's round number (STOP: end) */
	_Alignas(CACHE_LINE) atomic_uint_fast64_t done;	/* the last round the writer finished */
	_Alignas(CACHE_LINE) struct set *set;
	int cpu;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	cpu_set_t one = one_cpu(w->cpu);
	if (sched_setaffinity(0, sizeof one, &one) != 0)
		die("cannot pin the writer to CPU %d: %s", w->cpu, strerror(errno));
	uint64_t seen = 0;
	for (;;) {
		uint64_t g;
		while ((g = atomic_load_explicit(&w->go, memory_order_acquire)) == seen)
			cpu_relax();
		if (g == STOP)
			return NULL;
		struct node *nodes = w->set->nodes;
		for (uint64_t i = 0, n = w->set->n; i < n; i++)
			nodes[i].payload++;
		seen = g;
		atomic_store_explicit(&w->done, g, memory_order_release);
	}
}

/* ------------------------------------------------------------------ measurements */

struct result {
	uint64_t loads, passes;
	double ticks; /* timed, clock overhead subtracted */
};

/* local: warm up (a pass, then doubling chases until one lasts min/8), then timed chunks of
 * whole passes until they add up to min. */
static struct result measure_local(struct set *s, double min_ticks, double ovh)
{
	struct node *p = s->nodes;
	uint64_t loads = s->n;
	uint64_t t0 = ticks();
	p = chase(p, loads);
	double took = (double)(ticks() - t0) - ovh;
	while (took < min_ticks / 8) {
		loads *= 2;
		t0 = ticks();
		p = chase(p, loads);
		took = (double)(ticks() - t0) - ovh;
	}
	double per_pass = (took > 0 ? took : 1) / (double)loads * (double)s->n;
	uint64_t chunk = (uint64_t)(min_ticks / per_pass) + 1; /* passes the estimate says fill it */
	struct result r = {0};
	while (r.ticks < min_ticks) { /* the estimate can be high (a cold warm-up): chunks add up */
		t0 = ticks();
		p = chase(p, chunk * s->n);
		r.ticks += (double)(ticks() - t0) - ovh;
		r.passes += chunk;
	}
	r.loads = r.passes * s->n;
	g_sink = p;
	return r;
}

/* One remote round: the writer writes every node, then the reader chases one pass, timed. */
static double remote_round(struct writer *w, uint64_t round, struct set *s, struct node **p, double ovh)
{
	atomic_store_explicit(&w->go, round, memory_order_release);
	while (atomic_load_explicit(&w->done, memory_order_acquire) != round)
		cpu_relax();
	uint64_t t0 = ticks();
	*p = chase(*p, s->n);
	return (double)(ticks() - t0) - ovh;
}

static struct result measure_remote(struct set *s, int writer_cpu, double min_ticks, double ovh)
{
	static struct writer w;
	atomic_store(&w.go, 0);
	atomic_store(&w.done, 0);
	w.set = s;
	w.cpu = writer_cpu;
	pthread_t th;
	int rc = pthread_create(&th, NULL, writer_main, &w);
	if (rc)
		die("pthread_create: %s", strerror(rc));
	struct node *p = s->nodes;
	uint64_t round = 1;
	(void)remote_round(&w, round++, s, &p, ovh); /* unrecorded */
	struct result r = {0};
	while (r.ticks < min_ticks) {
		r.ticks += remote_round(&w, round++, s, &p, ovh);
		r.passes++;
	}
	r.loads = r.passes * s->n;
	atomic_store_explicit(&w.go, STOP, memory_order_release);
	pthread_join(th, NULL);
	g_sink = p;
	return r;
}

/* ------------------------------------------------------------------ arguments */

struct config {
	uint64_t sizes[MAX_SIZES];
	int nsizes;
	int modes[NMODES];
	int nmodes;
	int repeats, huge;
	int cpus[2]; /* reader, writer */
	uint64_t seed, min_ms;
};

/* "16K" / "1.5M" / "2G" / "4096": bytes (K, M, G binary), a multiple of 64 in MIN..MAX_SIZE. */
static uint64_t parse_size(const char *s, const char *list)
{
	const char *q = s; /* the form: digits, optionally '.' and digits, optionally K, M or G */
	q += strspn(q, "0123456789");
	if (q > s && *q == '.' && q[1] >= '0' && q[1] <= '9')
		q += 1 + strspn(q + 1, "0123456789");
	if (*q && strchr("KkMmGg", *q))
		q++;
	if (q == s || *s < '0' || *s > '9' || (*q && *q != ','))
		die("--sizes: '%s' is not a list of sizes (bytes, or a number with K, M or G: 16K,1.5M)", list);
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double unit = 1;
	switch (*end) {
	case 'K': case 'k': unit = 1024.0; end++; break;
	case 'M': case 'm': unit = 1024.0 * 1024; end++; break;
	case 'G': case 'g': unit = 1024.0 * 1024 * 1024; end++; break;
	}
	v *= unit;
	if (errno || (*end && *end != ','))
		die("--sizes: '%s' is not a list of sizes (bytes, or a number with K, M or G: 16K,1.5M)", list);
	if (v < (double)MIN_SIZE || v > (double)MAX_SIZE || v != (double)(uint64_t)v ||
	    (uint64_t)v % CACHE_LINE)
		die("--sizes: '%.*s' is not a whole number of 64-byte nodes from %llu bytes to %llu GiB",
		    (int)(end - s), s, (unsigned long long)MIN_SIZE, (unsigned long long)(MAX_SIZE >> 30));
	return (uint64_t)v;
}

static void parse_sizes(const char *list, struct config *cfg)
{
	cfg->nsizes = 0;
	const char *p = list;
	if (!*p)
		die("--sizes: empty list");
	while (*p) {
		if (cfg->nsizes >= MAX_SIZES)
			die("--sizes: more than %d values", MAX_SIZES);
		uint64_t v = parse_size(p, list);
		for (int i = 0; i < cfg->nsizes; i++)
			if (cfg->sizes[i] == v)
				die("--sizes: %llu bytes given twice", (unsigned long long)v);
		cfg->sizes[cfg->nsizes++] = v;
		p = strchr(p, ',');
		if (!p)
			break;
		if (!*++p)
			die("--sizes: '%s' ends with a comma", list);
	}
}

static void parse_modes(const char *list, struct config *cfg)
{
	cfg->nmodes = 0;
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		int m = -1;
		for (int k = 0; k < NMODES; k++)
			if (len == strlen(mode_name[k]) && !strncmp(p, mode_name[k], len))
				m = k;
		if (m < 0)
			die("--mode: '%.*s' is not local or remote", (int)len, p);
		for (int i = 0; i < cfg->nmodes; i++)
			if (cfg->modes[i] == m)
				die("--mode: %s given twice", mode_name[m]);
		cfg->modes[cfg->nmodes++] = m;
		if (!p[len])
			break;
		p += len + 1;
	}
}

static void check_cpus(struct config *cfg, const char *list)
{
	if (list && parse_int_list(list, cfg->cpus, 2, "cpus", 0, CPU_SETSIZE - 1) != 2)
		die("--cpus: '%s' is not two CPUs A,B (reader, writer)", list);
	if (cfg->cpus[0] == cfg->cpus[1])
		die("--cpus: CPU %d given twice; the reader and the writer need two CPUs", cfg->cpus[0]);
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	int remote = 0;
	for (int i = 0; i < cfg->nmodes; i++)
		remote |= cfg->modes[i] == MODE_REMOTE;
	for (int i = 0; i < 1 + remote; i++) /* the writer's CPU only matters for remote */
		if (!CPU_ISSET(cfg->cpus[i], &allowed))
			die("--cpus: CPU %d is not online or not allowed for this process", cfg->cpus[i]);
}

static void check_memory(const struct config *cfg)
{
	uint64_t largest = 0;
	for (int i = 0; i < cfg->nsizes; i++)
		largest = cfg->sizes[i] > largest ? cfg->sizes[i] : largest;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	if (phys && largest > phys / 2)
		die("--sizes: %llu bytes is more than half of this host's %llu MiB of memory",
		    (unsigned long long)largest, (unsigned long long)(phys >> 20));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: chase_bench [--sizes 16K,1M,64M] [--mode local,remote] [--repeats N]\n"
		"                   [--cpus A,B] [--seed N] [--min-ms N] [--pages small|huge] [--version]\n"
		"A pointer chase over a random cycle of 64-byte nodes spanning each size: ns per\n"
		"dependent load, for lines in the reader's (CPU A) own caches (local) and for lines\n"
		"the writer (CPU B) modified right before each pass (remote); tidy CSV on stdout.\n");
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
	static const struct option opts[] = {
		{"sizes", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"repeats", required_argument, NULL, 'r'},
		{"cpus", required_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 'S'},
		{"min-ms", required_argument, NULL, 't'},
		{"pages", required_argument, NULL, 'p'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *cpus = NULL;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': parse_sizes(optarg, cfg); break;
		case 'm': parse_modes(optarg, cfg); break;
		case 'r': cfg->repeats = (int)parse_u64(optarg, "repeats", 1, 100000); break;
		case 'c': cpus = optarg; break;
		case 'S': cfg->seed = parse_u64(optarg, "seed", 0, UINT64_MAX); break;
		case 't': cfg->min_ms = parse_u64(optarg, "min-ms", 1, 600000); break;
		case 'p':
			if (strcmp(optarg, "small") && strcmp(optarg, "huge"))
				die("--pages: '%s' is not small or huge", optarg);
			cfg->huge = !strcmp(optarg, "huge");
			break;
		case 'V': printf("chase_bench %s\n", CHASE_BENCH_VERSION); exit(0);
		case 'h': usage(stdout); exit(0);
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);
	check_cpus(cfg, cpus);
	check_memory(cfg);
}

/* ------------------------------------------------------------------ main */

static void emit(const char *mode, uint64_t size, const char *metric, double value, const char *unit,
		 const char *repeat)
{
	printf("chase,%s,%llu,%s,%.10g,%s,%s\n", mode, (unsigned long long)size, metric, value, unit, repeat);
}

/* What the host's THP setting is (the bracketed word of .../transparent_hugepage/enabled). */
static void thp_setting(char *out, size_t len)
{
	snprintf(out, len, "unavailable");
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		return;
	char line[128];
	if (fgets(line, sizeof line, f)) {
		char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
		if (a && b)
			snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static struct config cfg = {
		.sizes = {16ull << 10, 32ull << 10, 64ull << 10, 128ull << 10, 256ull << 10, 512ull << 10,
			  1ull << 20, 3ull << 19, 2ull << 20, 3ull << 20, 4ull << 20, 6ull << 20, 8ull << 20,
			  16ull << 20, 32ull << 20, 64ull << 20, 128ull << 20, 256ull << 20},
		.nsizes = 18,
		.modes = {MODE_LOCAL, MODE_REMOTE}, .nmodes = 2,
		.repeats = 5, .cpus = {0, 1}, .seed = 0, .min_ms = 20,
	};
	parse_args(argc, argv, &cfg);

	cpu_set_t reader = one_cpu(cfg.cpus[0]);
	if (sched_setaffinity(0, sizeof reader, &reader) != 0)
		die("cannot pin the reader to CPU %d: %s", cfg.cpus[0], strerror(errno));
	calibrate_ticks("the chase");
	double ovh = timer_overhead_ticks();
	double min_ticks = (double)cfg.min_ms * 1e6 * g_ticks_per_ns;

	struct utsname u;
	uname(&u);
	char thp[32];
	thp_setting(thp, sizeof thp);
	fprintf(stderr, "chase_bench: info: version %s kernel %s clock %s %.0f Hz; reader CPU %d, writer CPU %d; "
			"seed %llu; pages %s; thp enabled %s\n",
		CHASE_BENCH_VERSION, u.release, tick_source(), g_ticks_per_ns * 1e9, cfg.cpus[0], cfg.cpus[1],
		(unsigned long long)cfg.seed, cfg.huge ? "huge" : "small", thp);
	printf("bench,mode,size_bytes,metric,value,unit,repeat\n");
	emit("clock", 0, "tick_hz", g_ticks_per_ns * 1e9, "Hz", "all");
	emit("clock", 0, "timer_overhead_ns", ticks_to_ns(ovh), "ns", "all");
	fflush(stdout);

	for (int r = 0; r < cfg.repeats; r++) {
		char rep[16];
		snprintf(rep, sizeof rep, "%d", r);
		for (int i = 0; i < cfg.nsizes; i++) {
			uint64_t size = cfg.sizes[i];
			struct set s = build_set(size, cfg.seed, cfg.huge);
			emit("set", size, "nodes", (double)s.n, "count", rep);
			emit("set", size, "cycle_digest", (double)s.digest, "fnv1a32", rep);
			long kb = anon_huge_kb(s.nodes);
			if (kb >= 0)
				emit("set", size, "anon_huge_kb", (double)kb, "kB", rep);
			for (int k = 0; k < cfg.nmodes; k++) {
				int m = cfg.modes[k];
				struct result res = m == MODE_LOCAL ? measure_local(&s, min_ticks, ovh)
								    : measure_remote(&s, cfg.cpus[1], min_ticks, ovh);
				emit(mode_name[m], size, "loads", (double)res.loads, "count", rep);
				emit(mode_name[m], size, "passes", (double)res.passes, "count", rep);
				emit(mode_name[m], size, "timed_ms", ticks_to_ns(res.ticks) / 1e6, "ms", rep);
				emit(mode_name[m], size, "ns_per_load", ticks_to_ns(res.ticks) / (double)res.loads,
				     "ns", rep);
				fflush(stdout);
			}
			munmap(s.map, s.map_bytes);
		}
	}
	return 0;
}
