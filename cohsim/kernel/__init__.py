"""Level 3, the kernel: containers' mount sequences against namespace_sem, mount_lock,
expedited RCU grace periods and the CPUs' run queue.

The model: `costs` holds the kernel's per-syscall costs (models/kernel/*.toml), `classify` which
op a traced syscall is, `linecosts` what level 3 asks level 2 (cached cache-line costs),
`waketable` the measured wake-up latency by idle time.

The simulation: `launch` is the conductor of one launch; `plan` works out each thread's calls
before the run; the simulated resources are `cpus` (the run queue), `rwsem` (namespace_sem)
with its read and write sections in `nssections`, `mountlock` (mount_lock and its walkers) and
`rcu` (the grace periods); `mounttable` and `background` are the mount table and its
background readers; `records` what a run records.
"""
