#!/usr/bin/env bash
# The path walks of one container start: `runc run` of six entrypoints, each recorded four ways
# (strace -f -tt -T: every call with its path and time; strace -f -c: the summary; perf record:
# CPU per process by task-clock sampling plus the path syscalls' tracepoints, no ptrace; perf
# stat: whole-run CPU and path-syscall counts, no ptrace). Run as root from the repository root:
#
#   calibration/analysis/walkers/measure.sh OUT_DIR [REPEATS [STRACE_REPEATS]]
#
# Needs runc, strace, perf, busybox-static, and a Debian rootfs made beforehand with
#   debootstrap --variant=minbase --include=python3-minimal bookworm $DEBROOT http://deb.debian.org/debian
#   chroot $DEBROOT apt-get install -y --no-install-recommends python3; chroot $DEBROOT apt-get clean
# (DEBROOT defaults to /tmp/wk/deb). Bundles go to /tmp/walkers (remade on every run).
# Writes OUT_DIR/{host.txt,strace/,strace-c/,perf/,perf-stat/}; the logs are xz-compressed.
set -euo pipefail
out=$(realpath -m "${1:?usage: measure.sh OUT_DIR [REPEATS]}")
reps=${2:-7}            # perf record and perf stat runs per workload
sreps=${3:-5}           # strace runs (-tt -T and -c) per workload
deb=${DEBROOT:-/tmp/wk/deb}
W=/tmp/walkers
here=$(dirname "$(realpath "$0")")

rm -rf "$W" && mkdir -p "$W" "$out"/{strace,strace-c,perf,perf-stat}
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

# --- the entrypoint's start-up script: what a typical image's entrypoint shell does
app() {  # app ROOTFS: config files and the script under ROOTFS/etc/app
  local r=$1
  mkdir -p "$r/etc/app/conf.d"
  printf 'name=demo\nport=8080\nlog_level=info\n' > "$r/etc/app/app.conf"
  printf 'APP_HOME=/dev/shm/app\nAPP_USER=app\n' > "$r/etc/app/env"
  printf 'WORKERS=2\n' > "$r/etc/app/conf.d/10-workers.conf"
  printf 'TIMEOUT=30\n' > "$r/etc/app/conf.d/20-timeout.conf"
  cp "$here/start.sh" "$r/etc/app/start.sh"
}

# --- rootfs 1: static busybox (as the runc-strace recordings), with the applets the script runs
bb=$W/bb-rootfs
mkdir -p "$bb/bin" "$bb"/{proc,sys,dev,tmp,etc}
cp /bin/busybox "$bb/bin/busybox"
for a in sh true ls cat grep sed mkdir date id echo test [; do ln -s busybox "$bb/bin/$a"; done
app "$bb"
cp -a "$bb" "$W/bbu-rootfs" && chown -Rh 100000:100000 "$W/bbu-rootfs"
# --- rootfs 2: Debian minbase + python3 (dash, coreutils, glibc: dynamically linked)
app "$deb"

# --- bundles: runc spec's default config; only root.path, args (and, for userns, the maps) differ
mkspec() {  # mkspec NAME ROOTFS USERNS ARGS...
  local name=$1 root=$2 userns=$3; shift 3
  mkdir -p "$W/$name" && (cd "$W/$name" && runc spec)
  python3 - "$W/$name/config.json" "$root" "$userns" "$@" <<'EOF'
import json, sys
path, root, userns, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
c = json.load(open(path))
c["root"]["path"] = root
c["process"]["args"] = args
c["process"]["terminal"] = False
if userns == "1":
    c["linux"]["namespaces"].append({"type": "user"})
    m = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    c["linux"]["uidMappings"], c["linux"]["gidMappings"] = m, m
json.dump(c, open(path, "w"), indent=2)
EOF
}
mkspec true "$bb" 0 /bin/true
mkspec true-userns "$W/bbu-rootfs" 1 /bin/true
mkspec bb-script "$bb" 0 /bin/sh /etc/app/start.sh
mkspec deb-true "$deb" 0 /bin/true
mkspec deb-script "$deb" 0 /bin/sh /etc/app/start.sh
mkspec deb-python "$deb" 0 /usr/bin/python3 -c 'import json, logging, argparse, http.server'
workloads=(true true-userns bb-script deb-true deb-script deb-python)

# --- the syscalls perf counts (path-walking ones, and runc's mount-phase markers)
sc="openat openat2 open creat newfstatat newstat newlstat statx execve execveat readlinkat readlink
access faccessat faccessat2 mkdirat mkdir mknodat unlinkat unlink rmdir chdir chroot fchownat
fchmodat statfs renameat renameat2 symlinkat linkat utimensat getcwd mount umount pivot_root
unshare connect"
ev=$(for s in $sc; do printf 'syscalls:sys_enter_%s,' "$s"; done)
ev=${ev%,}

{
  date -u +%FT%TZ
  uname -a
  lscpu | grep -E '^(Model name|CPU family|Model|Stepping|CPU\(s\)|Hypervisor vendor|Thread)'
  dpkg-query -W runc strace busybox-static linux-perf containerd debootstrap
  runc --version
  echo "host mounts: $(wc -l < /proc/self/mountinfo)"
  echo "debian rootfs: $(chroot "$deb" dpkg-query -W python3 dash coreutils libc6 | tr '\t\n' '= ')"
} > "$out/host.txt"

n=0
for r in $(seq 1 "$reps"); do
  for w in "${workloads[@]}"; do
    b=$W/$w
    if [ "$r" -le "$sreps" ]; then
      n=$((n + 1)); strace -f -tt -T -s 256 -o "$out/strace/$w.$r.strace" runc run --bundle "$b" "w$n" > /dev/null
      n=$((n + 1)); strace -f -c -S calls -o "$out/strace-c/$w.$r.txt" runc run --bundle "$b" "w$n" > /dev/null
    fi
    # task-clock sampled every 250 us of a thread's CPU: finer sampling costs CPU itself on this
    # VM (every 50 us doubled the run's task-clock; 250 us adds ~10-25 %)
    n=$((n + 1)); perf record -q -o "$W/perf.data" -e task-clock -c 250000 -e "$ev" \
      -e sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit \
      -- runc run --bundle "$b" "w$n" > /dev/null
    perf script -i "$W/perf.data" -F comm,pid,tid,time,period,event,trace > "$out/perf/$w.$r.txt" 2> /dev/null
    n=$((n + 1)); perf stat -x, -o "$out/perf-stat/$w.$r.csv" -e task-clock -e "$ev" \
      -- runc run --bundle "$b" "w$n" > /dev/null
  done
done
xz -9 "$out"/strace/*.strace "$out"/perf/*.txt
echo "done: $n runs"
