"""Level 3, the kernel: containers' mount sequences against namespace_sem, mount_lock,
expedited RCU grace periods and the CPUs' run queue.

`costs` holds the kernel's per-syscall costs (models/kernel/*.toml) and how a syscall maps to
one, `linecosts` what level 3 asks level 2 (cached cache-line costs), `waketable` the measured
wake-up latency by idle time, `runqueue` the CPUs and the rwsem, `mountlock` mount_lock and its
walkers, `rcu` the grace periods, `launch` the simulation of one launch.
"""
