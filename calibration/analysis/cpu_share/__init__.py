"""How much of a mount call's wait is spent on the CPU (spinning) and how much asleep: the
kernel's (mount_bench --cpu-time) beside the level-3 simulation's."""
