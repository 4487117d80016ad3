/*
 * mount_bench -- the syscall sequences containerd issues to build an idmapped container rootfs,
 * run by K concurrent workers on the real kernel, with every syscall timed.
 *
 * Must run as root.  It enters its own private mount namespace (nothing it mounts is ever
 * visible to the host, and the kernel drops every mount when the namespace dies), mounts a
 * tmpfs on a fresh mkdtemp() directory, builds the layer directories there, and creates a user
 * namespace whose fd is used for the idmap ("0 100000 65536").  Then, per (strategy, workers,
 * layers, repeat), K workers (processes by default, like containerd shims; or threads) each
 * start --containers containers; one container = --sequences-per-container rootfs sequences
 * (default 2: containerd 2.0/2.1 mounts the rootfs once in the shim to read the image's user
 * database and once for the container itself).  A sequence is, per strategy:
 *
 *   per-layer     (containerd 2.0/2.1) per layer: open_tree(CLONE) + mount_setattr(IDMAP) +
 *                 move_mount(-> tmp/i) + close; mount("overlay", lowerdir=tmp/0:...);
 *                 umount2(tmp/i, MNT_DETACH) per layer; umount2(overlay, 0).
 *   common-parent (containerd 2.2, PR #12092) one open_tree(CLONE|AT_RECURSIVE) of the layers'
 *                 parent + mount_setattr(RDONLY|IDMAP, MS_PRIVATE) + move_mount + close; overlay
 *                 mount with lowerdirs under it; read /proc/self/mountinfo; umount2(parent, 0)
 *                 until EINVAL; umount2(overlay, 0).
 *   lowerdir-plus (Linux >= 6.13 for fds) fsopen("overlay"); per layer a detached idmapped
 *                 open_tree clone passed by fsconfig(FSCONFIG_SET_FD, "lowerdir+") then closed;
 *                 upperdir/workdir; FSCONFIG_CMD_CREATE; fsmount; move_mount; umount2(overlay).
 *
 * Output (stdout): tidy CSV, header
 *     bench,strategy,workers,layers,syscall,metric,value,unit,repeat
 * documented in README.md.  Errors: one line on stderr, exit 1.  Interrupted (SIGINT/SIGTERM):
 * workers finish and undo their current sequence, everything is unmounted and the scratch
 * directory removed, exit 130.
 *
 * --strace FILE: after the timed runs, run the same command again (without mount-table
 * sampling) under `strace -f -tt -T -o FILE -e trace=<mount syscalls>` and keep the log.
 *
 * Build: cc -O2 -pthread -o mount_bench mount_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MOUNT_BENCH_VERSION "3"
#define BENCH_NAME "mount_bench"
#include "bench_util.h"
#include "mount_api.h"


/* ------------------------------------------------------------------ labels */

/* What each timed call is.  The label is the syscall name, with a suffix where the same
 * syscall plays a different role (the overlay's own mount/unmount, the fs-context fds). */
enum label {
	L_OPEN_TREE,
	L_MOUNT_SETATTR,
	L_MOVE_MOUNT,
	L_CLOSE,
	L_MOUNT,
	L_UMOUNT2,
	L_UMOUNT2_OVERLAY,
	L_MOUNTINFO_READ,
	L_FSOPEN,
	L_FSCONFIG,
	L_FSCONFIG_CREATE,
	L_FSMOUNT,
	L_MOVE_MOUNT_OVERLAY,
	L_CLOSE_OVERLAY,
	L_MOUNTINFO_SAMPLE,
	L_UMOUNT2_EINVAL,
	L_COUNT
};
static const char *const label_name[L_COUNT] = {
	"open_tree", "mount_setattr", "move_mount", "close", "mount", "umount2", "umount2_overlay",
	"mountinfo_read", "fsopen", "fsconfig", "fsconfig_create", "fsmount", "move_mount_overlay",
	"close_overlay", "mountinfo_sample", "umount2_einval",
};
/* Calls that attach or detach a mount (counted in mount_ops). */
static int label_is_mount_op(int l)
{
	return l == L_MOVE_MOUNT || l == L_MOUNT || l == L_UMOUNT2 || l == L_UMOUNT2_OVERLAY ||
	       l == L_MOVE_MOUNT_OVERLAY;
}

enum strategy { S_PER_LAYER, S_COMMON_PARENT, S_LOWERDIR_PLUS, S_COUNT };
static const char *const strategy_name[S_COUNT] = {"per-layer", "common-parent", "lowerdir-plus"};

/* ------------------------------------------------------------------ state */

struct rec {
	uint64_t start_ns, dur_ns;
	uint64_t cpu_ns; /* with --cpu-time: the calling thread's CPU time over the call */
	uint32_t seq;
	uint16_t label;
	int16_t err; /* 0, or the errno of a failed call */
};

struct seqrec {
	uint64_t start_ns, end_ns, excluded_ns; /* wall = end - start - excluded (mount-table sampling) */
	int32_t mounts_seen;                    /* -1 when not sampled */
	int32_t pad;
};

struct ctl {
	volatile int stop;
	volatile int failed_worker;
	char err[8][256]; /* first few workers' error messages */
};

struct config {
	int strategy_list[S_COUNT], nstrategies;
	int workers[64], nworkers;
	int layers[64], nlayers;
	int containers, seq_per_container, repeats, mountinfo_every, use_threads, shared_layers, idmap;
	int cpu_time;
	int layer_depth; /* ancestors of a layer's directory in the scratch tmpfs, its root included */
	const char *strace_file, *tmp_parent;
};

struct worker {
	int id, strategy, layers, nseq, mountinfo_every, idmap, userns_fd, cpu_time;
	char **layer_path; /* layers' source dirs */
	char **tmp_path;   /* per-layer bind targets */
	char *parent_src;  /* common parent of the layers */
	char *parent_dst;  /* common-parent bind target */
	char *merged, *upper, *work;
	char *opts_per_layer, *opts_common_parent;
	int *layer_fd;     /* lowerdir-plus: the open detached clones */
	struct rec *recs;
	size_t nrec, caprec;
	struct seqrec *seqs;
	int go_fd;
};

static struct ctl *g_ctl;
static volatile sig_atomic_t g_signalled;
static pid_t g_parent_pid;
static char g_scratch[PATH_MAX];
static int g_scratch_mounted, g_scratch_made;
static int g_userns_fd = -1;

/* ------------------------------------------------------------------ errors and cleanup */

/* Undo what the parent set up; die() runs it too (main sets it as die_cleanup). */
static void teardown(void)
{
	if (getpid() != g_parent_pid)
		return;
	if (g_scratch_mounted) {
		/* Lazy detach takes every mount below the scratch tmpfs with it. */
		if (umount2(g_scratch, MNT_DETACH) != 0)
			fprintf(stderr, "mount_bench: warning: umount2(%s): %s\n", g_scratch, strerror(errno));
		g_scratch_mounted = 0;
	}
	if (g_scratch_made) {
		if (rmdir(g_scratch) != 0)
			fprintf(stderr, "mount_bench: warning: rmdir(%s): %s\n", g_scratch, strerror(errno));
		g_scratch_made = 0;
	}
	if (g_userns_fd >= 0) {
		close(g_userns_fd);
		g_userns_fd = -1;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	g_signalled = 1;
	if (g_ctl)
		g_ctl->stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking waits return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ------------------------------------------------------------------ helpers */

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

/* Lines in /proc/self/mountinfo = mounts in this namespace. */
static int count_mounts(void)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[65536];
	int lines = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/* ------------------------------------------------------------------ one sequence */

struct seqctx {
	struct worker *w;
	uint32_t seq;
	uint64_t excluded;
	int sampled;
};

/* The calling thread's CPU time (ns): the scheduler's account of the time it ran, on the CPU
 * or spinning there, never the time it slept or waited runnable (clock_gettime(2)). */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Time one call; returns its result, records (label, duration, CPU time, errno).  The CPU
 * clock (with --cpu-time) is read outside the wall clock's pair, so the wall time is as
 * without it; the CPU time includes about one clock read (the run's cpu_clock_ns). */
#define TIMED(ctx, lab, expr)                                                                  \
	({                                                                                     \
		uint64_t _c0 = (ctx)->w->cpu_time ? thread_cpu_ns() : 0;                       \
		uint64_t _t0 = mono_ns();                                                      \
		long _r = (long)(expr);                                                        \
		uint64_t _t1 = mono_ns();                                                      \
		int _e = _r < 0 ? errno : 0;                                                   \
		uint64_t _c1 = (ctx)->w->cpu_time ? thread_cpu_ns() : 0;                       \
		record((ctx), (lab), _t0, _t1 - _t0, _c1 - _c0, _e);                           \
		errno = _e;                                                                    \
		_r;                                                                            \
	})

static void record(struct seqctx *c, int label, uint64_t t0, uint64_t dur, uint64_t cpu, int err)
{
	struct worker *w = c->w;
	if (w->nrec < w->caprec) {
		struct rec *r = &w->recs[w->nrec++];
		r->start_ns = t0;
		r->dur_ns = dur;
		r->cpu_ns = cpu;
		r->seq = c->seq;
		r->label = (uint16_t)label;
		r->err = (int16_t)err;
	}
}

static void fail(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct worker *w, const char *fmt, ...)
{
	if (g_ctl->failed_worker == 0)
		g_ctl->failed_worker = w->id + 1;
	if (w->id < 8) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g_ctl->err[w->id], sizeof g_ctl->err[w->id], fmt, ap);
		va_end(ap);
	}
}

static void sample_mounts(struct seqctx *c)
{
	struct worker *w = c->w;
	if (w->mountinfo_every <= 0 || c->seq % (uint32_t)w->mountinfo_every != 0)
		return;
	uint64_t t0 = mono_ns();
	int n = count_mounts();
	uint64_t t1 = mono_ns();
	record(c, L_MOUNTINFO_SAMPLE, t0, t1 - t0, 0, n < 0 ? errno : 0);
	c->excluded += t1 - t0;
	c->sampled = n;
}

static int seq_per_layer(struct seqctx *c)
{
	struct worker *w = c->w;
	struct mb_mount_attr attr = {.attr_set = MB_MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)w->userns_fd};
	int mounted = 0, rc = -1;
	for (int i = 0; i < w->layers; i++) {
		int fd = (int)TIMED(c, L_OPEN_TREE,
				    sys_open_tree(-EBADF, w->layer_path[i],
						  MB_OPEN_TREE_CLONE | O_CLOEXEC | MB_AT_EMPTY_PATH));
		if (fd < 0) {
			fail(w, "per-layer: open_tree(%s): %s", w->layer_path[i], strerror(errno));
			goto out;
		}
		if (w->idmap && TIMED(c, L_MOUNT_SETATTR, sys_mount_setattr(fd, "", MB_AT_EMPTY_PATH, &attr)) < 0) {
			fail(w, "per-layer: mount_setattr(MOUNT_ATTR_IDMAP) on %s: %s", w->layer_path[i], strerror(errno));
			close(fd);
			goto out;
		}
		if (TIMED(c, L_MOVE_MOUNT,
			  sys_move_mount(fd, "", -EBADF, w->tmp_path[i], MB_MOVE_MOUNT_F_EMPTY_PATH)) < 0) {
			fail(w, "per-layer: move_mount(-> %s): %s", w->tmp_path[i], strerror(errno));
			close(fd);
			goto out;
		}
		mounted++;
		TIMED(c, L_CLOSE, close(fd));
	}
	if (TIMED(c, L_MOUNT, mount("overlay", w->merged, "overlay", 0, w->opts_per_layer)) < 0) {
		fail(w, "per-layer: mount(overlay, %d lowerdirs): %s", w->layers, strerror(errno));
		goto out;
	}
	sample_mounts(c);
	rc = 0;
out:
	for (int i = 0; i < mounted; i++)
		if (TIMED(c, L_UMOUNT2, umount2(w->tmp_path[i], MNT_DETACH)) < 0 && rc == 0) {
			fail(w, "per-layer: umount2(%s, MNT_DETACH): %s", w->tmp_path[i], strerror(errno));
			rc = -1;
		}
	if (rc == 0 && TIMED(c, L_UMOUNT2_OVERLAY, umount2(w->merged, 0)) < 0) {
		fail(w, "per-layer: umount2(%s): %s", w->merged, strerror(errno));
		umount2(w->merged, MNT_DETACH);
		rc = -1;
	}
	return rc;
}

/* Read all of /proc/self/mountinfo as containerd's UnmountRecursive does (it parses it to find
 * the mounts below the target). */
static int read_mountinfo(void)
{
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[65536];
	ssize_t n;
	long total = 0;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : (int)(total > INT_MAX ? INT_MAX : total);
}

static int seq_common_parent(struct seqctx *c)
{
	struct worker *w = c->w;
	struct mb_mount_attr attr = {
		.attr_set = MB_MOUNT_ATTR_RDONLY | (w->idmap ? MB_MOUNT_ATTR_IDMAP : 0),
		.propagation = MB_MS_PRIVATE,
		.userns_fd = (uint64_t)w->userns_fd,
	};
	int fd = (int)TIMED(c, L_OPEN_TREE,
			    sys_open_tree(-EBADF, w->parent_src,
					  MB_OPEN_TREE_CLONE | O_CLOEXEC | MB_AT_EMPTY_PATH | MB_AT_RECURSIVE));
	if (fd < 0) {
		fail(w, "common-parent: open_tree(%s, AT_RECURSIVE): %s", w->parent_src, strerror(errno));
		return -1;
	}
	if (TIMED(c, L_MOUNT_SETATTR, sys_mount_setattr(fd, "", MB_AT_EMPTY_PATH | MB_AT_RECURSIVE, &attr)) < 0) {
		fail(w, "common-parent: mount_setattr(RDONLY|IDMAP): %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (TIMED(c, L_MOVE_MOUNT, sys_move_mount(fd, "", -EBADF, w->parent_dst, MB_MOVE_MOUNT_F_EMPTY_PATH)) < 0) {
		fail(w, "common-parent: move_mount(-> %s): %s", w->parent_dst, strerror(errno));
		close(fd);
		return -1;
	}
	TIMED(c, L_CLOSE, close(fd));
	int rc = -1;
	if (TIMED(c, L_MOUNT, mount("overlay", w->merged, "overlay", 0, w->opts_common_parent)) < 0) {
		fail(w, "common-parent: mount(overlay, %d lowerdirs): %s", w->layers, strerror(errno));
	} else {
		rc = 0;
		sample_mounts(c);
	}
	/* Cleanup as containerd's UnmountRecursive: read mountinfo, umount2 until EINVAL. */
	if (TIMED(c, L_MOUNTINFO_READ, read_mountinfo()) < 0 && rc == 0) {
		fail(w, "common-parent: read /proc/self/mountinfo: %s", strerror(errno));
		rc = -1;
	}
	for (int k = 0; k < 64; k++) {
		/* The last call, which ends the loop with EINVAL ("not a mount point"), is labelled
		 * umount2_einval so that umount2 holds only real unmounts. */
		uint64_t c0 = w->cpu_time ? thread_cpu_ns() : 0, t0 = mono_ns();
		int r = umount2(w->parent_dst, 0);
		int e = r < 0 ? errno : 0;
		uint64_t t1 = mono_ns(), c1 = w->cpu_time ? thread_cpu_ns() : 0;
		record(c, e == EINVAL ? L_UMOUNT2_EINVAL : L_UMOUNT2, t0, t1 - t0, c1 - c0, e);
		errno = e;
		if (r < 0) {
			if (errno != EINVAL && rc == 0) {
				fail(w, "common-parent: umount2(%s): %s", w->parent_dst, strerror(errno));
				umount2(w->parent_dst, MNT_DETACH);
				rc = -1;
			}
			break;
		}
	}
	if (rc == 0 && TIMED(c, L_UMOUNT2_OVERLAY, umount2(w->merged, 0)) < 0) {
		fail(w, "common-parent: umount2(%s): %s", w->merged, strerror(errno));
		umount2(w->merged, MNT_DETACH);
		rc = -1;
	}
	return rc;
}

static int seq_lowerdir_plus(struct seqctx *c)
{
	struct worker *w = c->w;
	struct mb_mount_attr attr = {.attr_set = MB_MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)w->userns_fd};
	int fsfd = (int)TIMED(c, L_FSOPEN, sys_fsopen("overlay", MB_FSOPEN_CLOEXEC));
	if (fsfd < 0) {
		fail(w, "lowerdir-plus: fsopen(overlay): %s", strerror(errno));
		return -1;
	}
	/* The detached layer clones must stay open until FSCONFIG_CMD_CREATE: overlayfs clones them
	 * privately only then, and closing a detached mount's last fd dissolves it. */
	int rc = -1, mfd = -1, nfd = 0;
	for (int i = 0; i < w->layers; i++) {
		int fd = (int)TIMED(c, L_OPEN_TREE,
				    sys_open_tree(-EBADF, w->layer_path[i],
						  MB_OPEN_TREE_CLONE | O_CLOEXEC | MB_AT_EMPTY_PATH));
		if (fd < 0) {
			fail(w, "lowerdir-plus: open_tree(%s): %s", w->layer_path[i], strerror(errno));
			goto out;
		}
		w->layer_fd[nfd++] = fd;
		if (w->idmap && TIMED(c, L_MOUNT_SETATTR, sys_mount_setattr(fd, "", MB_AT_EMPTY_PATH, &attr)) < 0) {
			fail(w, "lowerdir-plus: mount_setattr(MOUNT_ATTR_IDMAP): %s", strerror(errno));
			goto out;
		}
		if (TIMED(c, L_FSCONFIG, sys_fsconfig(fsfd, MB_FSCONFIG_SET_FD, "lowerdir+", NULL, fd)) < 0) {
			struct utsname u;
			uname(&u);
			fail(w, "lowerdir-plus: fsconfig(FSCONFIG_SET_FD, \"lowerdir+\"): %s (kernel %s; overlayfs "
				"takes lowerdir+ from Linux 6.7 and as a file descriptor from 6.13)",
			     strerror(errno), u.release);
			goto out;
		}
	}
	if (TIMED(c, L_FSCONFIG, sys_fsconfig(fsfd, MB_FSCONFIG_SET_STRING, "upperdir", w->upper, 0)) < 0 ||
	    TIMED(c, L_FSCONFIG, sys_fsconfig(fsfd, MB_FSCONFIG_SET_STRING, "workdir", w->work, 0)) < 0) {
		fail(w, "lowerdir-plus: fsconfig(upperdir/workdir): %s", strerror(errno));
		goto out;
	}
	if (TIMED(c, L_FSCONFIG_CREATE, sys_fsconfig(fsfd, MB_FSCONFIG_CMD_CREATE, NULL, NULL, 0)) < 0) {
		struct utsname u;
		uname(&u);
		fail(w, "lowerdir-plus: fsconfig(FSCONFIG_CMD_CREATE) with %d fd lowerdirs: %s (kernel %s)",
		     w->layers, strerror(errno), u.release);
		goto out;
	}
	while (nfd > 0) /* each close dissolves one detached idmapped clone */
		TIMED(c, L_CLOSE, close(w->layer_fd[--nfd]));
	mfd = (int)TIMED(c, L_FSMOUNT, sys_fsmount(fsfd, MB_FSMOUNT_CLOEXEC, 0));
	if (mfd < 0) {
		fail(w, "lowerdir-plus: fsmount: %s", strerror(errno));
		goto out;
	}
	if (TIMED(c, L_MOVE_MOUNT_OVERLAY, sys_move_mount(mfd, "", -EBADF, w->merged, MB_MOVE_MOUNT_F_EMPTY_PATH)) < 0) {
		fail(w, "lowerdir-plus: move_mount(-> %s): %s", w->merged, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	while (nfd > 0)
		close(w->layer_fd[--nfd]);
	if (mfd >= 0)
		TIMED(c, L_CLOSE_OVERLAY, close(mfd));
	TIMED(c, L_CLOSE_OVERLAY, close(fsfd));
	if (rc == 0) {
		sample_mounts(c);
		if (TIMED(c, L_UMOUNT2_OVERLAY, umount2(w->merged, 0)) < 0) {
			fail(w, "lowerdir-plus: umount2(%s): %s", w->merged, strerror(errno));
			umount2(w->merged, MNT_DETACH);
			rc = -1;
		}
	}
	return rc;
}

static int run_sequence(struct worker *w, uint32_t seq)
{
	struct seqctx c = {.w = w, .seq = seq, .excluded = 0, .sampled = -1};
	uint64_t t0 = mono_ns();
	int rc;
	switch (w->strategy) {
	case S_PER_LAYER: rc = seq_per_layer(&c); break;
	case S_COMMON_PARENT: rc = seq_common_parent(&c); break;
	default: rc = seq_lowerdir_plus(&c); break;
	}
	uint64_t t1 = mono_ns();
	if (w->seqs) {
		w->seqs[seq].start_ns = t0;
		w->seqs[seq].end_ns = t1;
		w->seqs[seq].excluded_ns = c.excluded;
		w->seqs[seq].mounts_seen = c.sampled;
	}
	return rc;
}

/* ------------------------------------------------------------------ workers */

static int worker_body(struct worker *w)
{
	char b;
	/* Start barrier: every worker blocks until the parent closes the pipe's write end. */
	while (read(w->go_fd, &b, 1) < 0 && errno == EINTR)
		if (g_ctl->stop)
			return 0;
	for (int s = 0; s < w->nseq; s++) {
		if (g_ctl->stop || g_ctl->failed_worker)
			return 0;
		if (run_sequence(w, (uint32_t)s) != 0)
			return 1;
	}
	return 0;
}

static void *worker_thread(void *arg) { return (void *)(intptr_t)worker_body(arg); }

/* ------------------------------------------------------------------ setup */

static int find_in_path(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	char *dup = strdup(path), *save = NULL;
	for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, outlen, "%s/%s", d, prog);
		if (access(out, X_OK) == 0) {
			free(dup);
			return 0;
		}
	}
	free(dup);
	return -1;
}

/* Layout inside the scratch tmpfs S (short names keep the overlay option string short):
 *   S/l/<w>/<i>   layer i of worker w (S/l/s/<i> with --shared-layers); holds one file
 *                 (S/l/x/.../<w>/<i> with --layer-depth above 3)
 *   S/<w>/<i>     per-layer bind target;  S/<w>/c  common-parent target
 *   S/<w>/m merged, S/<w>/u upper, S/<w>/k work */
/* The layers' parents lie under S/l/x/x/... (`--layer-depth` - 3 levels of x): overlayfs looks
 * each ancestor of a layer's root up in the inode hash (ovl_check_layer), so the depth sets how
 * many such look-ups an overlay mount makes per layer. */
static char g_lprefix[2 * 1000] = "l"; /* "l" and 2 bytes a level: --layer-depth is <= 1000 */

static void set_layer_depth(int depth)
{
	for (int k = 3; k < depth; k++)
		memcpy(g_lprefix + 1 + 2 * (k - 3), "/x", 3);
}

static void build_worker_paths(struct worker *w, int id, int layers, int shared)
{
	w->id = id;
	w->layers = layers;
	w->layer_path = calloc((size_t)layers, sizeof(char *));
	w->tmp_path = calloc((size_t)layers, sizeof(char *));
	w->layer_fd = calloc((size_t)layers, sizeof(int));
	if (!w->layer_path || !w->tmp_path || !w->layer_fd)
		die("out of memory");
	if (shared)
		w->parent_src = xasprintf("%s/%s/s", g_scratch, g_lprefix);
	else
		w->parent_src = xasprintf("%s/%s/%d", g_scratch, g_lprefix, id);
	w->parent_dst = xasprintf("%s/%d/c", g_scratch, id);
	w->merged = xasprintf("%s/%d/m", g_scratch, id);
	w->upper = xasprintf("%s/%d/u", g_scratch, id);
	w->work = xasprintf("%s/%d/k", g_scratch, id);
	size_t cap = 64 + (size_t)layers * (strlen(g_scratch) + 32) + 3 * PATH_MAX;
	char *pl = malloc(cap), *cp = malloc(cap);
	size_t a = (size_t)snprintf(pl, cap, "lowerdir="), b = (size_t)snprintf(cp, cap, "lowerdir=");
	for (int i = 0; i < layers; i++) {
		w->layer_path[i] = xasprintf("%s/%d", w->parent_src, i);
		w->tmp_path[i] = xasprintf("%s/%d/%d", g_scratch, id, i);
		a += (size_t)snprintf(pl + a, cap - a, "%s%s", i ? ":" : "", w->tmp_path[i]);
		b += (size_t)snprintf(cp + b, cap - b, "%s%s/%d", i ? ":" : "", w->parent_dst, i);
	}
	snprintf(pl + a, cap - a, ",upperdir=%s,workdir=%s", w->upper, w->work);
	snprintf(cp + b, cap - b, ",upperdir=%s,workdir=%s", w->upper, w->work);
	w->opts_per_layer = pl;
	w->opts_common_parent = cp;
}

static void free_worker_paths(struct worker *w)
{
	for (int i = 0; i < w->layers; i++) {
		free(w->layer_path[i]);
		free(w->tmp_path[i]);
	}
	free(w->layer_path);
	free(w->tmp_path);
	free(w->layer_fd);
	free(w->parent_src);
	free(w->parent_dst);
	free(w->merged);
	free(w->upper);
	free(w->work);
	free(w->opts_per_layer);
	free(w->opts_common_parent);
}

static void make_dirs(int max_workers, int max_layers, int shared)
{
	for (char *slash = g_lprefix;; slash++) { /* S/l, S/l/x, ... */
		if (*slash == '/' || *slash == 0) {
			char *p = xasprintf("%s/%.*s", g_scratch, (int)(slash - g_lprefix), g_lprefix);
			xmkdir(p);
			free(p);
		}
		if (*slash == 0)
			break;
	}
	for (int wk = 0; wk < (shared ? 1 : max_workers); wk++) {
		char *d = shared ? xasprintf("%s/%s/s", g_scratch, g_lprefix)
				 : xasprintf("%s/%s/%d", g_scratch, g_lprefix, wk);
		xmkdir(d);
		for (int i = 0; i < max_layers; i++) {
			char *ld = xasprintf("%s/%d", d, i);
			xmkdir(ld);
			/* mknod, not open+close, keeps --strace logs free of set-up noise */
			char *f = xasprintf("%s/layer-%d", ld, i);
			if (mknod(f, S_IFREG | 0644, 0) != 0 && errno != EEXIST)
				die("create %s: %s", f, strerror(errno));
			free(f);
			free(ld);
		}
		free(d);
	}
	for (int wk = 0; wk < max_workers; wk++) {
		const char *sub[] = {"", "/c", "/m", "/u", "/k"};
		for (size_t k = 0; k < sizeof sub / sizeof *sub; k++) {
			char *d = xasprintf("%s/%d%s", g_scratch, wk, sub[k]);
			xmkdir(d);
			free(d);
		}
		for (int i = 0; i < max_layers; i++) {
			char *d = xasprintf("%s/%d/%d", g_scratch, wk, i);
			xmkdir(d);
			free(d);
		}
	}
}

/* ------------------------------------------------------------------ statistics */

struct ev {
	uint64_t t;
	int d;
};

/* Time order; at equal times detaches first (never over-count the peak). */
static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	return (x->d > y->d) - (x->d < y->d);
}

static void emit(int strategy, int workers, int layers, const char *syscall_label, const char *metric,
		 double value, const char *unit, int repeat)
{
	printf("mount,%s,%d,%d,%s,%s,%.10g,%s,%d\n", strategy_name[strategy], workers, layers, syscall_label,
	       metric, value, unit, repeat);
}

static void emit_dist(int st, int wk, int ly, const char *lab, uint64_t *v, size_t n, int rep)
{
	struct dist d = dist_of(v, n);
	emit(st, wk, ly, lab, "count", (double)n, "count", rep);
	emit(st, wk, ly, lab, "p50_ns", d.p50, "ns", rep);
	emit(st, wk, ly, lab, "p90_ns", d.p90, "ns", rep);
	emit(st, wk, ly, lab, "p99_ns", d.p99, "ns", rep);
	emit(st, wk, ly, lab, "mean_ns", d.mean, "ns", rep);
	emit(st, wk, ly, lab, "min_ns", d.min, "ns", rep);
	emit(st, wk, ly, lab, "max_ns", d.max, "ns", rep);
	emit(st, wk, ly, lab, "total_ns", d.sum, "ns", rep);
}

/* ------------------------------------------------------------------ one run */

/* What one read of the thread CPU clock adds to a call's CPU time (ns): the median of 201
 * back-to-back pairs, each pair's difference being one read's cost. */
static uint64_t cpu_clock_cost(void)
{
	uint64_t d[201];
	for (int i = 0; i < 201; i++) {
		uint64_t a = thread_cpu_ns();
		d[i] = thread_cpu_ns() - a;
	}
	return dist_of(d, 201).p50;
}

static void run_one(const struct config *cfg, int strategy, int nworkers, int layers, int repeat)
{
	int nseq = cfg->containers * cfg->seq_per_container;
	size_t per_seq = (size_t)(5 * layers + 80);
	size_t caprec = (size_t)nseq * per_seq;
	size_t recbytes = sizeof(struct rec) * caprec * (size_t)nworkers;
	size_t seqbytes = sizeof(struct seqrec) * (size_t)nseq * (size_t)nworkers;
	struct rec *recs = mmap(NULL, recbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct seqrec *seqs = mmap(NULL, seqbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t *nrec = mmap(NULL, sizeof(size_t) * (size_t)nworkers, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (recs == MAP_FAILED || seqs == MAP_FAILED || nrec == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(g_ctl, 0, sizeof *g_ctl);
	if (g_signalled)
		g_ctl->stop = 1;

	struct worker *w = calloc((size_t)nworkers, sizeof *w);
	for (int i = 0; i < nworkers; i++) {
		build_worker_paths(&w[i], i, layers, cfg->shared_layers);
		w[i].strategy = strategy;
		w[i].nseq = nseq;
		w[i].mountinfo_every = cfg->mountinfo_every;
		w[i].idmap = cfg->idmap;
		w[i].cpu_time = cfg->cpu_time;
		w[i].userns_fd = g_userns_fd;
		w[i].recs = recs + caprec * (size_t)i;
		w[i].caprec = caprec;
		w[i].seqs = seqs + (size_t)nseq * (size_t)i;
	}
	if (strlen(w[0].opts_per_layer) >= 4096 || strlen(w[0].opts_common_parent) >= 4096)
		die("%d layers make an overlay mount option string of %zu bytes; mount(2) takes at most one "
		    "page (4095) -- use fewer layers or --strategy lowerdir-plus",
		    layers, strlen(w[0].opts_per_layer));

	/* Warm-up and probe: one unrecorded sequence on worker 0's directories. */
	{
		struct worker probe = w[0];
		probe.recs = NULL;
		probe.caprec = 0;
		probe.seqs = NULL;
		probe.mountinfo_every = 0;
		if (run_sequence(&probe, 0) != 0)
			die("%s", g_ctl->err[0]);
	}

	int baseline = count_mounts();
	int gofd[2];
	if (pipe2(gofd, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	for (int i = 0; i < nworkers; i++)
		w[i].go_fd = gofd[0];

	fflush(stdout);
	fflush(stderr);
	pid_t *pids = calloc((size_t)nworkers, sizeof(pid_t));
	pthread_t *tids = calloc((size_t)nworkers, sizeof(pthread_t));
	int started = 0, worker_failed = 0;
	for (int i = 0; i < nworkers; i++) {
		if (cfg->use_threads) {
			if (pthread_create(&tids[i], NULL, worker_thread, &w[i]) != 0)
				break;
		} else {
			pid_t pid = fork();
			if (pid < 0)
				break;
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGTERM);
				if (getppid() != g_parent_pid)
					_exit(1);
				close(gofd[1]);
				int rc = worker_body(&w[i]);
				nrec[i] = w[i].nrec;
				_exit(rc);
			}
			pids[i] = pid;
		}
		started++;
	}
	close(gofd[1]); /* go */
	if (started < nworkers) {
		g_ctl->stop = 1;
		worker_failed = 1;
	}
	if (cfg->use_threads) {
		for (int i = 0; i < started; i++) {
			void *ret;
			pthread_join(tids[i], &ret);
			nrec[i] = w[i].nrec;
			worker_failed |= (int)(intptr_t)ret != 0;
		}
	} else {
		int left = started;
		while (left > 0) {
			int status;
			pid_t p = waitpid(-1, &status, 0);
			if (p < 0) {
				if (errno == EINTR) {
					if (g_signalled)
						for (int i = 0; i < started; i++)
							kill(pids[i], SIGTERM);
					continue;
				}
				break;
			}
			left--;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				worker_failed = 1;
		}
	}
	close(gofd[0]);
	int final = count_mounts();

	if (g_signalled) {
		teardown();
		fprintf(stderr, "mount_bench: interrupted; all mounts undone and scratch removed\n");
		exit(130);
	}
	if (worker_failed) {
		int fw = g_ctl->failed_worker ? g_ctl->failed_worker - 1 : 0;
		die("%s", fw < 8 && g_ctl->err[fw][0] ? g_ctl->err[fw] : "a worker failed to start or crashed");
	}
	if (final != baseline)
		die("mount table has %d entries after the run, %d before: mounts leaked", final, baseline);

	/* Aggregate. */
	size_t total = 0;
	for (int i = 0; i < nworkers; i++)
		total += nrec[i];
	uint64_t *v = malloc(sizeof(uint64_t) * (total + 1));
	size_t syscalls = 0, mount_ops = 0;
	for (int lab = 0; lab < L_COUNT; lab++) {
		size_t n = 0, failed = 0;
		for (int i = 0; i < nworkers; i++)
			for (size_t k = 0; k < nrec[i]; k++) {
				struct rec *r = &w[i].recs[k];
				if (r->label != lab)
					continue;
				v[n++] = r->dur_ns;
				failed += r->err != 0;
				if (lab != L_MOUNTINFO_SAMPLE)
					syscalls++;
				if (label_is_mount_op(lab) && r->err == 0)
					mount_ops++;
			}
		if (!n)
			continue;
		emit_dist(strategy, nworkers, layers, label_name[lab], v, n, repeat);
		if (cfg->cpu_time && lab != L_MOUNTINFO_SAMPLE) {
			uint64_t wall = 0, cpu = 0;
			for (int i = 0; i < nworkers; i++)
				for (size_t k = 0; k < nrec[i]; k++)
					if (w[i].recs[k].label == lab) {
						wall += w[i].recs[k].dur_ns;
						cpu += w[i].recs[k].cpu_ns;
					}
			emit(strategy, nworkers, layers, label_name[lab], "cpu_mean_ns", (double)cpu / (double)n,
			     "ns", repeat);
			emit(strategy, nworkers, layers, label_name[lab], "cpu_share",
			     wall ? (double)cpu / (double)wall : 0.0, "fraction", repeat);
		}
		emit(strategy, nworkers, layers, label_name[lab], "calls_per_sequence",
		     (double)n / ((double)nseq * nworkers), "count", repeat);
		emit(strategy, nworkers, layers, label_name[lab], "failed", (double)failed, "count", repeat);
	}
	/* Sequences and containers (a container = seq_per_container consecutive sequences). */
	size_t ns = (size_t)nseq * (size_t)nworkers, nc = 0;
	uint64_t first = UINT64_MAX, last = 0;
	int peak = baseline;
	uint64_t *sv = malloc(sizeof(uint64_t) * ns), *cv = malloc(sizeof(uint64_t) * ns);
	for (int i = 0; i < nworkers; i++) {
		uint64_t cacc = 0;
		for (int s = 0; s < nseq; s++) {
			struct seqrec *q = &w[i].seqs[s];
			uint64_t wall = q->end_ns - q->start_ns - q->excluded_ns;
			sv[(size_t)i * (size_t)nseq + (size_t)s] = wall;
			cacc += wall;
			if ((s + 1) % cfg->seq_per_container == 0) {
				cv[nc++] = cacc;
				cacc = 0;
			}
			if (q->start_ns < first)
				first = q->start_ns;
			if (q->end_ns > last)
				last = q->end_ns;
			if (q->mounts_seen > peak)
				peak = q->mounts_seen;
		}
	}
	/* The mount-table peak from the calls themselves: +1 at the end of every successful attach,
	 * -1 at the end of every successful detach, in time order.  Unlike a mountinfo count, which
	 * the kernel serves over several read() calls and so smears over concurrent changes, this
	 * is a consistent (to the clock's resolution) count of this benchmark's mounts. */
	struct ev *ev = malloc(sizeof(struct ev) * (mount_ops + 1));
	size_t nev = 0;
	for (int i = 0; i < nworkers; i++)
		for (size_t k = 0; k < nrec[i]; k++) {
			struct rec *r = &w[i].recs[k];
			if (r->err || !label_is_mount_op(r->label))
				continue;
			int d = (r->label == L_UMOUNT2 || r->label == L_UMOUNT2_OVERLAY) ? -1 : 1;
			ev[nev].t = r->start_ns + r->dur_ns;
			ev[nev++].d = d;
		}
	qsort(ev, nev, sizeof *ev, cmp_ev);
	long level = 0, top = 0;
	for (size_t k = 0; k < nev; k++) {
		level += ev[k].d;
		if (level > top)
			top = level;
	}
	free(ev);
	emit_dist(strategy, nworkers, layers, "sequence", sv, ns, repeat);
	emit_dist(strategy, nworkers, layers, "container", cv, nc, repeat);
	double wall_s = (double)(last - first) / 1e9;
	emit(strategy, nworkers, layers, "run", "wall_s", wall_s, "s", repeat);
	emit(strategy, nworkers, layers, "run", "sequences", (double)ns, "count", repeat);
	emit(strategy, nworkers, layers, "run", "containers", (double)nc, "count", repeat);
	emit(strategy, nworkers, layers, "run", "syscalls", (double)syscalls, "count", repeat);
	emit(strategy, nworkers, layers, "run", "mount_ops", (double)mount_ops, "count", repeat);
	emit(strategy, nworkers, layers, "run", "sequences_per_s", (double)ns / wall_s, "1/s", repeat);
	emit(strategy, nworkers, layers, "run", "containers_per_s", (double)nc / wall_s, "1/s", repeat);
	emit(strategy, nworkers, layers, "run", "syscalls_per_s", (double)syscalls / wall_s, "1/s", repeat);
	emit(strategy, nworkers, layers, "run", "mount_ops_per_s", (double)mount_ops / wall_s, "1/s", repeat);
	emit(strategy, nworkers, layers, "mount_table", "baseline", (double)baseline, "mounts", repeat);
	emit(strategy, nworkers, layers, "mount_table", "peak", (double)peak, "mounts", repeat);
	emit(strategy, nworkers, layers, "mount_table", "peak_from_calls", (double)(baseline + top), "mounts",
	     repeat);
	emit(strategy, nworkers, layers, "mount_table", "final", (double)final, "mounts", repeat);
	if (cfg->cpu_time)
		emit(strategy, nworkers, layers, "run", "cpu_clock_ns", (double)cpu_clock_cost(), "ns", repeat);
	if (cfg->layer_depth != 3)
		emit(strategy, nworkers, layers, "run", "layer_depth", (double)cfg->layer_depth, "count", repeat);
	fflush(stdout);

	free(v);
	free(sv);
	free(cv);
	for (int i = 0; i < nworkers; i++)
		free_worker_paths(&w[i]);
	free(w);
	free(pids);
	free(tids);
	munmap(recs, recbytes);
	munmap(seqs, seqbytes);
	munmap(nrec, sizeof(size_t) * (size_t)nworkers);
}

/* ------------------------------------------------------------------ arguments */

static int parse_int(const char *s, const char *what, long lo, long hi)
{
	int v;
	parse_int_list(s, &v, 1, what, lo, hi);
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mount_bench [--strategy per-layer,common-parent,lowerdir-plus] [--workers 1,2,4]\n"
		"                   [--layers 1,10,50] [--containers N] [--sequences-per-container N]\n"
		"                   [--repeats N] [--mode processes|threads] [--mountinfo-every N]\n"
		"                   [--shared-layers] [--no-idmap] [--cpu-time] [--layer-depth N] [--tmpdir DIR]\n"
		"                   [--strace FILE]\n"
		"                   [--version]\n"
		"Run containerd's idmapped-rootfs mount sequences as root in a private mount namespace;\n"
		"print tidy CSV on stdout.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"strategy", required_argument, NULL, 's'},
		{"workers", required_argument, NULL, 'w'},
		{"layers", required_argument, NULL, 'l'},
		{"containers", required_argument, NULL, 'c'},
		{"sequences-per-container", required_argument, NULL, 'q'},
		{"repeats", required_argument, NULL, 'r'},
		{"mode", required_argument, NULL, 'm'},
		{"mountinfo-every", required_argument, NULL, 'i'},
		{"shared-layers", no_argument, NULL, 'S'},
		{"no-idmap", no_argument, NULL, 'N'},
		{"cpu-time", no_argument, NULL, 'C'},
		{"layer-depth", required_argument, NULL, 'D'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"strace", required_argument, NULL, 'x'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	struct config cfg = {
		.nstrategies = 1,
		.strategy_list = {S_PER_LAYER},
		.workers = {1},
		.nworkers = 1,
		.layers = {10},
		.nlayers = 1,
		.containers = 5,
		.seq_per_container = 2,
		.repeats = 1,
		.mountinfo_every = 1,
		.use_threads = 0,
		.shared_layers = 0,
		.idmap = 1,
		.cpu_time = 0,
		.layer_depth = 3,
		.strace_file = NULL,
		.tmp_parent = NULL,
	};
	g_parent_pid = getpid();
	die_cleanup = teardown;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': {
			cfg.nstrategies = 0;
			char *dup = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				int k;
				for (k = 0; k < S_COUNT; k++)
					if (strcmp(t, strategy_name[k]) == 0)
						break;
				if (k == S_COUNT)
					die("--strategy: unknown strategy '%s' (expected per-layer, common-parent or "
					    "lowerdir-plus)", t);
				if (cfg.nstrategies >= S_COUNT)
					die("--strategy: at most %d values", S_COUNT);
				cfg.strategy_list[cfg.nstrategies++] = k;
			}
			free(dup);
			if (!cfg.nstrategies)
				die("--strategy: empty list");
			break;
		}
		case 'w': cfg.nworkers = parse_int_list(optarg, cfg.workers, 64, "workers", 1, 4096); break;
		case 'l': cfg.nlayers = parse_int_list(optarg, cfg.layers, 64, "layers", 1, 1000); break;
		case 'c': cfg.containers = parse_int(optarg, "containers", 1, 1000000); break;
		case 'q': cfg.seq_per_container = parse_int(optarg, "sequences-per-container", 1, 100); break;
		case 'r': cfg.repeats = parse_int(optarg, "repeats", 1, 100000); break;
		case 'i': cfg.mountinfo_every = parse_int(optarg, "mountinfo-every", 0, 1000000); break;
		case 'm':
			if (strcmp(optarg, "threads") == 0)
				cfg.use_threads = 1;
			else if (strcmp(optarg, "processes") == 0)
				cfg.use_threads = 0;
			else
				die("--mode: '%s' is not processes or threads", optarg);
			break;
		case 'S': cfg.shared_layers = 1; break;
		case 'N': cfg.idmap = 0; break;
		case 'C': cfg.cpu_time = 1; break;
		case 'D':
			cfg.layer_depth = (int)parse_int(optarg, "layer-depth", 3, 1000);
			break;
		case 'T': cfg.tmp_parent = optarg; break;
		case 'x': cfg.strace_file = optarg; break;
		case 'V': printf("mount_bench %s\n", MOUNT_BENCH_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);

	/* Up-front checks, before touching anything. */
	if (geteuid() != 0)
		die("must run as root (it creates a mount namespace, mounts and idmapped mounts)");
	check_kernel();
	char strace_path[PATH_MAX];
	if (cfg.strace_file) {
		if (find_in_path("strace", strace_path, sizeof strace_path) != 0)
			die("--strace: strace not found in PATH (install the strace package)");
		int fd = open(cfg.strace_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("--strace: cannot write %s: %s", cfg.strace_file, strerror(errno));
		close(fd);
	}
	const char *tmp = cfg.tmp_parent ? cfg.tmp_parent : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

	g_ctl = mmap(NULL, sizeof *g_ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_ctl == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	install_signals();

	if (unshare(CLONE_NEWNS) != 0)
		die("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die("making / private in the new mount namespace: %s", strerror(errno));
	g_userns_fd = make_userns_fd();
	snprintf(g_scratch, sizeof g_scratch, "%s/mount_bench.XXXXXX", tmp);
	if (!mkdtemp(g_scratch))
		die("mkdtemp(%s): %s", g_scratch, strerror(errno));
	g_scratch_made = 1;
	if (mount("tmpfs", g_scratch, "tmpfs", 0, "mode=0755") != 0)
		die("mount tmpfs on %s: %s", g_scratch, strerror(errno));
	g_scratch_mounted = 1;

	int max_w = 1, max_l = 1;
	for (int i = 0; i < cfg.nworkers; i++)
		max_w = cfg.workers[i] > max_w ? cfg.workers[i] : max_w;
	for (int i = 0; i < cfg.nlayers; i++)
		max_l = cfg.layers[i] > max_l ? cfg.layers[i] : max_l;
	set_layer_depth(cfg.layer_depth);
	make_dirs(max_w, max_l, cfg.shared_layers);

	struct utsname u;
	uname(&u);
	fprintf(stderr, "mount_bench: info: version %s kernel %s mode %s containers %d sequences/container %d\n",
		MOUNT_BENCH_VERSION, u.release, cfg.use_threads ? "threads" : "processes", cfg.containers,
		cfg.seq_per_container);
	printf("bench,strategy,workers,layers,syscall,metric,value,unit,repeat\n");
	for (int si = 0; si < cfg.nstrategies; si++)
		for (int wi = 0; wi < cfg.nworkers; wi++)
			for (int li = 0; li < cfg.nlayers; li++)
				for (int r = 0; r < cfg.repeats; r++) {
					if (g_signalled) {
						teardown();
						fprintf(stderr, "mount_bench: interrupted; all mounts undone and scratch removed\n");
						return 130;
					}
					run_one(&cfg, cfg.strategy_list[si], cfg.workers[wi], cfg.layers[li], r);
				}
	fflush(stdout);
	teardown();

	if (cfg.strace_file) {
		/* Same command again, traced, without mount-table sampling (so the trace holds only the
		 * containerd sequence), CSV discarded. */
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		if (n < 0)
			die("readlink(/proc/self/exe): %s", strerror(errno));
		self[n] = 0;
		char **av = calloc((size_t)argc + 16, sizeof(char *));
		int k = 0;
		av[k++] = strace_path;
		av[k++] = "-f";
		av[k++] = "-tt";
		av[k++] = "-T";
		av[k++] = "-o";
		av[k++] = (char *)cfg.strace_file;
		av[k++] = "-e";
		av[k++] = "trace=open_tree,mount_setattr,move_mount,mount,umount2,fsopen,fsconfig,fsmount,openat,close";
		av[k++] = self;
		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--strace") == 0) {
				i++;
				continue;
			}
			if (strncmp(argv[i], "--strace=", 9) == 0)
				continue;
			if (strcmp(argv[i], "--mountinfo-every") == 0) {
				i++;
				continue;
			}
			if (strncmp(argv[i], "--mountinfo-every=", 18) == 0)
				continue;
			av[k++] = argv[i];
		}
		av[k++] = "--mountinfo-every=0";
		av[k] = NULL;
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			int devnull = open("/dev/null", O_WRONLY);
			if (devnull >= 0)
				dup2(devnull, 1);
			execv(strace_path, av);
			fprintf(stderr, "mount_bench: error: exec %s: %s\n", strace_path, strerror(errno));
			_exit(1);
		}
		int status;
		while (waitpid(pid, &status, 0) < 0) {
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
			if (g_signalled)
				kill(pid, SIGTERM);
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			die("--strace: the traced rerun failed (status %d); log kept in %s", status, cfg.strace_file);
		fprintf(stderr, "mount_bench: info: strace log written to %s\n", cfg.strace_file);
	}
	return 0;
}
