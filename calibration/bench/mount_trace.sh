#!/bin/sh
# mount_trace.sh OUTDIR STRATEGY WORKERS LAYERS [CONTAINERS]
#
# Records the mount syscalls' enter/exit tracepoints (mount, umount2), the scheduler's
# sched_switch/sched_wakeup and the kernel's lock contention tracepoints (lock:contention_begin
# /end: rwsem readers and writers in their slow path, mutexes, spinlocks) while
# `cohsim bench mount` runs one configuration (1 repeat, no mountinfo sampling), as
# OUTDIR/trace-STRATEGY-Ww-LL.txt.xz, the bench's CSV and sidecar beside it.
# With MOUNT_TRACE_STACKS=1 it also records a kernel stack (a `stacktrace` trigger) for every
# mount_bench task that goes to sleep (sched_switch out of state S or D) and for every
# wake-up of one (sched_wakeup, in the waker's context), as OUTDIR/stacks-STRATEGY-Ww-LL.txt.xz.
# With MOUNT_TRACE_LOCKSTACKS=1 it records a kernel stack for every lock:contention_begin (who
# waits for which lock, from where: spinlocks, mutexes, rwsems), as
# OUTDIR/lockstacks-STRATEGY-Ww-LL.txt.xz (calibration.analysis.mount_trace.lockstacks reads it).
# With MOUNT_TRACE_IRQS=1 it also records the entries of the interrupt vectors a vCPU takes
# while busy (IPIs: call_function_single, call_function, reschedule; local timer, irq_work),
# as OUTDIR/irqs-STRATEGY-Ww-LL.txt.xz.
# Needs root and tracefs (/sys/kernel/tracing). Leaves tracing off, the triggers removed and
# the buffer empty.
set -eu
out=${1:?usage: mount_trace.sh OUTDIR STRATEGY WORKERS LAYERS [CONTAINERS]}
s=${2:?strategy}; w=${3:?workers}; l=${4:?layers}; c=${5:-100}
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "mount_trace.sh: needs root (tracefs)" >&2; exit 1; }
[ -w "$T/trace" ] || { echo "mount_trace.sh: no writable tracefs at $T" >&2; exit 1; }
command -v cohsim >/dev/null || { echo "mount_trace.sh: cohsim is not on PATH" >&2; exit 1; }
command -v xz >/dev/null || { echo "mount_trace.sh: xz is missing (apt-get install xz-utils)" >&2; exit 1; }
mkdir -p "$out"
stacks=${MOUNT_TRACE_STACKS:-0}
SLEEP='stacktrace if prev_comm == "mount_bench" && prev_state & 3'
WAKE='stacktrace if comm == "mount_bench"'
LOCK='stacktrace'
lockstacks=${MOUNT_TRACE_LOCKSTACKS:-0}
irqs=${MOUNT_TRACE_IRQS:-0}
name=trace; [ "$stacks" = 1 ] && name=stacks; [ "$irqs" = 1 ] && name=irqs
[ "$lockstacks" = 1 ] && name=lockstacks
extra=""
[ "$irqs" = 1 ] && extra="irq_vectors/call_function_single_entry irq_vectors/call_function_entry
  irq_vectors/reschedule_entry irq_vectors/local_timer_entry irq_vectors/irq_work_entry"
cleanup() {
  echo 0 > $T/tracing_on; echo 0 > $T/events/enable
  if [ "$stacks" = 1 ]; then
    echo "!$SLEEP" > $T/events/sched/sched_switch/trigger 2>/dev/null || true
    echo "!$WAKE" > $T/events/sched/sched_wakeup/trigger 2>/dev/null || true
  fi
  if [ "$lockstacks" = 1 ]; then
    echo "!$LOCK" > $T/events/lock/contention_begin/trigger 2>/dev/null || true
  fi
  echo > $T/trace
}
trap cleanup EXIT INT TERM
echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb; echo nop > $T/current_tracer
for e in syscalls/sys_enter_umount syscalls/sys_exit_umount syscalls/sys_enter_mount \
         syscalls/sys_exit_mount sched/sched_switch sched/sched_wakeup \
         lock/contention_begin lock/contention_end $extra; do
  echo 1 > $T/events/$e/enable
done
if [ "$stacks" = 1 ]; then
  echo "$SLEEP" > $T/events/sched/sched_switch/trigger
  echo "$WAKE" > $T/events/sched/sched_wakeup/trigger
fi
[ "$lockstacks" = 1 ] && echo "$LOCK" > $T/events/lock/contention_begin/trigger
echo 1 > $T/tracing_on
cohsim bench mount --strategy "$s" --workers "$w" --layers "$l" --containers "$c" --repeats 1 \
  --mountinfo-every 0 --no-progress --out "$out/run-$s-${w}w-${l}L" > /dev/null
echo 0 > $T/tracing_on
cat $T/trace | xz -T0 -9 > "$out/$name-$s-${w}w-${l}L.txt.xz"
lost=$(grep -m1 -o 'entries-in-buffer/entries-written: [0-9]*/[0-9]*' $T/trace || true)
echo "$s ${w}w ${l}L: $lost"
