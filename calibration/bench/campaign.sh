#!/usr/bin/env bash
# campaign.sh OUTDIR [STEP...]: the standard measurements on a new host, as root, one folder each.
#
# Steps (default: all, in this order; name some to run only those):
#   host    facts the sidecars do not hold: /proc/cpuinfo, lscpu, every CPU's topology and
#           cache sharing lists, NUMA distances, the kernel command line, the compiler
#   corun   corun_bench at all online CPUs: how much slower CPU work runs with every CPU busy
#   pause   cohsim bench pause, ttas, ticket and mcs, compact placement, 1..N threads
#   pairs   pause_bench with 2 threads on every pair of CPUs (i < j): a hand-off matrix
#   wake    cohsim bench wake
#   mount   cohsim bench mount, 3 strategies x workers 1..N x layers 1,10,50, 20 containers each
#   burst   cohsim bench mount with one container per worker at 16..100 workers (a burst)
#   ns      cohsim bench ns (namespace copy vs mount-table size)
#   prop    cohsim bench prop (propagation into slave namespaces, mountinfo reads)
#   walk    cohsim bench walk: stat walkers against M = 1..4 mounters (containerd's per-layer
#           sequence), layers 10 and 50, one run folder per M (walk/m1 .. walk/m4); walkers
#           0, 1, 2, 4, ... and N - M (every other CPU), m1 also with no mounter (the walk's
#           baseline). 1 s measured + 0.1 s warm-up a run, 3 rounds: on a 16-CPU host 159 runs,
#           about 3 minutes
#   scatter the bursts the model misses most, 10 repeats each (lowerdir-plus 32 x 10, whose
#           read-side convoy depends on arrival order; common-parent 100 and 200 x 50): how far
#           one burst's sequence times spread from run to run, about 1 min
#   ring    cohsim bench prop --ring: a mount and an unmount under a shared mount against the
#           size of its peer group, R = 0..10,000 (the walk of the group that holds
#           namespace_sem in a per-layer burst; its cost a peer grows with R where the group
#           outgrows a core's caches: 16 to 44 ns on the 2-vCPU Emerald Rapids VM), about 1 min
#   knee    where the ring's cost a peer bends (the knee that places a burst's ring against
#           the L2: cohsim.kernel.walk, propagation.peer_bytes): prop_bench's ring on a fine grid
#           of R = 1,000..6,000 (500 apart) and 8,000, 10,000, three runs, built on one CPU and
#           by every CPU in turn (knee/spread-*), and chase_bench local around the L2's edge
#           (512 KiB-4 MiB), about 1 min
#   pace    cohsim bench wake --pace: one waker wakes 8, 16, 32, 64 sleepers spread over the
#           other CPUs at once (the pace of wake_up_q(), untraced), their CPUs idle and (pace/busy)
#           running a spinner, 5 repeats, under a minute
#   cputime cohsim bench mount --cpu-time: each call's thread CPU time beside its wall time at
#           1, 4, N, 64 and 100 workers x 10 and 50 layers, 2 containers a worker, no mountinfo
#           sample, 3 repeats: how much of a contended call's wait is spun (rwsem optimistic
#           spinning) and how much slept, untraced, about 2 minutes
#   depth   cohsim bench mount --layer-depth 3, 5, 8, 13 (common-parent, lowerdir-plus, 1, 2, 4, 8,
#           N, 64 workers x 50 layers, --cpu-time, 10 repeats): what one trap look-up step of an
#           overlay mount costs alone and contended, under a minute
#
# Every step writes OUTDIR/<step>/ and appends "<step> <seconds>" to OUTDIR/steps.txt; a step that
# fails is recorded as "<step> FAILED rc" and the others still run. CAMPAIGN_TAR=FILE re-packs
# OUTDIR into FILE (xz) after every step, so that whatever finished survives a timeout.
# Needs: cohsim on PATH (or COHSIM="python3 -m cohsim.cli"), cc/gcc, root for the mount steps.
set -u
out=${1:?usage: campaign.sh OUTDIR [STEP...]}
shift
steps=${*:-host corun pause pairs wake mount burst ns prop walk scatter ring knee chase cputime pace depth}
cohsim=${COHSIM:-cohsim}
cc=${CC:-cc}
command -v "$cc" >/dev/null || cc=gcc
here=$(cd "$(dirname "$0")" && pwd)
ncpu=$(nproc)
mkdir -p "$out"

# thread counts 1, 2, 4, ... up to the online CPUs, with N itself last
threads() {
    local t=1 list=""
    while [ "$t" -lt "$ncpu" ]; do list="$list,$t"; t=$((t * 2)); done
    echo "${list#,},$ncpu" | sed 's/^,//'
}

# a comma-separated list of counts, sorted, each once
counts() {
    echo "$1" | tr , '\n' | sort -nu | paste -sd,
}

pack() {
    if [ -n "${CAMPAIGN_TAR:-}" ]; then
        tar -C "$(dirname "$out")" -cJf "$CAMPAIGN_TAR.tmp" "$(basename "$out")" &&
            mv "$CAMPAIGN_TAR.tmp" "$CAMPAIGN_TAR"
    fi
}

step_host() {
    local d=$out/host
    mkdir -p "$d"
    cp /proc/cpuinfo "$d/cpuinfo.txt"
    lscpu >"$d/lscpu.txt" 2>&1 || true
    lscpu -e=CPU,CORE,SOCKET,NODE,CACHE,ONLINE >"$d/lscpu-e.txt" 2>&1 || true
    uname -a >"$d/uname.txt"
    cat /proc/cmdline >"$d/cmdline.txt"
    head -5 /proc/meminfo >"$d/meminfo.txt"
    "$cc" --version 2>&1 | head -1 >"$d/compiler.txt"
    for c in /sys/devices/system/cpu/cpu[0-9]*; do
        n=${c##*cpu}
        printf '%s core=%s pkg=%s siblings=%s llc=%s\n' "$n" \
            "$(cat "$c/topology/core_id" 2>/dev/null)" \
            "$(cat "$c/topology/physical_package_id" 2>/dev/null)" \
            "$(cat "$c/topology/thread_siblings_list" 2>/dev/null)" \
            "$(cat "$c/cache/index3/shared_cpu_list" 2>/dev/null)"
    done | sort -n >"$d/topology.txt"
    cat /sys/devices/system/node/node*/distance >"$d/numa-distance.txt" 2>/dev/null || true
    cat /sys/devices/system/cpu/smt/control >"$d/smt.txt" 2>/dev/null || true
    cat /sys/devices/system/cpu/vulnerabilities/* >"$d/vulnerabilities.txt" 2>/dev/null || true
    cat /proc/sys/fs/mount-max >"$d/mount-max.txt" 2>/dev/null || true
}

step_corun() {
    mkdir -p "$out/corun"
    "$cc" -O2 -pthread "$here/corun_bench.c" -o "$out/corun/corun_bench" &&
        "$out/corun/corun_bench" --threads "$ncpu" --ms 300 --repeats 3 >"$out/corun/corun_bench.csv" &&
        rm -f "$out/corun/corun_bench"
}

step_pause() {
    $cohsim bench pause --threads "$(threads)" --lock ttas,ticket,mcs --placement compact \
        --cs-ns 100 --think-ns 0 --duration-ms 500 --warmup-ms 100 --repeats 3 \
        --out "$out/pause" --no-progress
}

step_pairs() {
    local d=$out/pairs bin
    mkdir -p "$d"
    bin=$d/pause_bench
    "$cc" -O2 -pthread -I"$here" "$here/pause_bench.c" -o "$bin" || return 1
    local first=1 i j
    for ((i = 0; i < ncpu; i++)); do
        for ((j = i + 1; j < ncpu; j++)); do
            if [ $first = 1 ]; then
                "$bin" --cpus "$i,$j" --threads 2 --lock ttas --duration-ms 100 --warmup-ms 20 \
                    --repeats 1 --pause-samples 200 2>>"$d/stderr.txt" || return 1
                first=0
            else
                "$bin" --cpus "$i,$j" --threads 2 --lock ttas --duration-ms 100 --warmup-ms 20 \
                    --repeats 1 --pause-samples 200 2>>"$d/stderr.txt" | tail -n +2 || return 1
            fi
        done
    done >"$d/pairs_bench.csv"
    rm -f "$bin"
}

step_wake() {
    $cohsim bench wake --repeats 5 --out "$out/wake" --no-progress
}

step_pace() {
    $cohsim bench wake --pace 8,16,32,64 --repeats 5 --out "$out/pace" --no-progress || return
    $cohsim bench wake --pace 8,16,32,64 --pace-busy --repeats 5 --out "$out/pace/busy" \
        --no-progress
}

step_mount() {
    $cohsim bench mount --strategy per-layer,common-parent,lowerdir-plus --workers "$(threads)" \
        --layers 1,10,50 --containers 20 --sequences-per-container 2 --repeats 3 \
        --out "$out/mount" --no-progress
}

step_burst() {
    $cohsim bench mount --strategy per-layer,common-parent,lowerdir-plus --workers 16,32,64,100 \
        --layers 10,50 --containers 1 --sequences-per-container 2 --repeats 3 \
        --out "$out/burst" --no-progress
}

step_ns() {
    $cohsim bench ns --mounts 0,1000,2000,5000,10000 --repeats 5 --out "$out/ns" --no-progress
}

step_prop() {
    $cohsim bench prop --slaves 0,10,50,100,200 --mounts 0,1000,5000 --repeats 5 \
        --out "$out/prop" --no-progress
}

# walker counts beside M mounters: 0, 1, 2, 4, ... below N - M, and N - M itself
walkers() {
    local m=$1 t=1 list=0
    while [ "$t" -lt $((ncpu - m)) ]; do list="$list,$t"; t=$((t * 2)); done
    echo "$list,$((ncpu - m))"
}

step_walk() {
    local m mounters
    mkdir -p "$out/walk"
    for m in 1 2 3 4; do
        [ $((ncpu - m)) -ge 1 ] || continue
        mounters=$m
        [ "$m" = 1 ] && mounters=0,1
        $cohsim bench walk --walkers "$(walkers "$m")" --mounters "$mounters" --layers 10,50 \
            --walk stat --duration-ms 1000 --warmup-ms 100 --repeats 3 \
            --out "$out/walk/m$m" --no-progress || return 1
    done
}

step_scatter() {
    mkdir -p "$out/scatter"
    $cohsim bench mount --strategy lowerdir-plus --workers 32 --layers 10 --containers 1 \
        --repeats 10 --out "$out/scatter/lowerdir-plus-32w-10L" --no-progress || return
    $cohsim bench mount --strategy common-parent --workers 100,200 --layers 50 --containers 1 \
        --repeats 10 --out "$out/scatter/common-parent-50L" --no-progress
}

step_ring() {
    local rings=0,500,1000,2000,5000,10000,20000
    $cohsim bench prop --slaves 0 --mounts 0 --ring $rings --repeats 5 \
        --out "$out/ring" --no-progress || return
    # the same ring built by threads pinned in turn to every online CPU, so that neighbours come
    # from different CPUs' slabs (and, on two sockets, different nodes)
    $cohsim bench prop --slaves 0 --mounts 0 --ring $rings --repeats 5 \
        --ring-cpus "$(seq -s, 0 $((ncpu - 1)))" --out "$out/ring/spread" --no-progress
}

step_knee() {
    local rings=0,1000,1500,2000,2500,3000,3500,4000,4500,5000,5500,6000,8000,10000 r
    mkdir -p "$out/knee"
    for r in 1 2 3; do
        $cohsim bench prop --slaves 0 --mounts 0 --ring $rings --repeats 5 \
            --out "$out/knee/run-$r" --no-progress || return
        $cohsim bench prop --slaves 0 --mounts 0 --ring $rings --repeats 5 \
            --ring-cpus "$(seq -s, 0 $((ncpu - 1)))" --out "$out/knee/spread-$r" --no-progress \
            || return
    done
    $cohsim bench chase --mode local --repeats 3 --cpus "0,$((ncpu - 1))" \
        --sizes 512K,768K,1M,1.25M,1.5M,1.75M,2M,2.5M,3M,4M --out "$out/knee/chase" --no-progress
}

step_cputime() {
    $cohsim bench mount --strategy per-layer,common-parent,lowerdir-plus \
        --workers "$(counts "1,4,$ncpu,64,100")" \
        --layers 10,50 --containers 2 --repeats 3 --cpu-time --mountinfo-every 0 \
        --out "$out/cputime" --no-progress
}

step_depth() {
    local d w
    w=$(counts "1,2,4,8,$ncpu,64")
    mkdir -p "$out/depth"
    for d in 3 5 8 13; do
        $cohsim bench mount --strategy common-parent,lowerdir-plus --workers "$w" --layers 50 \
            --containers 2 --repeats 10 --cpu-time --mountinfo-every 0 --layer-depth $d \
            --out "$out/depth/depth-$d" --no-progress || return
    done
}

step_chase() {
    # load latency by working-set size (which cache level the peer ring fits in): local, and
    # with the lines last written by the highest-numbered CPU (another core, or socket, if any)
    $cohsim bench chase --mode local,remote --repeats 3 --cpus "0,$((ncpu - 1))" \
        --out "$out/chase" --no-progress
}

for s in $steps; do
    t0=$(date +%s.%N)
    echo "campaign: $s ..." >&2
    "step_$s"
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc = 0 ]; then
        awk -v s="$s" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s %.1f\n", s, b - a }' >>"$out/steps.txt"
    else
        printf '%s FAILED %s\n' "$s" "$rc" >>"$out/steps.txt"
    fi
    tail -1 "$out/steps.txt" >&2
    pack
done
