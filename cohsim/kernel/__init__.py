"""Level 3, the kernel: containers' mount sequences against namespace_sem, mount_lock,
expedited RCU grace periods and the CPUs' run queue.

The model both engines share: `costs` holds the kernel's per-syscall costs
(models/kernel/*.toml), `classify` which op a traced syscall is, `plan` each thread's calls
worked out before a run, `callcost` what a call costs in the node's state, `linecosts` what
level 3 asks level 2 (cached cache-line costs, kept on disk by `linecache`), `waketable` the
measured wake-up latency by idle time, and `result` what an engine gives back.

The two engines, each a subpackage: `simulation`, the discrete-event simulation of a launch
(the reference), and `analytic`, the closed-form burst model checked against it.
"""
