"""Which syscalls walk a path, and how many walks each makes (Linux 6.18, fs/namei.c).

Every walk starts in `path_init()`, which reads mount_lock's sequence counter
(`__read_seqcount_begin`: it spins while a writer holds mount_lock). So a walk is counted
wherever the kernel calls path_init: once per path argument of the path syscalls, whatever the
result (a failed lookup has walked too), with these exceptions and additions:

- an empty path (`""`) without AT_EMPTY_PATH fails in getname() before any walk; with
  AT_EMPTY_PATH, `newfstatat`/`statx` go straight to the fd (fs/stat.c: `vfs_fstat`, no walk),
  and so does `move_mount` with MOVE_MOUNT_F/T_EMPTY_PATH (fs/namespace.c takes the fd's path
  when `getname_maybe_null()` finds no name, since Linux 6.15), while the others (`execveat`,
  `readlinkat`, `fchownat`, `open_tree`, ...) still run path_init on the fd's path (a walk of no
  components, but a read of the counter);
- a NULL path (`utimensat(fd, NULL, ...)`) walks nothing;
- `execve`/`execveat` walk the program, and the kernel walks its ELF interpreter (`open_exec` of
  PT_INTERP: ld.so) for a dynamically linked program: +1, seen in the trace as the glibc loader's
  first call (`access("/etc/ld.so.preload")`); a `#!` script would add its interpreter (none here);
- `mount` walks its target, and its source too for MS_BIND and MS_MOVE; an overlay mount walks
  every lowerdir, its upperdir and workdir (ovl's option parsing: `kern_path` each);
- `pivot_root`, `rename*`, `link*` walk two paths; `symlink*` one (its target is a string);
- `connect`/`bind` of an AF_UNIX socket to a path (not an abstract `@` name) walk it.

Not counted (the trace cannot show them): a walk restarted by the kernel (RCU-walk failing with
-ECHILD retries in ref-walk mode, -ESTALE retries with LOOKUP_REVAL: both call path_init again),
and the other readers of the counter: `getcwd`/`d_path` (`prepend_path` under mount_lock's
seqcount, counted apart as `dpath`), `__legitimize_mnt`.
"""

from __future__ import annotations

import re

#: syscall -> indices of its path arguments (0-based)
PATH_ARGS: dict[str, tuple[int, ...]] = {
    "open": (0,),
    "creat": (0,),
    "openat": (1,),
    "openat2": (1,),
    "stat": (0,),
    "lstat": (0,),
    "newstat": (0,),
    "newlstat": (0,),
    "newfstatat": (1,),
    "statx": (1,),
    "access": (0,),
    "faccessat": (1,),
    "faccessat2": (1,),
    "readlink": (0,),
    "readlinkat": (1,),
    "chdir": (0,),
    "chroot": (0,),
    "mkdir": (0,),
    "mkdirat": (1,),
    "mknod": (0,),
    "mknodat": (1,),
    "rmdir": (0,),
    "unlink": (0,),
    "unlinkat": (1,),
    "rename": (0, 1),
    "renameat": (1, 3),
    "renameat2": (1, 3),
    "link": (0, 1),
    "linkat": (1, 3),
    "symlink": (1,),
    "symlinkat": (2,),
    "chmod": (0,),
    "fchmodat": (1,),
    "fchmodat2": (1,),
    "chown": (0,),
    "lchown": (0,),
    "fchownat": (1,),
    "utime": (0,),
    "utimes": (0,),
    "utimensat": (1,),
    "futimesat": (1,),
    "statfs": (0,),
    "truncate": (0,),
    "getxattr": (0,),
    "lgetxattr": (0,),
    "setxattr": (0,),
    "lsetxattr": (0,),
    "listxattr": (0,),
    "llistxattr": (0,),
    "removexattr": (0,),
    "lremovexattr": (0,),
    "inotify_add_watch": (1,),
    "umount2": (0,),
    "umount": (0,),
    "pivot_root": (0, 1),
    "open_tree": (1,),
    "move_mount": (1, 3),
    "fspick": (1,),
    "mount_setattr": (1,),
    "name_to_handle_at": (1,),
    "execve": (0,),
    "execveat": (1,),
    "mount": (1,),  # the source is added below for MS_BIND / MS_MOVE
}
#: calls that skip the walk for an empty path with their EMPTY_PATH flag (Linux 6.18 fs/stat.c,
#: fs/namespace.c: `getname_maybe_null()`, then the fd's own path)
STAT_FD = {"newfstatat", "statx", "move_mount"}
#: the syscalls whose walks are execs (the interpreter walk is added by the caller)
EXECS = {"execve", "execveat"}
SOCKET = {"connect", "bind"}
#: the path syscalls' names (for the perf tracepoint counts: `umount` is umount2's tracepoint)
PATH_SYSCALLS = set(PATH_ARGS) | SOCKET

_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path="')


def split_args(args: str) -> list[str]:
    """strace's argument list split at its top-level commas (strings, arrays and structs kept
    whole)."""
    out, depth, cur, quoted, esc = [], 0, [], False, False
    for ch in args:
        if quoted:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def walks(name: str, args: str) -> list[str]:
    """The walks one call makes, each named by its kind (`openat`, `mount:source`, ...);
    empty for a call that walks nothing. The ELF interpreter's walk of an exec is the
    caller's to add (it shows only in the new program's first calls)."""
    if name in SOCKET:
        return [name] if _UNIX.search(args) else []
    idx = PATH_ARGS.get(name)
    if idx is None:
        return []
    a = split_args(args)
    empty_ok = "EMPTY_PATH" in args or name == "readlinkat"
    out = []
    for i in idx:
        if i >= len(a):
            continue
        p = a[i]
        if p == "NULL" or not p.startswith('"'):
            continue
        if p == '""':
            if empty_ok and name not in STAT_FD:
                out.append(f"{name}:empty")
            continue
        out.append(name)
    if name == "mount" and len(a) >= 4:
        if re.search(r"\bMS_(BIND|MOVE)\b", a[3]) and a[0].startswith('"'):
            out.append("mount:source")
        if a[2] == '"overlay"' and len(a) >= 5:
            opts = a[4]
            lower = re.search(r"lowerdir=([^,\"]*)", opts)
            n = len(lower.group(1).split(":")) if lower else 0
            n += len(re.findall(r"\b(?:upperdir|workdir)=", opts))
            out += ["mount:overlay-dir"] * n
    return out


def main(argv: list[str]) -> int:
    """`python -m calibration.analysis.walkers.walks NAME 'ARGS'`: the walks of one call as
    strace prints it (NAME and its argument list), one kind a line."""
    for kind in walks(argv[0], argv[1]):
        print(kind)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
