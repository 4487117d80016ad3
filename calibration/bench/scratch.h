/* scratch.h: the scratch mount table that ns_bench and prop_bench grow and take down (walk_bench
 * uses its private namespace, scratch and teardown only).
 *
 * A private tmpfs in a fresh directory (the "scratch"), a source directory in it (`src`) and a
 * pool of bind mounts of that source at `d/0`, `d/1`, ... that `set_mounts()` grows or shrinks
 * to any size. One lazy unmount of the scratch takes every bind mount below it along, so
 * `scratch_release()` undoes it all, also after SIGINT, SIGTERM or SIGHUP: the handler only
 * sets `g_signalled`, the benchmark's loops check it and end through their teardown, and
 * die() calls the teardown the benchmark registers (`die_cleanup`).
 *
 * Include after bench_util.h (for BENCH_NAME and die()). The benchmark creates and mounts the
 * scratch itself (where, and whether shared, is its own choice) and sets the flags below.
 */
#ifndef COHSIM_SCRATCH_H
#define COHSIM_SCRATCH_H

static volatile sig_atomic_t g_signalled;
static pid_t g_parent_pid;	/* only the parent undoes the scratch, never a forked child */
static char g_scratch[PATH_MAX];
static int g_scratch_mounted, g_scratch_made;
static int g_have;		/* bind mounts now under scratch/d */

static void on_signal(int sig)
{
	(void)sig;
	g_signalled = 1;
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Detach the scratch with every bind mount below it, and remove its directory. */
static void scratch_release(void)
{
	if (g_scratch_mounted) {
		if (umount2(g_scratch, MNT_DETACH) != 0)
			fprintf(stderr, BENCH_NAME ": warning: umount2(%s): %s\n", g_scratch, strerror(errno));
		g_scratch_mounted = 0;
		g_have = 0;
	}
	if (g_scratch_made) {
		if (rmdir(g_scratch) != 0)
			fprintf(stderr, BENCH_NAME ": warning: rmdir(%s): %s\n", g_scratch, strerror(errno));
		g_scratch_made = 0;
	}
}

/* Grow or shrink the bind mounts of scratch/src under scratch/d to exactly n. */
static inline void set_mounts(int n)
{
	char src[PATH_MAX + 16], dst[PATH_MAX + 32];
	snprintf(src, sizeof src, "%s/src", g_scratch);
	for (; g_have < n && !g_signalled; g_have++) {
		snprintf(dst, sizeof dst, "%s/d/%d", g_scratch, g_have);
		if (mkdir(dst, 0755) != 0 && errno != EEXIST)
			die("mkdir(%s): %s", dst, strerror(errno));
		if (mount(src, dst, NULL, MS_BIND, NULL) != 0)
			die("bind mount %d onto %s: %s", g_have + 1, dst, strerror(errno));
	}
	for (; g_have > n; g_have--) {
		snprintf(dst, sizeof dst, "%s/d/%d", g_scratch, g_have - 1);
		if (umount2(dst, MNT_DETACH) != 0)
			die("umount2(%s): %s", dst, strerror(errno));
	}
}

/* Root, signals caught, and a private mount namespace of our own, so that nothing this
 * benchmark mounts is seen outside it. */
static void scratch_enter_private_ns(void)
{
	if (geteuid() != 0)
		die("must run as root (it creates mount namespaces and mounts)");
	install_signals();
	if (unshare(CLONE_NEWNS) != 0)
		die("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		die("making / private in the new mount namespace: %s", strerror(errno));
}

/* Die unless fs.mount-max leaves room for `base` mounts, the scratch and its source, and the
 * largest of `mounts` bind mounts (a child's copy of the table counts against it too). */
static inline void scratch_check_room(const int *mounts, int nmounts, int base)
{
	int max_n = 0;
	for (int i = 0; i < nmounts; i++)
		max_n = mounts[i] > max_n ? mounts[i] : max_n;
	long mount_max = 100000;
	FILE *mm = fopen("/proc/sys/fs/mount-max", "r");
	if (mm) {
		if (fscanf(mm, "%ld", &mount_max) != 1)
			mount_max = 100000;
		fclose(mm);
	}
	if (base + 2 + max_n > mount_max)
		die("--mounts: %d + %d existing mounts exceed fs.mount-max (%ld)", max_n, base + 2, mount_max);
}

/* The scratch: a fresh directory under `tmp_parent` (else $TMPDIR, else /tmp) with a tmpfs on
 * it holding `src` and `d`. */
static void scratch_create(const char *tmp_parent)
{
	const char *tmp = tmp_parent ? tmp_parent : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(g_scratch, sizeof g_scratch, "%s/" BENCH_NAME ".XXXXXX", tmp);
	if (!mkdtemp(g_scratch))
		die("mkdtemp(%s): %s", g_scratch, strerror(errno));
	g_scratch_made = 1;
	if (mount("tmpfs", g_scratch, "tmpfs", 0, "mode=0755") != 0)
		die("mount tmpfs on %s: %s", g_scratch, strerror(errno));
	g_scratch_mounted = 1;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/src", g_scratch);
	if (mkdir(path, 0755) != 0)
		die("mkdir(%s): %s", path, strerror(errno));
	snprintf(path, sizeof path, "%s/d", g_scratch);
	if (mkdir(path, 0755) != 0)
		die("mkdir(%s): %s", path, strerror(errno));
}

#endif
