"""The workload: mount syscall traces as level 3 replays them.

`trace` holds the trace types, `parse` reads strace and perf trace logs, `synth` writes
containerd's per-layer / common-parent / lowerdir+ sequences and mount_bench's.
"""
