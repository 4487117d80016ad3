#!/usr/bin/env bash
# containerd's own path walks per container start: Debian's containerd (1.6) runs busybox images
# imported from local OCI archives (no registry), `ctr run --rm IMAGE ID /bin/true`, while
# strace follows the running daemon (-p, -f: its threads and everything it starts: the shim,
# runc, runc init, the container) and, apart, the ctr client. Run as root from the repository
# root, with nothing else using containerd:
#
#   calibration/analysis/walkers/containerd.sh OUT_DIR [REPEATS]
#
# Starts containerd itself (no systemd here) with Debian's /etc/containerd/config.toml, state
# under /var/lib/containerd and /run/containerd; stops it at the end. Images: bb1 (1 layer) and
# bb5 (5 layers), built by calibration.analysis.walkers.oci_image. Per image and repeat: one run
# under `strace -f -tt -T -s 4096 -p containerd` (with ctr under its own strace), one under
# `strace -f -c -p containerd`, and one under `perf record -p containerd` (task-clock every
# 250 us of CPU, the path syscalls' tracepoints, forks and execs) for the CPU by process.
set -euo pipefail
out=$(realpath -m "${1:?usage: containerd.sh OUT_DIR [REPEATS]}")
reps=${2:-5}
py=${PYTHON:-.venv/bin/python}
W=/tmp/walkers-ctrd
rm -rf "$W" && mkdir -p "$W" "$out"/{strace,strace-c,perf}
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

for n in 1 5; do "$py" -m calibration.analysis.walkers.oci_image "$W/bb$n.tar" "bb$n:latest" "$n"; done
containerd --config /etc/containerd/config.toml > "$W/containerd.log" 2>&1 &
cpid=$!
trap 'kill $cpid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -S /run/containerd/containerd.sock ] && ctr version > /dev/null 2>&1 && break; sleep 0.2; done
for n in 1 5; do ctr images import "$W/bb$n.tar" > /dev/null; done
ctr images ls > "$out/images.txt"
ctr run --rm docker.io/library/bb1:latest warm /bin/true  # first start: plugins, shim binary cache

sc="openat openat2 open creat newfstatat newstat newlstat statx execve execveat readlinkat readlink
access faccessat faccessat2 mkdirat mkdir mknodat unlinkat unlink rmdir chdir chroot fchownat
fchmodat statfs renameat renameat2 symlinkat linkat utimensat getcwd mount umount pivot_root
unshare connect"
ev=$(for s in $sc; do printf 'syscalls:sys_enter_%s,' "$s"; done)
ev=${ev%,}

{
  date -u +%FT%TZ
  uname -r
  dpkg-query -W containerd runc strace linux-perf
  containerd --version
  ctr version | sed -n '1,3p'
  echo "host mounts before: $(wc -l < /proc/self/mountinfo)"
} > "$out/host.txt"

attach() {  # attach LOG CMD...: run CMD attached to containerd, wait until it is attached
  "$@" -p "$cpid" 2> "$W/attach.err" &
  apid=$!
  for _ in $(seq 50); do grep -q attached "$W/attach.err" 2> /dev/null && break; sleep 0.1; done
  sleep 0.5
}
detach() { sleep 0.5; kill -INT "$apid"; wait "$apid" || true; }

k=0
for r in $(seq 1 "$reps"); do
  for n in 1 5; do
    img=docker.io/library/bb$n:latest
    k=$((k + 1)); attach strace -f -tt -T -s 4096 -o "$out/strace/containerd.bb$n.$r.strace"
    strace -f -tt -T -s 4096 -o "$out/strace/ctr.bb$n.$r.strace" ctr run --rm "$img" "c$k" /bin/true
    detach
    k=$((k + 1)); attach strace -f -c -S calls -o "$out/strace-c/containerd.bb$n.$r.txt"
    ctr run --rm "$img" "c$k" /bin/true
    detach
    k=$((k + 1))
    perf record -q -o "$W/perf.data" -e task-clock -c 250000 -e "$ev" \
      -e sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit \
      -p "$cpid" 2> /dev/null &
    apid=$!
    sleep 1
    ctr run --rm "$img" "c$k" /bin/true
    detach
    perf script -i "$W/perf.data" -F comm,pid,tid,time,period,event,trace \
      > "$out/perf/containerd.bb$n.$r.txt" 2> /dev/null
  done
done
echo "host mounts after: $(wc -l < /proc/self/mountinfo)" >> "$out/host.txt"
kill "$cpid"; wait "$cpid" || true
cp "$W/containerd.log" "$out/containerd.log"
xz -9 "$out"/strace/*.strace "$out"/perf/*.txt "$out/containerd.log"
echo "done: $k container starts"
