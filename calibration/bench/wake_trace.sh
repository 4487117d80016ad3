#!/bin/sh
# wake_trace.sh OUTDIR [cohsim bench mount options...]
#
# Records the kernel's scheduler tracepoints (sched_switch, sched_waking, sched_wakeup) while
# `cohsim bench mount` runs with the given options, one trace per
# strategy x workers x layers, as OUTDIR/trace-STRATEGY-Ww-LL.txt.xz. Then
#     cohsim bench wake-idle OUTDIR/trace-*.txt.xz --out OUTDIR
# turns them into the wake-up latency table (cohsim/measure/wakeidle.py).
# Needs root and tracefs (/sys/kernel/tracing). Leaves tracing off and the buffer empty.
set -eu
out=${1:?usage: wake_trace.sh OUTDIR [--strategy S] [--workers W] [--layers L] [...]}
shift
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "wake_trace.sh: needs root (tracefs)" >&2; exit 1; }
[ -w "$T/trace" ] || { echo "wake_trace.sh: no writable tracefs at $T" >&2; exit 1; }
command -v cohsim >/dev/null || { echo "wake_trace.sh: cohsim is not on PATH" >&2; exit 1; }
command -v xz >/dev/null || { echo "wake_trace.sh: xz is missing (apt-get install xz-utils)" >&2; exit 1; }
strategies=per-layer,common-parent,lowerdir-plus workers=1,2,4 layers=1,50 rest=""
while [ $# -gt 0 ]; do
  case $1 in
    --strategy) strategies=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    *) rest="$rest $1"; shift ;;
  esac
done
mkdir -p "$out"
cleanup() { echo 0 > $T/tracing_on; echo 0 > $T/events/enable; echo > $T/trace; }
trap cleanup EXIT INT TERM
events="sched/sched_switch sched/sched_waking sched/sched_wakeup"
for s in $(echo "$strategies" | tr , ' '); do
  for w in $(echo "$workers" | tr , ' '); do
    for l in $(echo "$layers" | tr , ' '); do
      echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb; echo nop > $T/current_tracer
      for e in $events; do echo 1 > $T/events/$e/enable; done
      echo 1 > $T/tracing_on
      # shellcheck disable=SC2086
      cohsim bench mount --strategy "$s" --workers "$w" --layers "$l" --no-progress \
        --out "$out/run-$s-${w}w-${l}L" $rest > /dev/null
      echo 0 > $T/tracing_on
      cat $T/trace | xz -9e > "$out/trace-$s-${w}w-${l}L.txt.xz"
      lost=$(grep -m1 -o 'entries-in-buffer/entries-written: [0-9]*/[0-9]*' $T/trace || true)
      echo "$s ${w}w ${l}L: $lost"
    done
  done
done
