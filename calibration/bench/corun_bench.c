/* corun_bench: how much slower CPU work runs while the machine's other CPUs are busy too.
 *
 * On bare metal with SMT off this is ~1 (cores share only the LLC and memory); on a VM the
 * vCPUs may be SMT siblings or share oversubscribed host cores, which the guest cannot see in
 * its topology. cohsim's machine files carry the measured ratio as microarch.corun_slowdown.
 *
 * For each kernel (alu: eight independent multiply-add chains; chase: a dependent walk over
 * a 16 MiB random cycle; sys: fstat() of a private file, kernel entry/exit and a little VFS),
 * run 1 thread alone, then N threads at once, each pinned to its own CPU (the first N this
 * process may run on; default all of them, so both SMT siblings of every core are busy), for a
 * fixed time; report ns per iteration per thread. Repeats alternate alone/together so host
 * drift hits both alike. `cohsim bench corun` builds and runs it.
 *
 *   cc -O2 -pthread corun_bench.c -o corun_bench
 *   ./corun_bench [--threads N] [--ms MS] [--repeats R] [--version] > corun.csv
 *
 * CSV: bench,lock,threads,placement,metric,value,unit,repeat (metric <kernel>_ns_per_iter;
 * with N threads the value is the mean over threads).
 */
#define _GNU_SOURCE
#define BENCH_NAME "corun_bench"
#define CORUN_BENCH_VERSION "2"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"

enum { ALU, CHASE, SYS, NKERNELS };
static const char *const names[NKERNELS] = {"alu", "chase", "sys"};

struct job {
	int cpu, kernel;
	double seconds, ns_per_iter;
	uint32_t *cycle;
	size_t cycle_len;
	pthread_barrier_t *start;
};

static volatile uint64_t sink;

static void *run(void *arg)
{
	struct job *j = arg;
	cpu_set_t set = one_cpu(j->cpu);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
		die("cannot pin a thread to CPU %d", j->cpu);
	char path[64];
	snprintf(path, sizeof path, "/tmp/corun_bench.%d.%d", (int)getpid(), j->cpu);
	int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	unlink(path);
	uint64_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, n = 0;
	uint32_t p = 0;
	pthread_barrier_wait(j->start);
	uint64_t t0 = mono_ns(), t;
	do {
		for (int i = 0; i < 10000; i++) {
			if (j->kernel == ALU) {
				for (int k = 0; k < 8; k++)
					a[k] = a[k] * 6364136223846793005ULL + (uint64_t)k;
			} else if (j->kernel == CHASE) {
				p = j->cycle[p];
			} else {
				struct stat st;
				if (fstat(fd, &st) != 0)
					die("fstat: %s", strerror(errno));
			}
		}
		n += 10000;
		t = mono_ns();
	} while ((double)(t - t0) < j->seconds * 1e9);
	j->ns_per_iter = (double)(t - t0) / (double)n;
	sink = a[0] ^ a[3] ^ a[7] ^ p;
	close(fd);
	return NULL;
}

static double measure(int kernel, const int *cpus, int threads, double seconds, uint32_t *cycle,
		      size_t len)
{
	pthread_t tid[256];
	struct job jobs[256];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){cpus[i], kernel, seconds, 0.0, cycle, len, &start};
		if (pthread_create(&tid[i], NULL, run, &jobs[i]) != 0)
			die("pthread_create: %s", strerror(errno));
	}
	double sum = 0.0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		sum += jobs[i].ns_per_iter;
	}
	pthread_barrier_destroy(&start);
	return sum / threads;
}

/* The CPUs this process may run on, lowest first, at most `max`; how many. */
static int allowed_cpus(int *out, int max)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	int n = 0;
	for (int k = 0; k < CPU_SETSIZE && n < max; k++)
		if (CPU_ISSET(k, &allowed))
			out[n++] = k;
	return n;
}

int main(int argc, char **argv)
{
	static int usable[256];
	int nusable = allowed_cpus(usable, 256);
	int threads = nusable, repeats = 5;
	double seconds = 1.0;
	int ms = 1000, cpus[256];
	static const struct option opts[] = {
		{"threads", required_argument, NULL, 't'},
		{"ms", required_argument, NULL, 'm'},
		{"repeats", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{0, 0, 0, 0},
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': threads = parse_int_list(optarg, cpus, 1, "threads", 2, 256) ? cpus[0] : 0; break;
		case 'm': ms = (int)parse_u64(optarg, "ms", 1, 3600000ull); break;
		case 'r': repeats = (int)parse_u64(optarg, "repeats", 1, 100000ull); break;
		case 'h':
			printf("usage: corun_bench [--threads N>=2] [--ms MS per run] [--repeats R]"
			       " [--version]\n");
			return 0;
		case 'V': printf("corun_bench %s\n", CORUN_BENCH_VERSION); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);
	if (threads < 2 || threads > 256)
		die("needs 2 to 256 CPUs (this process may run on %d; see --threads)", nusable);
	if (threads > nusable)
		die("--threads %d: this process may run on %d CPUs", threads, nusable);
	seconds = ms / 1000.0;
	/* a single random cycle (Sattolo's shuffle) over 16 MiB of 32-bit indices */
	size_t len = (size_t)1 << 22;
	uint32_t *cycle = malloc(len * sizeof *cycle);
	if (!cycle)
		die("out of memory");
	for (size_t i = 0; i < len; i++)
		cycle[i] = (uint32_t)i;
	uint64_t s = 0x9E3779B97F4A7C15ULL;
	for (size_t i = len - 1; i > 0; i--) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		size_t k = (size_t)(s % i);
		uint32_t tmp = cycle[i];
		cycle[i] = cycle[k];
		cycle[k] = tmp;
	}
	printf("bench,lock,threads,placement,metric,value,unit,repeat\n");
	for (int r = 0; r < repeats; r++)
		for (int k = 0; k < NKERNELS; k++)
			for (int pass = 0; pass < 2; pass++) {
				int n = (pass ^ (r & 1)) ? threads : 1; /* alternate which goes first */
				double v = measure(k, usable, n, seconds, cycle, len);
				printf("corun,none,%d,compact,%s_ns_per_iter,%.3f,ns,%d\n", n, names[k], v, r);
				fflush(stdout);
			}
	free(cycle);
	return 0;
}
