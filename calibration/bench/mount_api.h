/*
 * mount_api.h: the new mount API as mount_bench and walk_bench call it -- the syscall numbers
 * and constants (under our own names, so that any libc builds it), thin syscall wrappers, the
 * user namespace whose fd an idmapped mount takes ("0 100000 65536") and the up-front check
 * that the kernel has open_tree(2) and mount_setattr(2).
 *
 * Include after bench_util.h (for BENCH_NAME and die()).  Everything is static inline, so a
 * benchmark that uses only part of it builds without unused-function warnings.
 */
#ifndef COHSIM_MOUNT_API_H
#define COHSIM_MOUNT_API_H

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* New mount API numbers are the same on every architecture (unified syscall table). */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* Constants from <linux/mount.h> and <linux/fcntl.h>, under our own names so that this file
 * builds with any libc whether or not its <sys/mount.h> already declares them. */
#define MB_OPEN_TREE_CLONE 1u
#define MB_AT_EMPTY_PATH 0x1000u
#define MB_AT_RECURSIVE 0x8000u
#define MB_MOVE_MOUNT_F_EMPTY_PATH 0x4u
#define MB_MOUNT_ATTR_RDONLY 0x1ull
#define MB_MOUNT_ATTR_IDMAP 0x100000ull
#define MB_MS_PRIVATE (1ull << 18)
#define MB_FSOPEN_CLOEXEC 1u
#define MB_FSMOUNT_CLOEXEC 1u
#define MB_FSCONFIG_SET_STRING 1u
#define MB_FSCONFIG_SET_FD 5u
#define MB_FSCONFIG_CMD_CREATE 6u

struct mb_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static inline int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}
static inline int sys_move_mount(int fdf, const char *pf, int fdt, const char *pt, unsigned flags)
{
	return (int)syscall(SYS_move_mount, fdf, pf, fdt, pt, flags);
}
static inline int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct mb_mount_attr *a)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, a, sizeof *a);
}
static inline int sys_fsopen(const char *fs, unsigned flags) { return (int)syscall(SYS_fsopen, fs, flags); }
static inline int sys_fsconfig(int fd, unsigned cmd, const char *key, const void *val, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, val, aux);
}
static inline int sys_fsmount(int fd, unsigned flags, unsigned attrs) { return (int)syscall(SYS_fsmount, fd, flags, attrs); }

/* ------------------------------------------------------------------ user namespace */

static inline void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open(%s): %s", path, strerror(errno));
	ssize_t n = write(fd, text, strlen(text));
	if (n != (ssize_t)strlen(text))
		die("write(%s, \"%s\"): %s", path, text, strerror(errno));
	close(fd);
}

/* A user namespace mapping 0 -> 100000 (65536 ids), as containerd's idmapped rootfs uses: a
 * forked child unshares it, the parent writes its maps and keeps /proc/<child>/ns/user open. */
static inline int make_userns_fd(void)
{
	int p2c[2], c2p[2];
	if (pipe2(p2c, O_CLOEXEC) || pipe2(c2p, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		int e = unshare(CLONE_NEWUSER) ? errno : 0;
		if (write(c2p[1], &e, sizeof e) != sizeof e)
			_exit(1);
		char b;
		while (read(p2c[0], &b, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	int e = -1;
	if (read(c2p[0], &e, sizeof e) != sizeof e || e != 0) {
		close(p2c[1]);
		waitpid(pid, NULL, 0);
		die("cannot create a user namespace: %s (are user namespaces disabled? see "
		    "/proc/sys/user/max_user_namespaces)",
		    e > 0 ? strerror(e) : "child failed");
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
	write_file(path, "deny");
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	write_file(path, "0 100000 65536");
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	write_file(path, "0 100000 65536");
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open(%s): %s", path, strerror(errno));
	close(p2c[1]);
	close(c2p[0]);
	waitpid(pid, NULL, 0);
	return fd;
}

static inline void check_kernel(void)
{
	struct mb_mount_attr a = {0};
	errno = 0;
	if (sys_open_tree(-EBADF, "", 0) < 0 && errno == ENOSYS)
		die("this kernel lacks open_tree(2) (Linux >= 5.2 needed)");
	errno = 0;
	if (sys_mount_setattr(-1, "", MB_AT_EMPTY_PATH, &a) < 0 && errno == ENOSYS)
		die("this kernel lacks mount_setattr(2) (Linux >= 5.12 needed for idmapped mounts)");
}

#endif
