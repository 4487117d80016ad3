/*
 * ns_bench -- the cost of a container's own mount namespace as a function of the mount-table
 * size: what runc does at every container start, on the real kernel, timed.
 *
 * Must run as root.  It enters its own private mount namespace (nothing it mounts is visible to
 * the host; the kernel drops every mount if it dies), mounts a tmpfs on a fresh mkdtemp()
 * directory (the scratch) and bind-mounts one empty directory of it onto N others, so the table
 * holds base + 1 + N mounts.  Then, per (variant, N, repeat), a forked child does what runc's
 * container process does:
 *
 *   unshare     newns and shared: unshare(CLONE_NEWNS); userns: unshare(CLONE_NEWUSER|CLONE_NEWNS)
 *               (no uid map is needed for the copy).  copy_mnt_ns() copies the WHOLE table under
 *               namespace_sem; with a new user namespace every copied mount but the root is
 *               locked (MNT_LOCKED).
 *   rslave      runc's next step: mount("", "/", NULL, MS_REC|MS_SLAVE, NULL), do_change_type():
 *               namespace_sem (write) and one mount_lock write hold across the walk of every
 *               copied mount (change_mnt_propagation() each).  newns/userns: the copies are
 *               private (the benchmark made / rprivate), the cheap path.  shared: the parent
 *               made its scratch subtree rshared before the child's unshare (undone after), so
 *               the N + 1 copied scratch mounts are peers of the parent's and the rslave takes
 *               each out of its peer group and hangs it on the parent's mount as a slave.
 *   umount_scratch  umount2(scratch, MNT_DETACH): the copied subtree of N + 1 mounts.  In the
 *               userns variant the scratch is locked and this fails with EINVAL (counted in
 *               `failed`), as it would for an unprivileged container.
 *   umount_oldroot  runc's pivot_root(".", ".") + umount2(".", MNT_DETACH) on a fresh tmpfs
 *               mounted on the scratch path: detaches the old root with whatever is still under
 *               it (base mounts; userns: base + N + 1).  Only the umount2 is timed.
 *   exit        from the child's last clock read before _exit() to the parent's waitpid(): the
 *               process exit, which drops the namespace and whatever mounts it still holds.
 *
 * Output (stdout): tidy CSV, header
 *     bench,variant,mounts,op,metric,value,unit,repeat
 * documented in README.md.  Errors: one line on stderr, exit 1.  Interrupted (SIGINT/SIGTERM/
 * SIGHUP): the current child finishes, the scratch is detached and removed, exit 130.
 *
 * Build: cc -O2 -pthread -o ns_bench ns_bench.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define BENCH_NAME "ns_bench"
#include "bench_util.h"
#include "scratch.h"

#define NS_BENCH_VERSION "2"
#define MAX_N 64
#define MAX_MOUNTS 90000

/* shared: newns with the parent's scratch subtree rshared while its children run */
enum { V_NEWNS, V_USERNS, V_SHARED, V_COUNT };
static const char *const variant_name[V_COUNT] = {"newns", "userns", "shared"};
static const int variant_flags[V_COUNT] = {CLONE_NEWNS, CLONE_NEWUSER | CLONE_NEWNS, CLONE_NEWNS};

enum { OP_UNSHARE, OP_RSLAVE, OP_UMOUNT_SCRATCH, OP_UMOUNT_OLDROOT, OP_EXIT, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"unshare", "rslave", "umount_scratch", "umount_oldroot",
					      "exit"};

/* What a child reports through its pipe. */
struct child_result {
	int err_op;                /* -1, or the op whose call failed unexpectedly */
	int err_no;
	uint64_t ns[OP_COUNT];     /* exit: filled by the parent */
	int failed[OP_COUNT];      /* the call returned an error (umount_scratch under userns) */
	int scratch_errno;
	int mounts_after_unshare, mounts_after_umount_scratch;
	int master_after_rslave;   /* mountinfo lines with a master:X tag after the rslave */
	uint64_t t_before_exit;
};


static void teardown(void)
{
	if (getpid() == g_parent_pid)
		scratch_release();
}

/* Lines in /proc/self/mountinfo = mounts in this namespace; `tag` (if not NULL): how many of
 * them carry the optional field `tag` (" shared:" or " master:"), before the " - " separator. */
static int count_tagged(const char *tag, int *tagged)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int lines = 0, n_tag = 0;
	while (getline(&line, &cap, f) > 0) {
		lines++;
		if (tag) {
			char *sep = strstr(line, " - ");
			char *hit = strstr(line, tag);
			n_tag += hit && (!sep || hit < sep);
		}
	}
	free(line);
	fclose(f);
	if (tagged)
		*tagged = n_tag;
	return lines;
}

static int count_mounts(void)
{
	return count_tagged(NULL, NULL);
}

/* The parent's scratch subtree made rshared (each of its N + 1 mounts its own peer group, as
 * `mount --make-rshared` makes them) or rprivate again. */
static void scratch_propagation(int type)
{
	if (mount(NULL, g_scratch, NULL, MS_REC | type, NULL) != 0)
		die("making %s %s: %s", g_scratch, type == MS_SHARED ? "rshared" : "rprivate", strerror(errno));
}

/* The child: runc's namespace steps, each timed; the result goes to fd `out`. */
static void child_body(int variant, int out)
{
	struct child_result r;
	memset(&r, 0, sizeof r);
	r.err_op = -1;
	uint64_t t0 = mono_ns();
	int rc = unshare(variant_flags[variant]);
	r.ns[OP_UNSHARE] = mono_ns() - t0;
	if (rc != 0) {
		r.err_op = OP_UNSHARE;
		r.err_no = errno;
		goto done;
	}
	/* runc's rslave of the whole copy, right after the unshare */
	t0 = mono_ns();
	rc = mount("", "/", NULL, MS_REC | MS_SLAVE, NULL);
	r.ns[OP_RSLAVE] = mono_ns() - t0;
	if (rc != 0) {
		r.err_op = OP_RSLAVE;
		r.err_no = errno;
		goto done;
	}
	r.mounts_after_unshare = count_tagged(" master:", &r.master_after_rslave);

	t0 = mono_ns();
	rc = umount2(g_scratch, MNT_DETACH);
	r.ns[OP_UMOUNT_SCRATCH] = mono_ns() - t0;
	if (rc != 0) {
		r.failed[OP_UMOUNT_SCRATCH] = 1;
		r.scratch_errno = errno;
	}
	r.mounts_after_umount_scratch = count_mounts();

	/* runc's pivotRoot: a fresh root (here a tmpfs on the scratch path), pivot_root(".", "."),
	 * detach the old root stacked on it. */
	if (mount("tmpfs", g_scratch, "tmpfs", 0, "mode=0755") != 0 || chdir(g_scratch) != 0 ||
	    syscall(SYS_pivot_root, ".", ".") != 0) {
		r.err_op = OP_UMOUNT_OLDROOT;
		r.err_no = errno;
		goto done;
	}
	t0 = mono_ns();
	rc = umount2(".", MNT_DETACH);
	r.ns[OP_UMOUNT_OLDROOT] = mono_ns() - t0;
	if (rc != 0) {
		r.err_op = OP_UMOUNT_OLDROOT;
		r.err_no = errno;
		goto done;
	}
done:
	r.t_before_exit = mono_ns();
	ssize_t w = write(out, &r, sizeof r);
	_exit(w == (ssize_t)sizeof r ? 0 : 1);
}

/* Fork one child, collect its result; dies on an unexpected failure. */
static struct child_result run_child(int variant)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		child_body(variant, fds[1]);
	}
	close(fds[1]);
	struct child_result r;
	size_t got = 0;
	while (got < sizeof r) {
		ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	uint64_t reaped = mono_ns();
	if (got != sizeof r || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the %s child died (status %d)", variant_name[variant], status);
	if (r.err_op == OP_UNSHARE)
		die("unshare(%s): %s", variant == V_USERNS ? "CLONE_NEWUSER|CLONE_NEWNS" : "CLONE_NEWNS",
		    strerror(r.err_no));
	if (r.err_op >= 0)
		die("%s child: %s: %s", variant_name[variant], op_name[r.err_op], strerror(r.err_no));
	r.ns[OP_EXIT] = reaped - r.t_before_exit;
	return r;
}

static void row(int v, int n, const char *op, const char *metric, double value, const char *unit, int rep)
{
	printf("ns,%s,%d,%s,%s,%.0f,%s,", variant_name[v], n, op, metric, value, unit);
	if (rep < 0)
		printf("all\n");
	else
		printf("%d\n", rep);
}

/* One (variant, N): a warm-up child, then `repeats` recorded ones; 0 if interrupted. */
static int run_config(int v, int n, int repeats, int base)
{
	uint64_t *samples[OP_COUNT];
	int ok[OP_COUNT] = {0};
	for (int op = 0; op < OP_COUNT; op++)
		if (!(samples[op] = calloc((size_t)repeats, sizeof(uint64_t))))
			die("out of memory");
	if (v == V_SHARED)
		scratch_propagation(MS_SHARED);
	(void)run_child(v); /* warm-up, not recorded */
	int parent_shared = 0;
	int parent = count_tagged(" shared:", &parent_shared);
	if (parent != base + 1 + n)
		die("mount table holds %d mounts, expected %d", parent, base + 1 + n);
	int completed = 1;
	for (int rep = 0; rep < repeats; rep++) {
		if (g_signalled) {
			completed = 0;
			break;
		}
		uint64_t t0 = mono_ns();
		struct child_result r = run_child(v);
		uint64_t wall = mono_ns() - t0;
		for (int op = 0; op < OP_COUNT; op++) {
			row(v, n, op_name[op], "failed", r.failed[op], "count", rep);
			if (!r.failed[op]) {
				row(v, n, op_name[op], "ns", (double)r.ns[op], "ns", rep);
				samples[op][ok[op]++] = r.ns[op];
			}
		}
		if (r.failed[OP_UMOUNT_SCRATCH] && rep == 0)
			fprintf(stderr, "ns_bench: info: %s N=%d: umount2(scratch, MNT_DETACH) in the child: %s\n",
				variant_name[v], n, strerror(r.scratch_errno));
		row(v, n, "mount_table", "after_unshare", r.mounts_after_unshare, "mounts", rep);
		row(v, n, "mount_table", "master_after_rslave", r.master_after_rslave, "mounts", rep);
		row(v, n, "mount_table", "after_umount_scratch", r.mounts_after_umount_scratch, "mounts", rep);
		row(v, n, "child", "wall_ns", (double)wall, "ns", rep);
	}
	if (v == V_SHARED)
		scratch_propagation(MS_PRIVATE);
	if (!completed) {
		for (int op = 0; op < OP_COUNT; op++)
			free(samples[op]);
		return 0;
	}
	row(v, n, "mount_table", "parent", parent, "mounts", -1);
	row(v, n, "mount_table", "parent_shared", parent_shared, "mounts", -1);
	for (int op = 0; op < OP_COUNT; op++) {
		if (!ok[op])
			continue;
		struct dist d = dist_of(samples[op], (size_t)ok[op]);
		row(v, n, op_name[op], "p50_ns", d.p50, "ns", -1);
		row(v, n, op_name[op], "mean_ns", d.mean, "ns", -1);
		row(v, n, op_name[op], "min_ns", d.min, "ns", -1);
		row(v, n, op_name[op], "max_ns", d.max, "ns", -1);
	}
	for (int op = 0; op < OP_COUNT; op++)
		free(samples[op]);
	fflush(stdout);
	return 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ns_bench [--mounts 0,1000,5000] [--variant newns,userns,shared] [--repeats N]\n"
		"                [--tmpdir DIR] [--version]\n"
		"Time a container's mount-namespace copy (unshare), runc's rslave of the copy, the detach\n"
		"of the copied mounts and the namespace's exit against N extra mounts, as root in a\n"
		"private mount namespace; print tidy CSV on stdout.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mounts", required_argument, NULL, 'n'},
		{"variant", required_argument, NULL, 'v'},
		{"repeats", required_argument, NULL, 'r'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0},
	};
	int mounts[MAX_N] = {0, 1000, 5000}, nmounts = 3;
	int variants[V_COUNT] = {V_NEWNS, V_USERNS, V_SHARED}, nvariants = 3;
	int repeats = 5;
	const char *tmp_parent = NULL;
	g_parent_pid = getpid();
	die_cleanup = teardown;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': nmounts = parse_int_list(optarg, mounts, MAX_N, "mounts", 0, MAX_MOUNTS); break;
		case 'v': {
			nvariants = 0;
			char *dup = strdup(optarg), *save = NULL;
			for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				int k;
				for (k = 0; k < V_COUNT; k++)
					if (strcmp(t, variant_name[k]) == 0)
						break;
				if (k == V_COUNT)
					die("--variant: unknown variant '%s' (expected newns, userns or shared)", t);
				if (nvariants >= V_COUNT)
					die("--variant: at most %d values", V_COUNT);
				variants[nvariants++] = k;
			}
			free(dup);
			if (!nvariants)
				die("--variant: empty list");
			break;
		}
		case 'r': {
			int v;
			parse_int_list(optarg, &v, 1, "repeats", 1, 100000);
			repeats = v;
			break;
		}
		case 'T': tmp_parent = optarg; break;
		case 'V': printf("ns_bench %s\n", NS_BENCH_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: die_bad_option(argv);
		}
	}
	die_if_operands(argc, argv);

	scratch_enter_private_ns();
	int base = count_mounts();
	if (base < 1)
		die("cannot read /proc/self/mountinfo");
	scratch_check_room(mounts, nmounts, base);
	scratch_create(tmp_parent);

	struct utsname u;
	uname(&u);
	fprintf(stderr, "ns_bench: info: version %s kernel %s base mounts %d scratch %s repeats %d\n",
		NS_BENCH_VERSION, u.release, base, g_scratch, repeats);
	printf("bench,variant,mounts,op,metric,value,unit,repeat\n");
	int interrupted = 0;
	for (int ni = 0; ni < nmounts && !interrupted; ni++) {
		uint64_t t0 = mono_ns();
		set_mounts(mounts[ni]);
		if (g_signalled) {
			interrupted = 1;
			break;
		}
		fprintf(stderr, "ns_bench: info: N=%d bind mounts set up in %.3f s\n", mounts[ni],
			(double)(mono_ns() - t0) / 1e9);
		for (int vi = 0; vi < nvariants && !interrupted; vi++)
			interrupted = !run_config(variants[vi], mounts[ni], repeats, base);
	}
	fflush(stdout);
	teardown();
	int final = count_mounts();
	if (interrupted || g_signalled) {
		fprintf(stderr, "ns_bench: interrupted; all mounts undone and scratch removed\n");
		return 130;
	}
	if (final != base)
		die("mount table holds %d mounts after cleanup, expected %d", final, base);
	return 0;
}
