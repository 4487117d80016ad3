/*
 * walk_bench -- path walkers against containerd's mount sequence, on the real kernel.
 *
 * Every path lookup starts in path_init() (fs/namei.c), which reads mount_lock's sequence
 * counter and spins (cpu_relax) while a writer holds mount_lock (lock_mount_hash(): every
 * attach, detach and idmap change); a walk that saw the counter move falls back
 * (__legitimize_mnt takes the lock, or the walk is redone with references).  During a
 * container-start burst many CPUs walk paths (runc, containerd, kubelet) while containerd's
 * mounts hold the lock.  walk_bench measures both sides on one host:
 *
 *   walkers   K threads, each pinned to one CPU, call fstatat(AT_FDCWD, P) (--walk stat) or
 *             openat(AT_FDCWD, P) + close (--walk openat) in a loop on one fixed absolute path P
 *             of 7 components that crosses two mounts (the scratch tmpfs and a second tmpfs
 *             inside it); every call is timed on the tick clock (TSC on x86, as pause_bench)
 *             into a per-thread log-linear histogram.
 *   mounters  M threads, each pinned, run containerd 2.0/2.1's per-layer idmapped rootfs
 *             sequence for L layers over and over (mount_bench's per-layer strategy: per layer
 *             open_tree(CLONE) + mount_setattr(IDMAP) + move_mount + close; the overlay mount;
 *             umount2(MNT_DETACH) of each bind; umount2 of the overlay), every call timed.
 *
 * Per (K, walk, M, L) and repeat: --warmup-ms unrecorded, then --duration-ms recorded.  K = 0
 * gives the mount ops' baseline, M = 0 the walk's; each repeat runs every configuration once
 * (rounds), so a slow drift of the host touches all of them alike.  Every thread unshares its
 * file-descriptor table and fs_struct (as separate processes have their own): the fd table's
 * spinlock is not what is measured.
 *
 * Must run as root; everything happens in a private mount namespace of its own (nothing is
 * visible outside; the kernel drops its mounts if the process dies).  Output (stdout): tidy CSV,
 * header
 *     bench,walk,role,walkers,mounters,layers,op,metric,value,unit,repeat
 * documented in README.md.  Errors: one line on stderr, exit 1.  Interrupted (SIGINT/SIGTERM/
 * SIGHUP): the run stops, mounters undo their current sequence, the scratch is detached and
 * removed, exit 130.
 *
 * Build: cc -O2 -pthread -o walk_bench walk_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define WALK_BENCH_VERSION "1"
#define BENCH_NAME "walk_bench"
#include "bench_util.h"
#include "tick_clock.h"
#include "scratch.h"
#include "mount_api.h"

#define MAX_CPUS 4096
#define MAX_LIST 64
#define MAX_WALKERS 4096
#define MAX_MOUNTERS 1024
#define MAX_LAYERS 500
#define SUB_BITS 6
#define SUB_COUNT (1u << SUB_BITS)
#define NBINS ((64 - SUB_BITS + 1) * SUB_COUNT)
#define CACHE_LINE 64

/* ------------------------------------------------------------------ clock (as pause_bench) */



/* ------------------------------------------------------------------ histogram */

/* Log-linear: 64 sub-buckets per power of two, so a percentile (a bucket's midpoint) is within
 * ~0.8 % of the true value; count, sum (so the mean), min and max are exact. */
struct hist {
	uint64_t count, sum, min, max;
	uint64_t bins[NBINS];
};

static inline unsigned bin_of(uint64_t v)
{
	if (v < SUB_COUNT)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	unsigned shift = msb - SUB_BITS;
	return (shift + 1u) * SUB_COUNT + (unsigned)((v >> shift) - SUB_COUNT);
}

static double bin_mid(unsigned b)
{
	if (b < SUB_COUNT)
		return (double)b;
	unsigned shift = b / SUB_COUNT - 1u;
	uint64_t lo = ((uint64_t)(SUB_COUNT + b % SUB_COUNT)) << shift;
	uint64_t width = 1ull << shift;
	return (double)lo + (double)(width - 1) / 2.0;
}

static inline void hist_add(struct hist *h, uint64_t v)
{
	h->bins[bin_of(v)]++;
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
}

static void hist_merge(struct hist *into, const struct hist *h)
{
	if (!h->count)
		return;
	for (unsigned b = 0; b < NBINS; b++)
		into->bins[b] += h->bins[b];
	if (into->count == 0 || h->min < into->min)
		into->min = h->min;
	if (h->max > into->max)
		into->max = h->max;
	into->count += h->count;
	into->sum += h->sum;
}

/* The value (ticks) of rank floor(q * count) (0-based), clamped to the exact min and max. */
static double hist_quantile(const struct hist *h, double q)
{
	uint64_t want = (uint64_t)(q * (double)h->count);
	if (want >= h->count)
		want = h->count - 1;
	uint64_t cum = 0;
	double v = (double)h->max;
	for (unsigned b = 0; b < NBINS; b++) {
		cum += h->bins[b];
		if (cum > want) {
			v = bin_mid(b);
			break;
		}
	}
	if (v < (double)h->min)
		v = (double)h->min;
	if (v > (double)h->max)
		v = (double)h->max;
	return v;
}

/* ------------------------------------------------------------------ configuration and state */

/* fstat: the control, fstat(2) of the same file through an fd opened once: a syscall of about
 * the same work with no path walk, so no read of mount_lock's counter. */
enum walk_kind { WALK_NONE, WALK_STAT, WALK_OPENAT, WALK_FSTAT, WALK_COUNT };
static const char *const walk_name[WALK_COUNT] = {"none", "stat", "openat", "fstat"};

/* A mounter's timed calls, mount_bench's labels; `sequence` is one whole sequence. */
enum op {
	OP_OPEN_TREE,
	OP_MOUNT_SETATTR,
	OP_MOVE_MOUNT,
	OP_CLOSE,
	OP_MOUNT,
	OP_UMOUNT2,
	OP_UMOUNT2_OVERLAY,
	OP_SEQUENCE,
	OP_COUNT
};
static const char *const op_name[OP_COUNT] = {"open_tree", "mount_setattr", "move_mount", "close",
					      "mount",     "umount2",       "umount2_overlay", "sequence"};

struct config {
	int walkers[MAX_LIST], nwalkers;
	int mounters[MAX_LIST], nmounters;
	int layers[MAX_LIST], nlayers;
	int walks[WALK_COUNT], nwalks;
	int cpus[MAX_CPUS], ncpus;
	int max_walkers, max_mounters, max_layers;
	int repeats, oversubscribe;
	uint64_t duration_ms, warmup_ms;
	const char *tmp_parent;
};

/* What the threads of one run share; each field group on its own cache line. */
struct run_ctl {
	_Alignas(CACHE_LINE) atomic_int phase; /* -1 probe, 0 warm-up, 1 measured, 2 stop */
	_Alignas(CACHE_LINE) atomic_int failed;
	char err[512];
	pthread_barrier_t go;
	pthread_t main_thread;
};

enum role { ROLE_WALKER, ROLE_MOUNTER };

struct thr {
	_Alignas(CACHE_LINE) int id, cpu, role, walk, layers;
	pthread_t tid;
	/* mounter: paths of its layers, bind targets and overlay */
	char **layer_path, **tmp_path;
	char *merged, *opts;
	uint64_t mount_ops; /* successful attaches and detaches in the measured window */
	struct hist *h;     /* walker: 1 (its calls); mounter: OP_COUNT */
	/* from the start barrier to its end: time it waited runnable for its CPU (another task
	 * had it), and involuntary context switches; run_delay -1 without schedstat */
	int64_t run_delay_ns;
	long nivcsw;
};

static struct run_ctl *g_ctl;
static int g_userns_fd = -1;
static char g_walk_path[PATH_MAX];

static void teardown(void)
{
	scratch_release();
	if (g_userns_fd >= 0) {
		close(g_userns_fd);
		g_userns_fd = -1;
	}
}

/* A thread's error: the first one is kept; the run stops and the main thread is woken. */
static void thr_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void thr_fail(const char *fmt, ...)
{
	int expected = 0;
	if (atomic_compare_exchange_strong(&g_ctl->failed, &expected, 1)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g_ctl->err, sizeof g_ctl->err, fmt, ap);
		va_end(ap);
	}
	atomic_store(&g_ctl->phase, 2);
	pthread_kill(g_ctl->main_thread, SIGUSR1);
}

static void on_wake(int sig) { (void)sig; }

/* This thread's run delay so far (ns waiting runnable on a runqueue; -1 where the kernel has no
 * /proc/thread-self/schedstat) and its involuntary context switches. */
static void sched_now(int64_t *run_delay, long *nivcsw)
{
	unsigned long long cpu = 0, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	*run_delay = f && fscanf(f, "%llu %llu", &cpu, &delay) == 2 ? (int64_t)delay : -1;
	if (f)
		fclose(f);
	struct rusage ru;
	*nivcsw = getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

static void sched_start(struct thr *t) { sched_now(&t->run_delay_ns, &t->nivcsw); }

static void sched_end(struct thr *t)
{
	int64_t d;
	long n;
	sched_now(&d, &n);
	t->run_delay_ns = d < 0 || t->run_delay_ns < 0 ? -1 : d - t->run_delay_ns;
	t->nivcsw = n - t->nivcsw;
}

/* ------------------------------------------------------------------ walkers */

static inline int walk_once(int kind, const char *path, int fd)
{
	struct stat st;
	if (kind == WALK_STAT)
		return fstatat(AT_FDCWD, path, &st, 0);
	if (kind == WALK_FSTAT)
		return fstat(fd, &st);
	fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return close(fd);
}

/* Each thread gets its own fd table and fs_struct, as a separate process has. */
static int thread_private(void)
{
	if (unshare(CLONE_FILES | CLONE_FS) != 0) {
		thr_fail("unshare(CLONE_FILES|CLONE_FS) in a thread: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void *walker_main(void *arg)
{
	struct thr *t = arg;
	int ok = thread_private() == 0, fd = -1;
	if (ok && t->walk == WALK_FSTAT && (fd = open(g_walk_path, O_RDONLY | O_CLOEXEC)) < 0) {
		thr_fail("walker %d: open(%s): %s", t->id, g_walk_path, strerror(errno));
		ok = 0;
	}
	pthread_barrier_wait(&g_ctl->go);
	sched_start(t);
	struct hist *h = t->h;
	const char *path = g_walk_path;
	static const char *const call[WALK_COUNT] = {"", "fstatat", "openat+close", "fstat"};
	while (ok) {
		int ph = atomic_load_explicit(&g_ctl->phase, memory_order_relaxed);
		if (ph >= 2)
			break;
		uint64_t t0 = ticks();
		int r = walk_once(t->walk, path, fd);
		uint64_t t1 = ticks();
		if (r != 0) {
			thr_fail("walker %d: %s(%s): %s", t->id, call[t->walk], path, strerror(errno));
			break;
		}
		if (ph == 1)
			hist_add(h, t1 - t0);
	}
	sched_end(t);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ------------------------------------------------------------------ mounters */

/* Time one call into the op's histogram when it starts in the measured window. */
#define TIMED(m, op, expr)                                                                              \
	({                                                                                              \
		int _rec = atomic_load_explicit(&g_ctl->phase, memory_order_relaxed) == 1;             \
		uint64_t _t0 = ticks();                                                                 \
		long _r = (long)(expr);                                                                 \
		uint64_t _t1 = ticks();                                                                 \
		int _e = _r < 0 ? errno : 0;                                                            \
		if (_rec && (m)->h) {                                                                   \
			hist_add(&(m)->h[op], _t1 - _t0);                                               \
			(m)->mount_ops += _r >= 0 && (op == OP_MOVE_MOUNT || op == OP_MOUNT ||           \
						      op == OP_UMOUNT2 || op == OP_UMOUNT2_OVERLAY);    \
		}                                                                                       \
		errno = _e;                                                                             \
		_r;                                                                                     \
	})

/* mount_bench's per-layer sequence (containerd 2.0/2.1), the same calls with the same flags. */
static int seq_per_layer(struct thr *m)
{
	struct mb_mount_attr attr = {.attr_set = MB_MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)g_userns_fd};
	int mounted = 0, rc = -1;
	for (int i = 0; i < m->layers; i++) {
		int fd = (int)TIMED(m, OP_OPEN_TREE,
				    sys_open_tree(-EBADF, m->layer_path[i],
						  MB_OPEN_TREE_CLONE | O_CLOEXEC | MB_AT_EMPTY_PATH));
		if (fd < 0) {
			thr_fail("mounter %d: open_tree(%s): %s", m->id, m->layer_path[i], strerror(errno));
			goto out;
		}
		if (TIMED(m, OP_MOUNT_SETATTR, sys_mount_setattr(fd, "", MB_AT_EMPTY_PATH, &attr)) < 0) {
			thr_fail("mounter %d: mount_setattr(MOUNT_ATTR_IDMAP) on %s: %s (tmpfs takes idmapped "
				 "mounts from Linux 6.3)", m->id, m->layer_path[i], strerror(errno));
			close(fd);
			goto out;
		}
		if (TIMED(m, OP_MOVE_MOUNT,
			  sys_move_mount(fd, "", -EBADF, m->tmp_path[i], MB_MOVE_MOUNT_F_EMPTY_PATH)) < 0) {
			thr_fail("mounter %d: move_mount(-> %s): %s", m->id, m->tmp_path[i], strerror(errno));
			close(fd);
			goto out;
		}
		mounted++;
		TIMED(m, OP_CLOSE, close(fd));
	}
	if (TIMED(m, OP_MOUNT, mount("overlay", m->merged, "overlay", 0, m->opts)) < 0) {
		thr_fail("mounter %d: mount(overlay, %d lowerdirs): %s", m->id, m->layers, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < mounted; i++)
		if (TIMED(m, OP_UMOUNT2, umount2(m->tmp_path[i], MNT_DETACH)) < 0 && rc == 0) {
			thr_fail("mounter %d: umount2(%s, MNT_DETACH): %s", m->id, m->tmp_path[i], strerror(errno));
			rc = -1;
		}
	if (rc == 0 && TIMED(m, OP_UMOUNT2_OVERLAY, umount2(m->merged, 0)) < 0) {
		thr_fail("mounter %d: umount2(%s): %s", m->id, m->merged, strerror(errno));
		umount2(m->merged, MNT_DETACH);
		rc = -1;
	}
	return rc;
}

static void *mounter_main(void *arg)
{
	struct thr *m = arg;
	int ok = thread_private() == 0;
	pthread_barrier_wait(&g_ctl->go);
	sched_start(m);
	while (ok && atomic_load_explicit(&g_ctl->phase, memory_order_relaxed) < 2) {
		int before = atomic_load_explicit(&g_ctl->phase, memory_order_relaxed);
		uint64_t t0 = ticks();
		if (seq_per_layer(m) != 0)
			break;
		uint64_t t1 = ticks();
		/* a sequence counts when it started and ended in the measured window */
		if (before == 1 && atomic_load_explicit(&g_ctl->phase, memory_order_relaxed) == 1)
			hist_add(&m->h[OP_SEQUENCE], t1 - t0);
	}
	sched_end(m);
	return NULL;
}

/* ------------------------------------------------------------------ set-up */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

static void xmkdir(const char *p)
{
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		die("mkdir(%s): %s", p, strerror(errno));
}

static void xmknod(const char *p)
{
	if (mknod(p, S_IFREG | 0644, 0) != 0 && errno != EEXIST)
		die("create %s: %s", p, strerror(errno));
}

/* Mounts at or below the scratch: lines of /proc/self/mountinfo whose mount point (field 5,
 * octal-escaped as the kernel writes it) is the scratch or lies under it.  Only these: the rest
 * of the namespace's copy of the host table can change under us (an automount copied in at
 * unshare, say debugfs's tracefs, expires on its own). */
static int count_mounts(void)
{
	char esc[4 * PATH_MAX + 1];
	size_t e = 0;
	for (const char *c = g_scratch; *c && e + 4 < sizeof esc; c++)
		e += (size_t)(strchr(" \t\n\\", *c) ? snprintf(esc + e, sizeof esc - e, "\\%03o", (unsigned char)*c)
						       : snprintf(esc + e, sizeof esc - e, "%c", *c));
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		die("open(/proc/self/mountinfo): %s", strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	while (getline(&line, &cap, f) > 0) {
		char *field = line;
		for (int i = 0; i < 4 && field; i++)
			field = strchr(field, ' ') ? strchr(field, ' ') + 1 : NULL;
		if (field && strncmp(field, esc, e) == 0 && (field[e] == ' ' || field[e] == '/'))
			n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* The walkers' target: a second tmpfs at S/walk holding a/b/c/f, so that the walk of
 * S/walk/a/b/c/f from / crosses into the scratch tmpfs and into this one. */
static void make_walk_target(void)
{
	char *w = xasprintf("%s/walk", g_scratch);
	xmkdir(w);
	if (mount("tmpfs", w, "tmpfs", 0, "mode=0755") != 0)
		die("mount tmpfs on %s: %s", w, strerror(errno));
	char *a = xasprintf("%s/a", w), *b = xasprintf("%s/a/b", w), *c = xasprintf("%s/a/b/c", w);
	xmkdir(a);
	xmkdir(b);
	xmkdir(c);
	snprintf(g_walk_path, sizeof g_walk_path, "%s/a/b/c/f", w);
	xmknod(g_walk_path);
	free(a);
	free(b);
	free(c);
	free(w);
}

/* Layout, as mount_bench's (short names keep the overlay option string short):
 *   S/l/<m>/<i>  layer i of mounter m, holding one file;  S/<m>/<i>  its bind target
 *   S/<m>/m merged, S/<m>/u upper, S/<m>/k work */
static void make_mounter_dirs(int max_mounters, int max_layers)
{
	char *p = xasprintf("%s/l", g_scratch);
	xmkdir(p);
	free(p);
	for (int m = 0; m < max_mounters; m++) {
		char *d = xasprintf("%s/l/%d", g_scratch, m);
		xmkdir(d);
		for (int i = 0; i < max_layers; i++) {
			char *ld = xasprintf("%s/%d", d, i), *f = xasprintf("%s/%d/layer-%d", d, i, i);
			xmkdir(ld);
			xmknod(f);
			free(ld);
			free(f);
		}
		free(d);
		const char *sub[] = {"", "/m", "/u", "/k"};
		for (size_t k = 0; k < sizeof sub / sizeof *sub; k++) {
			char *s = xasprintf("%s/%d%s", g_scratch, m, sub[k]);
			xmkdir(s);
			free(s);
		}
		for (int i = 0; i < max_layers; i++) {
			char *s = xasprintf("%s/%d/%d", g_scratch, m, i);
			xmkdir(s);
			free(s);
		}
	}
}

static void mounter_paths(struct thr *m, int id, int layers)
{
	m->layers = layers;
	m->layer_path = calloc((size_t)layers, sizeof(char *));
	m->tmp_path = calloc((size_t)layers, sizeof(char *));
	if (!m->layer_path || !m->tmp_path)
		die("out of memory");
	m->merged = xasprintf("%s/%d/m", g_scratch, id);
	size_t cap = 64 + (size_t)layers * (strlen(g_scratch) + 32) + 3 * PATH_MAX;
	char *o = malloc(cap);
	if (!o)
		die("out of memory");
	size_t a = (size_t)snprintf(o, cap, "lowerdir=");
	for (int i = 0; i < layers; i++) {
		m->layer_path[i] = xasprintf("%s/l/%d/%d", g_scratch, id, i);
		m->tmp_path[i] = xasprintf("%s/%d/%d", g_scratch, id, i);
		a += (size_t)snprintf(o + a, cap - a, "%s%s", i ? ":" : "", m->tmp_path[i]);
	}
	snprintf(o + a, cap - a, ",upperdir=%s/%d/u,workdir=%s/%d/k", g_scratch, id, g_scratch, id);
	if (strlen(o) >= 4096)
		die("%d layers make an overlay mount option string of %zu bytes; mount(2) takes at most one "
		    "page (4095) -- use fewer layers or a shorter --tmpdir", layers, strlen(o));
	m->opts = o;
}

static void free_mounter_paths(struct thr *m)
{
	for (int i = 0; i < m->layers; i++) {
		free(m->layer_path[i]);
		free(m->tmp_path[i]);
	}
	free(m->layer_path);
	free(m->tmp_path);
	free(m->merged);
	free(m->opts);
}

/* Sleep until `ns` from now, or until a signal (SIGINT/SIGTERM/SIGHUP, or SIGUSR1 from a thread
 * that failed) says to stop. */
static void nap(uint64_t ns)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	uint64_t t = (uint64_t)until.tv_nsec + ns;
	until.tv_sec += (time_t)(t / 1000000000ull);
	until.tv_nsec = (long)(t % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		if (g_signalled || atomic_load(&g_ctl->failed))
			return;
}

/* ------------------------------------------------------------------ output */

static void emit(int walk, const char *role, int k, int m, int l, const char *op, const char *metric,
		 double value, const char *unit, const char *repeat)
{
	printf("walk,%s,%s,%d,%d,%d,%s,%s,%.10g,%s,%s\n", walk_name[walk], role, k, m, l, op, metric, value,
	       unit, repeat);
}

static void emit_hist(int walk, const char *role, int k, int m, int l, const char *op, const struct hist *h,
		      int p999, const char *rep)
{
	emit(walk, role, k, m, l, op, "count", (double)h->count, "count", rep);
	if (!h->count)
		return;
	emit(walk, role, k, m, l, op, "mean_ns", ticks_to_ns((double)h->sum / (double)h->count), "ns", rep);
	emit(walk, role, k, m, l, op, "p50_ns", ticks_to_ns(hist_quantile(h, 0.50)), "ns", rep);
	emit(walk, role, k, m, l, op, "p90_ns", ticks_to_ns(hist_quantile(h, 0.90)), "ns", rep);
	emit(walk, role, k, m, l, op, "p99_ns", ticks_to_ns(hist_quantile(h, 0.99)), "ns", rep);
	if (p999)
		emit(walk, role, k, m, l, op, "p999_ns", ticks_to_ns(hist_quantile(h, 0.999)), "ns", rep);
	emit(walk, role, k, m, l, op, "min_ns", ticks_to_ns((double)h->min), "ns", rep);
	emit(walk, role, k, m, l, op, "max_ns", ticks_to_ns((double)h->max), "ns", rep);
}

static void emit_run(int walk, int nw, int nm, int layers, int repeat, struct thr *t, double secs, int base,
		     int final)
{
	char rep[16];
	snprintf(rep, sizeof rep, "%d", repeat);
	static struct hist all;
	if (nw) {
		memset(&all, 0, sizeof all);
		for (int i = nm; i < nm + nw; i++)
			hist_merge(&all, t[i].h);
		const char *op = walk_name[walk];
		emit_hist(walk, "walker", nw, nm, layers, op, &all, 1, rep);
		emit(walk, "walker", nw, nm, layers, op, "calls_per_s", (double)all.count / secs, "1/s", rep);
		emit(walk, "walker", nw, nm, layers, op, "calls_per_s_per_walker", (double)all.count / secs / nw,
		     "1/s", rep);
	}
	if (nm) {
		uint64_t ops = 0;
		for (int o = 0; o < OP_COUNT; o++) {
			memset(&all, 0, sizeof all);
			for (int i = 0; i < nm; i++)
				hist_merge(&all, &t[i].h[o]);
			emit_hist(walk, "mounter", nw, nm, layers, op_name[o], &all, 0, rep);
			if (o == OP_SEQUENCE)
				emit(walk, "mounter", nw, nm, layers, "run", "sequences_per_s", (double)all.count / secs,
				     "1/s", rep);
		}
		for (int i = 0; i < nm; i++)
			ops += t[i].mount_ops;
		emit(walk, "mounter", nw, nm, layers, "run", "mount_ops_per_s", (double)ops / secs, "1/s", rep);
	}
	/* per role: how much its threads were kept off their CPUs by other tasks */
	for (int role = 0; role < 2; role++) {
		int from = role ? 0 : nm, to = role ? nm : nm + nw;
		if (from == to)
			continue;
		double wait = 0;
		long sw = 0;
		for (int i = from; i < to; i++) {
			wait = wait < 0 || t[i].run_delay_ns < 0 ? -1 : wait + (double)t[i].run_delay_ns;
			sw += t[i].nivcsw;
		}
		const char *name = role ? "mounter" : "walker";
		if (wait >= 0)
			emit(walk, name, nw, nm, layers, "sched", "runnable_wait_ms", wait / 1e6, "ms", rep);
		emit(walk, name, nw, nm, layers, "sched", "involuntary_switches", (double)sw, "count", rep);
	}
	emit(walk, "run", nw, nm, layers, "run", "duration_s", secs, "s", rep);
	emit(walk, "run", nw, nm, layers, "mount_table", "baseline", (double)base, "mounts", rep);
	emit(walk, "run", nw, nm, layers, "mount_table", "final", (double)final, "mounts", rep);
	fflush(stdout);
}

/* ------------------------------------------------------------------ one run */

static void cpu_names(const struct thr *t, int from, int to, char *out, size_t len)
{
	size_t a = 0;
	out[0] = 0;
	for (int i = from; i < to && a + 12 < len; i++)
		a += (size_t)snprintf(out + a, len - a, "%s%d", i > from ? "," : "", t[i].cpu);
}

/* One (walk, K, M, L, repeat); 0 if interrupted. */
static int run_one(const struct config *cfg, int walk, int nw, int nm, int layers, int repeat)
{
	int n = nw + nm;
	struct thr *t = aligned_alloc(CACHE_LINE, sizeof(struct thr) * (size_t)n);
	if (!t)
		die("out of memory");
	memset(t, 0, sizeof(struct thr) * (size_t)n);
	for (int i = 0; i < n; i++) {
		int mounter = i < nm;
		t[i].id = mounter ? i : i - nm;
		t[i].role = mounter ? ROLE_MOUNTER : ROLE_WALKER;
		/* fixed slots: mounter i on the i-th CPU, walker j on the (max M + j)-th */
		int slot = mounter ? i : cfg->max_mounters + (i - nm);
		t[i].cpu = cfg->cpus[slot % cfg->ncpus];
		t[i].walk = walk;
		t[i].h = calloc(mounter ? OP_COUNT : 1, sizeof(struct hist));
		if (!t[i].h)
			die("out of memory");
		if (mounter)
			mounter_paths(&t[i], i, layers);
	}
	if (repeat == 0) {
		char mc[256], wc[256];
		cpu_names(t, 0, nm, mc, sizeof mc);
		cpu_names(t, nm, n, wc, sizeof wc);
		fprintf(stderr, "walk_bench: info: walkers %d (%s) on CPUs [%s], mounters %d on CPUs [%s], layers %d\n",
			nw, walk_name[walk], wc, nm, mc, layers);
	}
	int base = count_mounts();
	memset(g_ctl->err, 0, sizeof g_ctl->err);
	atomic_store(&g_ctl->failed, 0);
	atomic_store(&g_ctl->phase, 0);
	if (pthread_barrier_init(&g_ctl->go, NULL, (unsigned)n + 1) != 0)
		die("pthread_barrier_init: %s", strerror(errno));

	/* The threads take no signal: SIGINT/SIGTERM/SIGHUP and a failing thread's SIGUSR1 wake this one. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int i = 0; i < n; i++) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		cpu_set_t set = one_cpu(t[i].cpu);
		pthread_attr_setaffinity_np(&attr, sizeof set, &set);
		int rc = pthread_create(&t[i].tid, &attr, t[i].role == ROLE_MOUNTER ? mounter_main : walker_main, &t[i]);
		pthread_attr_destroy(&attr);
		if (rc != 0) /* the threads made so far wait at the barrier and have mounted nothing */
			die("cannot start a thread on CPU %d: %s", t[i].cpu, strerror(rc));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_barrier_wait(&g_ctl->go);
	nap(cfg->warmup_ms * 1000000ull);
	uint64_t m0 = mono_ns();
	int expected = 0;
	atomic_compare_exchange_strong(&g_ctl->phase, &expected, 1);
	if (!g_signalled)
		nap(cfg->duration_ms * 1000000ull);
	uint64_t m1 = mono_ns();
	atomic_store(&g_ctl->phase, 2);
	for (int i = 0; i < n; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&g_ctl->go);
	int final = count_mounts();
	if (atomic_load(&g_ctl->failed))
		die("%s", g_ctl->err);
	if (final != base)
		die("mount table has %d entries after the run, %d before: mounts leaked", final, base);
	if (g_signalled)
		return 0;
	emit_run(walk, nw, nm, layers, repeat, t, (double)(m1 - m0) / 1e9, base, final);
	for (int i = 0; i < n; i++) {
		if (t[i].role == ROLE_MOUNTER)
			free_mounter_paths(&t[i]);
		free(t[i].h);
	}
	free(t);
	return 1;
}

/* One unrecorded sequence on mounter 0's directories before anything is timed: an unusable
 * host (no idmapped tmpfs, no overlayfs) fails here, with the reason. */
static void probe(int layers)
{
	struct thr m;
	memset(&m, 0, sizeof m);
	mounter_paths(&m, 0, layers);
	atomic_store(&g_ctl->phase, -1);
	atomic_store(&g_ctl->failed, 0);
	int base = count_mounts();
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old); /* thr_fail's wake-up is for a run's main thread */
	int rc = seq_per_layer(&m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		die("%s", g_ctl->err);
	if (count_mounts() != base)
		die("the probe sequence left mounts behind");
	free_mounter_paths(&m);
}

/* ------------------------------------------------------------------ arguments */

static void parse_walks(const char *s, struct config *cfg)
{
	if (!*s || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		die("--walk: '%s' is not a comma-separated list of stat, openat, fstat", s);
	cfg->nwalks = 0;
	char *dup = strdup(s), *save = NULL;
	if (!dup)
		die("out of memory");
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;
		for (k = WALK_STAT; k < WALK_COUNT; k++)
			if (strcmp(tok, walk_name[k]) == 0)
				break;
		if (k == WALK_COUNT)
			die("--walk: unknown walk '%s' (expected stat, openat or fstat)", tok);
		for (int i = 0; i < cfg->nwalks; i++)
			if (cfg->walks[i] == k)
				die("--walk: '%s' given twice", tok);
		cfg->walks[cfg->nwalks++] = k;
	}
	free(dup);
}

static int parse_list(const char *s, int *out, const char *what, long lo, long hi)
{
	int n = parse_int_list(s, out, MAX_LIST, what, lo, hi);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (out[i] == out[j])
				die("--%s: %d given twice", what, out[i]);
	return n;
}

static int list_max(const int *v, int n)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* The CPUs the threads go on: --cpus, checked against this process's affinity, or all of those
 * it may use, in order. */
static void resolve_cpus(struct config *cfg, const char *list)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	if (list) {
		cfg->ncpus = parse_int_list(list, cfg->cpus, MAX_CPUS, "cpus", 0, CPU_SETSIZE - 1);
		for (int i = 0; i < cfg->ncpus; i++) {
			if (!CPU_ISSET(cfg->cpus[i], &allowed))
				die("--cpus: CPU %d is not online or not allowed for this process", cfg->cpus[i]);
			for (int j = 0; j < i; j++)
				if (cfg->cpus[j] == cfg->cpus[i])
					die("--cpus: CPU %d given twice", cfg->cpus[i]);
		}
	} else {
		cfg->ncpus = 0;
		for (int c = 0; c < CPU_SETSIZE && cfg->ncpus < MAX_CPUS; c++)
			if (CPU_ISSET(c, &allowed))
				cfg->cpus[cfg->ncpus++] = c;
	}
	int need = cfg->max_walkers + cfg->max_mounters;
	if (need > cfg->ncpus && !cfg->oversubscribe)
		die("%d walkers + %d mounters need %d CPUs, %s %d (one thread per CPU; --oversubscribe to share)",
		    cfg->max_walkers, cfg->max_mounters, need, list ? "--cpus gives" : "this process may use",
		    cfg->ncpus);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: walk_bench [--walkers 0,1] [--mounters 0,1] [--layers 1,10] [--walk stat,openat,fstat]\n"
		"                  [--duration-ms N] [--warmup-ms N] [--repeats N] [--cpus LIST]\n"
		"                  [--oversubscribe] [--tmpdir DIR] [--version]\n"
		"K pinned threads walk a path (fstatat or openat+close; fstat of an open fd as the\n"
		"control) while M pinned threads run\n"
		"containerd's per-layer idmapped mount sequence, as root in a private mount namespace;\n"
		"every call timed; tidy CSV on stdout.\n");
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
	static const struct option opts[] = {
		{"walkers", required_argument, NULL, 'k'},
		{"mounters", required_argument, NULL, 'm'},
		{"layers", required_argument, NULL, 'l'},
		{"walk", required_argument, NULL, 'w'},
		{"duration-ms", required_argument, NULL, 'd'},
		{"warmup-ms", required_argument, NULL, 'u'},
		{"repeats", required_argument, NULL, 'r'},
		{"cpus", required_argument, NULL, 'c'},
		{"oversubscribe", no_argument, NULL, 'o'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	const char *cpus = NULL;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': cfg->nwalkers = parse_list(optarg, cfg->walkers, "walkers", 0, MAX_WALKERS); break;
		case 'm': cfg->nmounters = parse_list(optarg, cfg->mounters, "mounters", 0, MAX_MOUNTERS); break;
		case 'l': cfg->nlayers = parse_list(optarg, cfg->layers, "layers", 1, MAX_LAYERS); break;
		case 'w': parse_walks(optarg, cfg); break;
		case 'd': cfg->duration_ms = parse_u64(optarg, "duration-ms", 1, 3600000); break;
		case 'u': cfg->warmup_ms = parse_u64(optarg, "warmup-ms", 0, 600000); break;
		case 'r': cfg->repeats = (int)parse_u64(optarg, "repeats", 1, 100000); break;
		case 'c': cpus = optarg; break;
		case 'o': cfg->oversubscribe = 1; break;
		case 'T': cfg->tmp_parent = optarg; break;
		case 'V': printf("walk_bench %s\n", WALK_BENCH_VERSION); exit(0);
		case 'h': usage(stdout); exit(0);
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);
	cfg->max_walkers = list_max(cfg->walkers, cfg->nwalkers);
	cfg->max_mounters = list_max(cfg->mounters, cfg->nmounters);
	cfg->max_layers = list_max(cfg->layers, cfg->nlayers);
	if (!cfg->max_walkers && !cfg->max_mounters)
		die("nothing to run: --walkers and --mounters are all 0");
	resolve_cpus(cfg, cpus);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	static struct config cfg = {
		.walkers = {0, 1}, .nwalkers = 2,
		.mounters = {0, 1}, .nmounters = 2,
		.layers = {1, 10}, .nlayers = 2,
		.walks = {WALK_STAT}, .nwalks = 1,
		.repeats = 3, .duration_ms = 1000, .warmup_ms = 100,
	};
	g_parent_pid = getpid();
	parse_args(argc, argv, &cfg);

	/* Up-front checks, before touching anything. */
	if (geteuid() != 0)
		die("must run as root (it creates a mount namespace, mounts and idmapped mounts)");
	if (cfg.max_mounters)
		check_kernel();
	static struct run_ctl ctl;
	g_ctl = &ctl;
	ctl.main_thread = pthread_self();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_wake;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	die_cleanup = teardown;
	scratch_enter_private_ns();
	if (cfg.max_mounters)
		g_userns_fd = make_userns_fd();
	scratch_create(cfg.tmp_parent);
	make_walk_target();
	if (cfg.max_mounters) {
		struct thr longest; /* the last mounter's overlay options, the longest: fit a page? */
		memset(&longest, 0, sizeof longest);
		mounter_paths(&longest, cfg.max_mounters - 1, cfg.max_layers);
		free_mounter_paths(&longest);
		make_mounter_dirs(cfg.max_mounters, cfg.max_layers);
		probe(cfg.max_layers);
	}
	calibrate_ticks("calls");
	double ovh = timer_overhead_ticks();

	struct utsname u;
	uname(&u);
	fprintf(stderr, "walk_bench: info: version %s kernel %s clock %s %.0f Hz; walk path %s; %d CPUs: ",
		WALK_BENCH_VERSION, u.release, tick_source(), g_ticks_per_ns * 1e9, g_walk_path, cfg.ncpus);
	for (int i = 0; i < cfg.ncpus && i < 64; i++)
		fprintf(stderr, "%s%d", i ? "," : "", cfg.cpus[i]);
	fprintf(stderr, "%s\n", cfg.ncpus > 64 ? ",..." : "");
	printf("bench,walk,role,walkers,mounters,layers,op,metric,value,unit,repeat\n");
	emit(WALK_NONE, "clock", 0, 0, 0, "clock", "tick_hz", g_ticks_per_ns * 1e9, "Hz", "all");
	emit(WALK_NONE, "clock", 0, 0, 0, "clock", "timer_overhead_ns", ticks_to_ns(ovh), "ns", "all");
	fflush(stdout);

	static const int no_walk[1] = {WALK_NONE};
	static const int no_layers[1] = {0};
	for (int r = 0; r < cfg.repeats; r++)
		for (int ki = 0; ki < cfg.nwalkers; ki++) {
			int nw = cfg.walkers[ki];
			const int *walks = nw ? cfg.walks : no_walk;
			for (int wi = 0; wi < (nw ? cfg.nwalks : 1); wi++)
				for (int mi = 0; mi < cfg.nmounters; mi++) {
					int nm = cfg.mounters[mi];
					if (!nw && !nm)
						continue;
					const int *layers = nm ? cfg.layers : no_layers;
					for (int li = 0; li < (nm ? cfg.nlayers : 1); li++)
						if (g_signalled || !run_one(&cfg, walks[wi], nw, nm, layers[li], r)) {
							teardown();
							fprintf(stderr, "walk_bench: interrupted; all mounts undone and "
									"scratch removed\n");
							return 130;
						}
				}
		}
	teardown();
	return 0;
}
