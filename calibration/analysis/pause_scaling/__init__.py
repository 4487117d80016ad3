"""pause_bench on the 16-vCPU Emerald Rapids-class VM against level 2: the held-out thread
counts (heldout.py) and the 120-pair hand-off matrix (pairs.py)."""
