#!/usr/bin/env bash
# The path walks of an exec probe: `runc exec` of /bin/true into a running busybox container
# (what a kubelet exec liveness/readiness probe costs the node, through containerd's ExecSync,
# minus the shim and containerd). Run as root from the repository root after measure.sh (it
# reuses its busybox rootfs under /tmp/walkers):
#
#   calibration/analysis/walkers/exec.sh OUT_DIR [REPEATS]
#
# Writes OUT_DIR/strace/exec.N.strace.xz (strace -f -tt -T -s 256) and OUT_DIR/perf-stat/exec.N.csv
# (task-clock and the path syscalls, untraced), N = 1..REPEATS (default 5).
set -euo pipefail
out=$(realpath -m "${1:?usage: exec.sh OUT_DIR [REPEATS]}")
reps=${2:-5}
W=/tmp/walkers
b=$W/probe
mkdir -p "$out"/{strace,perf-stat} "$b"
[ -d "$W/bb-rootfs" ] || { echo "run measure.sh first (it makes $W/bb-rootfs)"; exit 1; }
(cd "$b" && rm -f config.json && runc spec)
python3 - "$b/config.json" "$W/bb-rootfs" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["root"]["path"] = sys.argv[2]
c["process"]["args"] = ["/bin/sh", "-c", "sleep 3600"]
c["process"]["terminal"] = False
json.dump(c, open(sys.argv[1], "w"), indent=2)
EOF
ln -sf busybox "$W/bb-rootfs/bin/sleep"
runc delete -f probe 2> /dev/null || true
runc create --bundle "$b" probe < /dev/null > /dev/null 2>&1
runc start probe
sc="openat openat2 open creat newfstatat newstat newlstat statx execve execveat readlinkat readlink
access faccessat faccessat2 mkdirat mkdir mknodat unlinkat unlink rmdir chdir chroot fchownat
fchmodat statfs renameat renameat2 symlinkat linkat utimensat getcwd mount umount pivot_root
unshare connect"
ev=$(for s in $sc; do printf 'syscalls:sys_enter_%s,' "$s"; done)
ev=${ev%,}
for r in $(seq 1 "$reps"); do
  strace -f -tt -T -s 256 -o "$out/strace/exec.$r.strace" runc exec probe /bin/true
  perf stat -x, -o "$out/perf-stat/exec.$r.csv" -e task-clock -e "$ev" -- runc exec probe /bin/true
done
runc delete -f probe
xz -9 "$out"/strace/exec.*.strace
echo "done: $reps + $reps execs"
