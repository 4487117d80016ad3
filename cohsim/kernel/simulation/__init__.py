"""Level 3 as a discrete-event simulation: one launch replayed call by call on a machine's CPUs.

`launch` is the conductor of one launch; the simulated resources are `cpus` (the run queue),
`rwsem` (namespace_sem) with its read and write sections in `nssections`, `mountlock`
(mount_lock and its walkers) and `rcu` (the grace periods); `mounttable` and `background` are
the mount table and its background readers; `clock` is the event clock; `records` what a run
records, and `launchresult` the `EngineResult` made of it. The hot modules are compiled with
mypyc where a compiler is present (setup.py).
"""
