/*
 * prop_bench -- two costs that grow with the number of live container mount namespaces and
 * with the mount table: mount propagation into K slave namespaces, and one full read of
 * /proc/self/mountinfo, on the real kernel, timed.
 *
 * Must run as root.  Like ns_bench it enters its own private mount namespace (nothing it
 * mounts is visible to the host; the kernel drops every mount if it dies), mounts a tmpfs on a
 * fresh mkdtemp() directory (the scratch) and makes that tmpfs MS_SHARED.  Two phases:
 *
 *   propagation  per K in --slaves: K holder children each unshare(CLONE_NEWNS) and make their
 *                copy of the scratch MS_REC|MS_SLAVE (as runc's rslave makes a container's copy
 *                of a host mount), then block on a pipe.  The parent times a bind mount of
 *                scratch/src onto scratch/p/t (propagate_mnt(): one copy per slave namespace)
 *                and its umount2(target, 0) (umount propagation into every slave).  On the
 *                first repeat it checks the propagated mount in the first holder's
 *                /proc/<pid>/mountinfo, after the mount and after the umount.
 *   read         per N in --mounts: N bind mounts of scratch/src onto scratch/d/0..N-1.  The
 *                scratch is shared, so every bind joins the scratch's peer group: one group of
 *                N + 1 mounts (times P + 1 with --peers P holder namespaces that keep their
 *                copies as peers, times P + 2 once the reader's copy exists).  Timed: one full
 *                read of /proc/self/mountinfo (open, read() of 4096 bytes until EOF, close) in
 *                the parent (ns "host": its lines are shared:X) and in a child that made its
 *                copy of the scratch rslave (ns "slave": its N + 1 lines are master:X, and for
 *                each the kernel's show_mountinfo() calls get_dominating_id(), which walks the
 *                master's peer ring looking for a peer in the reader's namespace: none is).
 *   ring         per R in --ring (none by default; after the propagation phase, before the
 *                reads, with no holder alive): R bind mounts of scratch/src onto
 *                scratch/d/0..R-1, so the scratch's peer group is a ring of R + 1 mounts
 *                (checked in /proc/self/mountinfo: R + 1 lines with the scratch's shared:X).
 *                Timed, after one warm-up cycle, per repeat: mount(scratch/src2, scratch/p/t,
 *                MS_BIND) and umount2(scratch/p/t, 0); the same bind and umount2(MNT_DETACH);
 *                open_tree(scratch/src2, OPEN_TREE_CLONE) + move_mount() onto scratch/p/t +
 *                close() and umount2(MNT_DETACH), as containerd attaches a layer.  The
 *                destination mount is the scratch, so each attach runs propagate_mnt() over
 *                its R + 1 peers (need_secondary()'s is_subdir() for each: scratch/p/t is not
 *                under any bind's root, so no copy is made) and each unmount walks the
 *                parent's peers (propagate_mount_busy() for flag 0, propagate_umount()).
 *                --ring-cpus LIST: the ring's binds are made, in the same order, by threads
 *                pinned one to each CPU of LIST, bind i by the thread on LIST[i % n] (each
 *                bind's mkdir and mount; the main thread hands them out one at a time and
 *                waits for each), so that neighbours on the ring were allocated from different
 *                CPUs' slabs.  The timed calls stay on the main thread, unpinned.  Either way
 *                the CPU each bind ran on is recorded (sched_getcpu() after the mount).
 *
 * Output (stdout): tidy CSV, header
 *     bench,op,ns,slaves,peers,mounts,metric,value,unit,repeat
 * documented in README.md.  Errors: one line on stderr, exit 1.  Interrupted (SIGINT/SIGTERM/
 * SIGHUP): children are killed and reaped, the scratch is detached and removed, exit 130.
 *
 * Build: cc -O2 -pthread -o prop_bench prop_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH_NAME "prop_bench"
#include "bench_util.h"
#include "scratch.h"

#define PROP_BENCH_VERSION "2"
#define MAX_LIST 64
#define MAX_RING_CPUS 1024
#define MAX_SLAVES 1000
#define MAX_PEERS 64
#define MAX_MOUNTS 90000
#define CHUNK 4096

/* The new mount API (ring phase), under our own names so that this file builds with any libc
 * whether or not its <sys/mount.h> declares them (numbers: the unified syscall table). */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#define PB_OPEN_TREE_CLONE 1u
#define PB_MOVE_MOUNT_F_EMPTY_PATH 0x4u

static char g_src[PATH_MAX + 16], g_src2[PATH_MAX + 16], g_target[PATH_MAX + 16];
static pid_t g_kids[MAX_SLAVES + MAX_PEERS];
static int g_nkids;
static int g_hold[2] = {-1, -1};       /* holders block reading [0]; EOF when [1] closes */

static void reap_kids(int keep)
{
	for (; g_nkids > keep; g_nkids--) {
		pid_t pid = g_kids[g_nkids - 1];
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

static void teardown(void)
{
	if (getpid() != g_parent_pid)
		return;
	reap_kids(0);
	scratch_release();
}

/* A whole mountinfo file: its lines, those with " master:" / " shared:", and whether a line
 * has `point` as its mount point (field 5). */
struct scan {
	int lines, master, shared, found;
};

static struct scan scan_mountinfo(const char *path, const char *point)
{
	struct scan s = {-1, 0, 0, 0};
	FILE *f = fopen(path, "re");
	if (!f)
		return s;
	char *line = NULL;
	size_t cap = 0;
	s.lines = 0;
	while (getline(&line, &cap, f) > 0) {
		s.lines++;
		s.master += strstr(line, " master:") != NULL;
		s.shared += strstr(line, " shared:") != NULL;
		if (point) {
			char mp[PATH_MAX + 64];
			if (sscanf(line, "%*s %*s %*s %*s %4159s", mp) == 1 && strcmp(mp, point) == 0)
				s.found = 1;
		}
	}
	free(line);
	fclose(f);
	return s;
}

/* One timed full read of /proc/self/mountinfo in CHUNK-byte read() calls. */
struct read_result {
	uint64_t ns;
	int reads; /* read() calls, the last one returning 0 included */
	int lines;
	long bytes;
};

static struct read_result timed_read(void)
{
	static char buf[CHUNK];
	struct read_result r = {0, 0, 0, 0};
	uint64_t t0 = mono_ns();
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r.reads = -errno;
		return r;
	}
	ssize_t n;
	do {
		n = read(fd, buf, CHUNK);
		r.reads++;
		if (n > 0) {
			r.bytes += n;
			for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
				r.lines++;
		}
	} while (n > 0 || (n < 0 && errno == EINTR));
	close(fd);
	r.ns = mono_ns() - t0;
	return r;
}

/* Unshare the mount namespace; `slave`: make the scratch subtree rslave. 0 or an errno. */
static int enter_child_ns(int slave)
{
	if (unshare(CLONE_NEWNS) != 0)
		return errno;
	if (slave && mount(NULL, g_scratch, NULL, MS_REC | MS_SLAVE, NULL) != 0)
		return errno;
	return 0;
}

/* A holder: its own namespace (slave or peer copy of the scratch), alive until the parent
 * closes the hold pipe or dies. */
static void spawn_holder(int slave)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != g_parent_pid)
			_exit(1);
		close(ready[0]);
		close(g_hold[1]);
		int err = enter_child_ns(slave);
		if (write(ready[1], &err, sizeof err) != (ssize_t)sizeof err || err)
			_exit(1);
		close(ready[1]);
		char c;
		while (read(g_hold[0], &c, 1) != 0 && (errno == EINTR || errno == 0))
			;
		_exit(0);
	}
	g_kids[g_nkids++] = pid;
	close(ready[1]);
	int err = -1;
	ssize_t got;
	while ((got = read(ready[0], &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (got != (ssize_t)sizeof err)
		die("a holder child died before it was ready");
	if (err)
		die("holder child: unshare/make-%s: %s", slave ? "rslave" : "peer", strerror(err));
}

static void row(const char *op, const char *ns, int k, int p, int n, const char *metric, double value,
		const char *unit, int rep)
{
	printf("prop,%s,%s,%d,%d,%d,%s,%.0f,%s,", op, ns, k, p, n, metric, value, unit);
	if (rep < 0)
		printf("all\n");
	else
		printf("%d\n", rep);
}

static void dist_rows(const char *op, const char *ns, int k, int p, int n, uint64_t *v, int cnt)
{
	if (cnt < 1)
		return;
	struct dist d = dist_of(v, (size_t)cnt);
	row(op, ns, k, p, n, "p50_ns", d.p50, "ns", -1);
	row(op, ns, k, p, n, "mean_ns", d.mean, "ns", -1);
	row(op, ns, k, p, n, "min_ns", d.min, "ns", -1);
	row(op, ns, k, p, n, "max_ns", d.max, "ns", -1);
}

/* Propagation at K live slave holders: a warm-up cycle, then `repeats` timed ones. */
static int run_prop(int k, int repeats)
{
	while (g_nkids < k && !g_signalled)
		spawn_holder(1);
	reap_kids(k);
	if (g_signalled)
		return 0;
	char info[64];
	if (k)
		snprintf(info, sizeof info, "/proc/%d/mountinfo", (int)g_kids[0]);
	uint64_t *tm = calloc((size_t)repeats, sizeof *tm), *tu = calloc((size_t)repeats, sizeof *tu);
	if (!tm || !tu)
		die("out of memory");
	int done = 0;
	for (int rep = -1; rep < repeats && !g_signalled; rep++) {
		struct scan before = {0, 0, 0, 0}, mid = before, after = before;
		if (k && rep == 0)
			before = scan_mountinfo(info, NULL);
		uint64_t t0 = mono_ns();
		if (mount(g_src, g_target, NULL, MS_BIND, NULL) != 0)
			die("bind mount onto %s: %s", g_target, strerror(errno));
		uint64_t t1 = mono_ns();
		if (k && rep == 0)
			mid = scan_mountinfo(info, g_target);
		uint64_t t2 = mono_ns();
		if (umount2(g_target, 0) != 0)
			die("umount2(%s): %s", g_target, strerror(errno));
		uint64_t t3 = mono_ns();
		if (rep < 0)
			continue; /* warm-up */
		if (k && rep == 0) {
			after = scan_mountinfo(info, g_target);
			if (!mid.found || mid.lines != before.lines + 1 || after.found)
				die("K=%d: the bind mount did not propagate into the slave namespace as expected"
				    " (%d lines before, %d with it, found %d, still there after umount %d)",
				    k, before.lines, mid.lines, mid.found, after.found);
			row("propagation", "slave", k, 0, 0, "mounts_before", before.lines, "mounts", -1);
			row("propagation", "slave", k, 0, 0, "mounts_with_bind", mid.lines, "mounts", -1);
			row("propagation", "slave", k, 0, 0, "mounts_after_umount", after.lines, "mounts", -1);
			row("propagation", "slave", k, 0, 0, "seen", mid.found, "count", -1);
		}
		tm[rep] = t1 - t0;
		tu[rep] = t3 - t2;
		row("bind_mount", "host", k, 0, 0, "ns", (double)tm[rep], "ns", rep);
		row("umount", "host", k, 0, 0, "ns", (double)tu[rep], "ns", rep);
		done++;
	}
	dist_rows("bind_mount", "host", k, 0, 0, tm, done);
	dist_rows("umount", "host", k, 0, 0, tu, done);
	free(tm);
	free(tu);
	fflush(stdout);
	return done == repeats;
}

static void read_rows(const char *ns, int p, int n, const struct read_result *r, int rep)
{
	row("read_mountinfo", ns, 0, p, n, "reads", r->reads, "count", rep);
	row("read_mountinfo", ns, 0, p, n, "bytes", (double)r->bytes, "bytes", rep);
	row("read_mountinfo", ns, 0, p, n, "lines", r->lines, "lines", rep);
	row("read_mountinfo", ns, 0, p, n, "ns", (double)r->ns, "ns", rep);
}

/* The slave reader: header (errno, scan), then one read_result per repeat, on fd `out`. */
static void reader_body(int repeats, int out)
{
	int err = enter_child_ns(1);
	struct scan s = {0, 0, 0, 0};
	if (!err)
		s = scan_mountinfo("/proc/self/mountinfo", NULL);
	if (write(out, &err, sizeof err) != (ssize_t)sizeof err || write(out, &s, sizeof s) != (ssize_t)sizeof s || err)
		_exit(1);
	(void)timed_read(); /* warm-up */
	for (int rep = 0; rep < repeats; rep++) {
		struct read_result r = timed_read();
		if (write(out, &r, sizeof r) != (ssize_t)sizeof r)
			_exit(1);
	}
	_exit(0);
}

static int read_full(int fd, void *p, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)p + got, len - got);
		if (n < 0 && errno == EINTR && !g_signalled)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return 1;
}

/* Reads at N mounts: `repeats` in the parent, then `repeats` in a slave reader child. */
static int run_read(int n, int peers, int repeats, int base)
{
	uint64_t *t = calloc((size_t)repeats, sizeof *t);
	if (!t)
		die("out of memory");
	struct scan hs = scan_mountinfo("/proc/self/mountinfo", NULL);
	if (hs.lines != base + 1 + n)
		die("mount table holds %d mounts, expected %d", hs.lines, base + 1 + n);
	row("mount_table", "host", 0, peers, n, "mounts", hs.lines, "mounts", -1);
	row("mount_table", "host", 0, peers, n, "shared_lines", hs.shared, "lines", -1);
	(void)timed_read();
	int done = 0;
	for (int rep = 0; rep < repeats && !g_signalled; rep++) {
		struct read_result r = timed_read();
		read_rows("host", peers, n, &r, rep);
		t[done++] = r.ns;
	}
	dist_rows("read_mountinfo", "host", 0, peers, n, t, done);
	if (done < repeats) {
		free(t);
		return 0;
	}
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		reader_body(repeats, fds[1]);
	}
	close(fds[1]);
	int err = 0;
	struct scan cs;
	done = 0;
	if (read_full(fds[0], &err, sizeof err) && !err && read_full(fds[0], &cs, sizeof cs)) {
		row("mount_table", "slave", 0, peers, n, "mounts", cs.lines, "mounts", -1);
		row("mount_table", "slave", 0, peers, n, "master_lines", cs.master, "lines", -1);
		struct read_result r;
		while (done < repeats && read_full(fds[0], &r, sizeof r)) {
			read_rows("slave", peers, n, &r, done);
			t[done++] = r.ns;
		}
	}
	close(fds[0]);
	if (g_signalled)
		kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (err)
		die("reader child: unshare/make-rslave: %s", strerror(err));
	if (!g_signalled && (done < repeats || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
		die("the reader child died (status %d)", status);
	dist_rows("read_mountinfo", "slave", 0, peers, n, t, done);
	free(t);
	fflush(stdout);
	return done == repeats && !g_signalled;
}

/* The peer group of the mount at `point` in /proc/self/mountinfo: its shared:X (0 if it has
 * none or is not there), how many lines carry that shared:X, how many mounts have it as their
 * parent, and all lines. */
struct group_scan {
	int lines, group, members, children;
};

static int shared_id(const char *line)
{
	const char *p = strstr(line, " shared:");
	return p ? atoi(p + 8) : 0;
}

static struct group_scan scan_group(const char *point)
{
	struct group_scan g = {-1, 0, 0, 0};
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return g;
	int *ids = NULL, *parents = NULL, self = -1;
	size_t cap_ids = 0;
	char *line = NULL;
	size_t cap = 0;
	g.lines = 0;
	while (getline(&line, &cap, f) > 0) {
		if ((size_t)g.lines == cap_ids) {
			cap_ids = cap_ids ? 2 * cap_ids : 1024;
			ids = realloc(ids, cap_ids * sizeof *ids);
			parents = realloc(parents, cap_ids * sizeof *parents);
			if (!ids || !parents)
				die("out of memory");
		}
		int id = -1, parent = -1;
		ids[g.lines] = shared_id(line);
		char mp[PATH_MAX + 64];
		if (sscanf(line, "%d %d %*s %*s %4159s", &id, &parent, mp) == 3 && strcmp(mp, point) == 0) {
			g.group = ids[g.lines]; /* the last (top) mount at `point` */
			self = id;
		}
		parents[g.lines++] = parent;
	}
	for (int i = 0; i < g.lines; i++) {
		g.members += g.group && ids[i] == g.group;
		g.children += self >= 0 && parents[i] == self;
	}
	free(ids);
	free(parents);
	free(line);
	fclose(f);
	return g;
}

static int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int sys_move_mount(int fdf, const char *pf, int fdt, const char *pt, unsigned flags)
{
	return (int)syscall(SYS_move_mount, fdf, pf, fdt, pt, flags);
}

/* The timed calls of the ring phase, in the order of a repeat. */
enum { RB, RU, RB2, RD, ROT, RMM, RCL, RD2, RING_OPS };
static const char *const ring_op[RING_OPS] = {
	"ring_bind", "ring_umount", "ring_bind2", "ring_detach",
	"ring_open_tree", "ring_move_mount", "ring_close", "ring_detach2",
};

/* Die unless scratch/p/t is (want_group != 0: the top mount there, in the scratch's group
 * of `members` mounts) or is not (0) a mount point. */
static void check_target(int r, const char *what, int want_group, int members)
{
	struct group_scan g = scan_group(g_target);
	if (want_group ? (g.group != want_group || g.members != members) : g.group != 0)
		die("R=%d: after %s, %s has shared:%d in a group of %d mounts; expected shared:%d, %d",
		    r, what, g_target, g.group, g.members, want_group, members);
}

/* --ring-cpus: one thread pinned to each CPU of the list, parked on its semaphore `go` until
 * the main thread hands it one bind (`dst`), which it makes and answers on `done` with the
 * errno (0), the call that failed and the CPU it ran on. */
struct ring_worker {
	pthread_t th;
	int cpu, on, err;
	const char *what; /* "mkdir" or "bind mount", where err != 0 */
	char dst[PATH_MAX + 48];
	char ns[64];	  /* its /proc/thread-self/ns/mnt, read at start */
	int quit;
	sem_t go, done;
};
static struct ring_worker *g_workers;
static int g_nworkers;
static short g_bound_on[MAX_MOUNTS]; /* the CPU that made the ring's bind i (-1: not known) */

/* mkdir (an existing one is fine) and bind scratch/src onto `dst`: 0 or an errno, `*what` the
 * call that failed. */
static int bind_one(const char *dst, const char **what)
{
	*what = "mkdir";
	if (mkdir(dst, 0755) != 0 && errno != EEXIST)
		return errno;
	*what = "bind mount";
	return mount(g_src, dst, NULL, MS_BIND, NULL) != 0 ? errno : 0;
}

static void sem_wait_all(sem_t *s)
{
	while (sem_wait(s) != 0) /* EINTR: the bind is made whatever arrives */
		;
}

static void *ring_worker_main(void *arg)
{
	struct ring_worker *w = arg;
	ssize_t n = readlink("/proc/thread-self/ns/mnt", w->ns, sizeof w->ns - 1);
	w->ns[n > 0 ? n : 0] = 0;
	sem_post(&w->done);
	for (;;) {
		sem_wait_all(&w->go);
		if (w->quit)
			return NULL;
		w->err = bind_one(w->dst, &w->what);
		w->on = sched_getcpu();
		sem_post(&w->done);
	}
}

/* Start one worker per CPU of `cpus`, after this process entered its mount namespace (threads
 * share it: checked), with the catchable signals blocked (they reach the main thread). */
static void start_ring_workers(const int *cpus, int n)
{
	char self[64];
	ssize_t len = readlink("/proc/thread-self/ns/mnt", self, sizeof self - 1);
	if (len <= 0)
		die("readlink(/proc/thread-self/ns/mnt): %s", strerror(errno));
	self[len] = 0;
	if (!(g_workers = calloc((size_t)n, sizeof *g_workers)))
		die("out of memory");
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (int i = 0; i < n; i++) {
		struct ring_worker *w = &g_workers[i];
		w->cpu = cpus[i];
		if (sem_init(&w->go, 0, 0) != 0 || sem_init(&w->done, 0, 0) != 0)
			die("sem_init: %s", strerror(errno));
		pthread_attr_t attr;
		cpu_set_t set = one_cpu(w->cpu);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof set, &set);
		int rc = pthread_create(&w->th, &attr, ring_worker_main, w);
		pthread_attr_destroy(&attr);
		if (rc)
			die("cannot start a thread on CPU %d: %s", w->cpu, strerror(rc));
		g_nworkers++;
		sem_wait_all(&w->done);
		if (strcmp(w->ns, self) != 0)
			die("the thread on CPU %d is in mount namespace %s, not %s", w->cpu, w->ns, self);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void stop_ring_workers(void)
{
	for (int i = 0; i < g_nworkers; i++) {
		g_workers[i].quit = 1;
		sem_post(&g_workers[i].go);
		pthread_join(g_workers[i].th, NULL);
		sem_destroy(&g_workers[i].go);
		sem_destroy(&g_workers[i].done);
	}
	g_nworkers = 0;
	free(g_workers);
	g_workers = NULL;
}

/* Bind i of the ring onto `dst`: by the main thread, or (--ring-cpus) by worker i % n, waiting
 * for it. Records the CPU it ran on. */
static void ring_bind_one(int i, const char *dst)
{
	const char *what;
	int err, on;
	if (g_nworkers) {
		struct ring_worker *w = &g_workers[i % g_nworkers];
		snprintf(w->dst, sizeof w->dst, "%s", dst);
		sem_post(&w->go);
		sem_wait_all(&w->done);
		err = w->err, what = w->what, on = w->on;
		if (!err && on != w->cpu)
			die("ring bind %d ran on CPU %d, its thread is pinned to CPU %d", i + 1, on, w->cpu);
	} else {
		err = bind_one(dst, &what);
		on = sched_getcpu();
	}
	if (err)
		die("ring bind %d onto %s: %s: %s", i + 1, dst, what, strerror(err));
	g_bound_on[i] = (short)on;
}

/* The ring's binds at `dir`/0..n-1, grown or shrunk from *have (the scratch/d pool shared with
 * the reads, or --ring-apart's scratch/h/d). */
static void ring_pool(const char *dir, int *have, int n)
{
	char dst[PATH_MAX + 48];
	for (; *have < n && !g_signalled; (*have)++) {
		snprintf(dst, sizeof dst, "%s/%d", dir, *have);
		ring_bind_one(*have, dst);
	}
	for (; *have > n; (*have)--) {
		snprintf(dst, sizeof dst, "%s/%d", dir, *have - 1);
		if (umount2(dst, MNT_DETACH) != 0)
			die("umount2(%s): %s", dst, strerror(errno));
	}
}

/* How many CPUs made the ring's first r binds, and how many neighbours (bind i - 1 and i,
 * neighbours on the ring too) were made on different CPUs. */
static void ring_cpu_counts(int r, int *cpus, int *changes)
{
	static unsigned char seen[CPU_SETSIZE];
	memset(seen, 0, sizeof seen);
	*cpus = *changes = 0;
	for (int i = 0; i < r; i++) {
		int c = g_bound_on[i];
		if (c >= 0 && c < (int)sizeof seen && !seen[c]) {
			seen[c] = 1;
			(*cpus)++;
		}
		*changes += i > 0 && g_bound_on[i] != g_bound_on[i - 1];
	}
}

/* --ring-apart: the ring's binds live under a private tmpfs at scratch/h, so that they are
 * peers of the scratch but not its children. */
static char g_apart[PATH_MAX + 16];
static int g_apart_have; /* bind mounts now under scratch/h/d; -1: no tmpfs at scratch/h */

static void set_ring(int n, int apart)
{
	char dir[PATH_MAX + 32];
	if (!apart) {
		snprintf(dir, sizeof dir, "%s/d", g_scratch);
		ring_pool(dir, &g_have, n);
		return;
	}
	if (g_apart_have < 0) {
		snprintf(g_apart, sizeof g_apart, "%s/h", g_scratch);
		if (mkdir(g_apart, 0755) != 0)
			die("mkdir(%s): %s", g_apart, strerror(errno));
		if (mount("tmpfs", g_apart, "tmpfs", 0, "mode=0755") != 0 ||
		    mount(NULL, g_apart, NULL, MS_PRIVATE, NULL) != 0)
			die("a private tmpfs on %s: %s", g_apart, strerror(errno));
		snprintf(dir, sizeof dir, "%s/d", g_apart);
		if (mkdir(dir, 0755) != 0)
			die("mkdir(%s): %s", dir, strerror(errno));
		g_apart_have = 0;
	}
	snprintf(dir, sizeof dir, "%s/d", g_apart);
	ring_pool(dir, &g_apart_have, n);
}

/* The ring phase at R extra peers of the scratch (no holders alive): children of the scratch
 * (scratch/d) or, `apart`, of the private tmpfs at scratch/h. Returns 1 when every repeat was
 * timed. */
static int run_ring(int r, int repeats, int base, int new_api, int apart)
{
	set_ring(r, apart);
	if (g_signalled)
		return 0;
	struct group_scan g = scan_group(g_scratch);
	int lines = base + 1 + apart + r, children = apart ? 1 : r;
	if (g.lines != lines || !g.group || g.members != r + 1 || g.children != children)
		die("R=%d: the mount table holds %d mounts, expected %d; the scratch's peer group"
		    " (shared:%d) %d, expected %d; its children %d, expected %d", r, g.lines, lines,
		    g.group, g.members, r + 1, g.children, children);
	row("ring", "host", 0, 0, r, "mounts", g.lines, "mounts", -1);
	row("ring", "host", 0, 0, r, "group_mounts", g.members, "mounts", -1);
	row("ring", "host", 0, 0, r, "children", g.children, "mounts", -1);
	int cpus, changes;
	ring_cpu_counts(r, &cpus, &changes);
	row("ring", "host", 0, 0, r, "bind_cpus", cpus, "count", -1);
	row("ring", "host", 0, 0, r, "bind_cpu_changes", changes, "count", -1);
	uint64_t *t[RING_OPS];
	for (int i = 0; i < RING_OPS; i++)
		if (!(t[i] = calloc((size_t)repeats, sizeof *t[i])))
			die("out of memory");
	int done = 0;
	for (int rep = -1; rep < repeats && !g_signalled; rep++) {
		int check = rep == 0;
		/* (a) bind + umount2(0) */
		uint64_t ta0 = mono_ns();
		if (mount(g_src2, g_target, NULL, MS_BIND, NULL) != 0)
			die("bind mount onto %s: %s", g_target, strerror(errno));
		uint64_t ta1 = mono_ns();
		if (check) /* the bind is a clone of the scratch (shared): it joins the ring too */
			check_target(r, "the bind mount", g.group, r + 2);
		uint64_t ta2 = mono_ns();
		if (umount2(g_target, 0) != 0)
			die("umount2(%s): %s", g_target, strerror(errno));
		uint64_t ta3 = mono_ns();
		/* (b) bind + umount2(MNT_DETACH) */
		uint64_t tb0 = mono_ns();
		if (mount(g_src2, g_target, NULL, MS_BIND, NULL) != 0)
			die("bind mount onto %s: %s", g_target, strerror(errno));
		uint64_t tb1 = mono_ns();
		if (umount2(g_target, MNT_DETACH) != 0)
			die("umount2(%s, MNT_DETACH): %s", g_target, strerror(errno));
		uint64_t tb2 = mono_ns();
		if (check)
			check_target(r, "umount2(MNT_DETACH)", 0, 0);
		/* (c) open_tree(CLONE) + move_mount + close, umount2(MNT_DETACH) */
		uint64_t tc[5] = {0, 0, 0, 0, 0};
		if (new_api) {
			tc[0] = mono_ns();
			int fd = sys_open_tree(AT_FDCWD, g_src2, PB_OPEN_TREE_CLONE | O_CLOEXEC);
			if (fd < 0)
				die("open_tree(%s, OPEN_TREE_CLONE): %s", g_src2, strerror(errno));
			tc[1] = mono_ns();
			if (sys_move_mount(fd, "", AT_FDCWD, g_target, PB_MOVE_MOUNT_F_EMPTY_PATH) != 0)
				die("move_mount onto %s: %s", g_target, strerror(errno));
			tc[2] = mono_ns();
			close(fd);
			tc[3] = mono_ns();
			if (check)
				check_target(r, "open_tree + move_mount", g.group, r + 2);
			uint64_t td = mono_ns();
			if (umount2(g_target, MNT_DETACH) != 0)
				die("umount2(%s, MNT_DETACH): %s", g_target, strerror(errno));
			tc[4] = mono_ns() - td;
		}
		if (rep < 0)
			continue; /* warm-up */
		uint64_t v[RING_OPS] = {
			ta1 - ta0, ta3 - ta2, tb1 - tb0, tb2 - tb1,
			tc[1] - tc[0], tc[2] - tc[1], tc[3] - tc[2], tc[4],
		};
		for (int i = 0; i < (new_api ? RING_OPS : ROT); i++) {
			t[i][rep] = v[i];
			row(ring_op[i], "host", 0, 0, r, "ns", (double)v[i], "ns", rep);
		}
		done++;
	}
	for (int i = 0; i < RING_OPS; i++) {
		if (i < ROT || new_api)
			dist_rows(ring_op[i], "host", 0, 0, r, t[i], done);
		free(t[i]);
	}
	g = scan_group(g_scratch);
	if (!g_signalled && (g.lines != lines || g.members != r + 1))
		die("R=%d: %d mounts after the timed calls, expected %d (group %d, expected %d)", r,
		    g.lines, lines, g.members, r + 1);
	fflush(stdout);
	return done == repeats;
}

/* --ring-cpus: each CPU online and allowed for this process, none twice. */
static void check_ring_cpus(const int *cpus, int n)
{
	cpu_set_t allowed;
	if (n && sched_getaffinity(0, sizeof allowed, &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		if (!CPU_ISSET(cpus[i], &allowed))
			die("--ring-cpus: CPU %d is not online or not allowed for this process", cpus[i]);
		for (int j = 0; j < i; j++)
			if (cpus[j] == cpus[i])
				die("--ring-cpus: CPU %d given twice", cpus[i]);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: prop_bench [--slaves 0,10,50,100,200] [--mounts 0,1000,5000] [--peers P]\n"
		"                  [--ring R1,R2,... [--ring-apart] [--ring-cpus LIST]] [--repeats N]\n"
		"                  [--tmpdir DIR] [--version]\n"
		"Time a bind mount + umount under a shared tmpfs propagated into K live slave mount\n"
		"namespaces, mounts and unmounts under a shared tmpfs whose peer group holds R + 1\n"
		"mounts (--ring; --ring-cpus: its binds made in turn by threads pinned to those CPUs),\n"
		"and one full read of /proc/self/mountinfo at N mounts in this namespace and in a\n"
		"slave one, as root in a private mount namespace; print tidy CSV on stdout.\n");
}

static void make_dir(const char *fmt, const char *base)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, fmt, base);
	if (mkdir(path, 0755) != 0)
		die("mkdir(%s): %s", path, strerror(errno));
}

/* The shared scratch: the common one (scratch.h), made shared so that mounts under it
 * propagate, with the propagation target `p/t`. */
static void setup_scratch(const char *tmp_parent)
{
	scratch_create(tmp_parent);
	if (mount(NULL, g_scratch, NULL, MS_SHARED, NULL) != 0)
		die("making %s shared: %s", g_scratch, strerror(errno));
	make_dir("%s/p", g_scratch);
	make_dir("%s/p/t", g_scratch);
	make_dir("%s/src2", g_scratch);
	snprintf(g_src, sizeof g_src, "%s/src", g_scratch);
	snprintf(g_src2, sizeof g_src2, "%s/src2", g_scratch);
	snprintf(g_target, sizeof g_target, "%s/p/t", g_scratch);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"slaves", required_argument, NULL, 'k'},
		{"mounts", required_argument, NULL, 'n'},
		{"peers", required_argument, NULL, 'p'},
		{"ring", required_argument, NULL, 'R'},
		{"ring-apart", no_argument, NULL, 'A'},
		{"ring-cpus", required_argument, NULL, 'C'},
		{"repeats", required_argument, NULL, 'r'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	int slaves[MAX_LIST] = {0, 10, 50, 100, 200}, nslaves = 5;
	int mounts[MAX_LIST] = {0, 1000, 5000}, nmounts = 3;
	int ring[MAX_LIST], nring = 0, apart = 0;
	int ring_cpus[MAX_RING_CPUS], nring_cpus = 0;
	int peers = 0, repeats = 5;
	const char *tmp_parent = NULL;
	g_apart_have = -1;
	g_parent_pid = getpid();
	die_cleanup = teardown;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': nslaves = parse_int_list(optarg, slaves, MAX_LIST, "slaves", 0, MAX_SLAVES); break;
		case 'n': nmounts = parse_int_list(optarg, mounts, MAX_LIST, "mounts", 0, MAX_MOUNTS); break;
		case 'p': parse_int_list(optarg, &peers, 1, "peers", 0, MAX_PEERS); break;
		case 'R': nring = parse_int_list(optarg, ring, MAX_LIST, "ring", 0, MAX_MOUNTS); break;
		case 'A': apart = 1; break;
		case 'C':
			nring_cpus = parse_int_list(optarg, ring_cpus, MAX_RING_CPUS, "ring-cpus", 0, CPU_SETSIZE - 1);
			break;
		case 'r': parse_int_list(optarg, &repeats, 1, "repeats", 1, 100000); break;
		case 'T': tmp_parent = optarg; break;
		case 'V': printf("prop_bench %s\n", PROP_BENCH_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);
	if (apart && !nring)
		die("--ring-apart needs --ring");
	if (nring_cpus && !nring)
		die("--ring-cpus needs --ring");
	check_ring_cpus(ring_cpus, nring_cpus);

	scratch_enter_private_ns();
	signal(SIGPIPE, SIG_IGN);
	int base = scan_mountinfo("/proc/self/mountinfo", NULL).lines;
	if (base < 1)
		die("cannot read /proc/self/mountinfo");
	scratch_check_room(mounts, nmounts, base);
	scratch_check_room(ring, nring, base + 2); /* + scratch/p/t and scratch/h */
	if (pipe2(g_hold, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	setup_scratch(tmp_parent);

	struct utsname u;
	uname(&u);
	fprintf(stderr, "prop_bench: info: version %s kernel %s base mounts %d scratch %s repeats %d peers %d\n",
		PROP_BENCH_VERSION, u.release, base, g_scratch, repeats, peers);
	printf("bench,op,ns,slaves,peers,mounts,metric,value,unit,repeat\n");
	int interrupted = 0;
	for (int i = 0; i < nslaves && !interrupted; i++) {
		uint64_t t0 = mono_ns();
		interrupted = !run_prop(slaves[i], repeats);
		fprintf(stderr, "prop_bench: info: K=%d slave namespaces: %.3f s\n", slaves[i],
			(double)(mono_ns() - t0) / 1e9);
	}
	reap_kids(0);
	int new_api = 1;
	if (nring && !interrupted) {
		/* Probe the new mount API once (ENOSYS before Linux 5.2): without it, the ring
		 * phase times the mount(2) forms only. */
		int fd = sys_open_tree(AT_FDCWD, g_src2, PB_OPEN_TREE_CLONE | O_CLOEXEC);
		if (fd < 0 && errno != ENOSYS)
			die("open_tree(%s, OPEN_TREE_CLONE): %s", g_src2, strerror(errno));
		new_api = fd >= 0;
		if (fd >= 0)
			close(fd); /* a detached clone: closing its last fd dissolves it */
		else
			fprintf(stderr, "prop_bench: info: no open_tree (ENOSYS): the ring phase times"
					" mount(2) and umount2(2) only\n");
	}
	if (nring && nring_cpus && !interrupted) {
		start_ring_workers(ring_cpus, nring_cpus);
		char list[MAX_RING_CPUS * 6] = "";
		for (int i = 0, a = 0; i < nring_cpus; i++)
			a += snprintf(list + a, sizeof list - (size_t)a, "%s%d", i ? "," : "", ring_cpus[i]);
		fprintf(stderr, "prop_bench: info: the ring's binds made in turn by threads pinned to"
				" CPUs %s; timed calls on the main thread, unpinned\n", list);
	}
	for (int i = 0; i < nring && !interrupted; i++) {
		uint64_t t0 = mono_ns();
		interrupted = !run_ring(ring[i], repeats, base, new_api, apart);
		int cpus, changes, made = apart ? g_apart_have : g_have; /* fewer if interrupted */
		ring_cpu_counts(made < ring[i] ? (made > 0 ? made : 0) : ring[i], &cpus, &changes);
		fprintf(stderr, "prop_bench: info: R=%d peers of the scratch%s: %.3f s; binds made on %d"
				" CPU%s, %d neighbours on different CPUs\n", ring[i],
			apart ? " (under scratch/h)" : "", (double)(mono_ns() - t0) / 1e9, cpus,
			cpus == 1 ? "" : "s", changes);
	}
	stop_ring_workers();
	if (g_apart_have >= 0 && !interrupted) { /* the reads count on the scratch/d pool alone */
		if (umount2(g_apart, MNT_DETACH) != 0)
			die("umount2(%s, MNT_DETACH): %s", g_apart, strerror(errno));
		g_apart_have = -1;
	}
	for (int i = 0; i < peers && !interrupted && !g_signalled; i++)
		spawn_holder(0);
	for (int i = 0; i < nmounts && !interrupted; i++) {
		uint64_t t0 = mono_ns();
		set_mounts(mounts[i]);
		if (g_signalled) {
			interrupted = 1;
			break;
		}
		fprintf(stderr, "prop_bench: info: N=%d bind mounts (one peer group) set up in %.3f s\n",
			mounts[i], (double)(mono_ns() - t0) / 1e9);
		interrupted = !run_read(mounts[i], peers, repeats, base);
	}
	fflush(stdout);
	teardown();
	int final = scan_mountinfo("/proc/self/mountinfo", NULL).lines;
	if (interrupted || g_signalled) {
		fprintf(stderr, "prop_bench: interrupted; children reaped, all mounts undone and scratch removed\n");
		return 130;
	}
	if (final != base)
		die("mount table holds %d mounts after cleanup, expected %d", final, base);
	return 0;
}
