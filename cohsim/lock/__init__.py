"""Level 2, lock hand-off: pause_bench in simulation.

`params` holds the lock parameters and the result types, `handoffoptions` how one point is run
(one `HandoffOptions`, every default written there), `handoff` the entry point (`simulate`,
`sweep`); `handoffsim` is the discrete-event simulation of the lock algorithms (the model
`"des"` names), on `line` (the lock's cache line, its coherence points from `coherence` and the
timing of every request: home-agent queues, NUMA and SMT); `markov` the analytic fast path and
cross-check (the model `"markov"`).
"""
