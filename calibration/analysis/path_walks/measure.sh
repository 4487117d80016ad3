#!/usr/bin/env bash
# Path-walking syscalls per CPU-second of two kinds of start-up work, counted by perf's syscall
# tracepoints (no strace overhead). Run from the repository root, as root:
#   calibration/analysis/path_walks/measure.sh calibration/data/HOST/walks/walks.csv
set -euo pipefail
out="${1:?usage: measure.sh OUT.csv}"
ev='syscalls:sys_enter_openat,syscalls:sys_enter_newfstatat,syscalls:sys_enter_execve,syscalls:sys_enter_readlinkat,syscalls:sys_enter_faccessat2,syscalls:sys_enter_mkdirat,syscalls:sys_enter_unlinkat'
echo "workload,repeat,path_syscalls,task_clock_ms,ns_per_path_syscall" > "$out.tmp"
run() {
  local name=$1 rep=$2; shift 2
  perf stat -x, -e "$ev" -e task-clock -o /tmp/walks.perf "$@" > /dev/null 2>&1
  awk -F, -v n="$name" -v r="$rep" '
    /sys_enter/ {s += $1} /task-clock/ {t = $1}
    END {printf "%s,%d,%d,%.1f,%.0f\n", n, r, s, t, t * 1e6 / s}' /tmp/walks.perf >> "$out.tmp"
}
for rep in 0 1 2; do
  run exec-heavy-shell "$rep" bash -c 'for i in $(seq 200); do ls /usr/lib > /dev/null; cat /etc/os-release > /dev/null; done'
  run python-imports "$rep" .venv/bin/python -c 'import numpy, scipy.optimize, matplotlib.pyplot'
done
mv "$out.tmp" "$out"
