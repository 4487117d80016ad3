"""Which machine is faster, and over which part of the kernel model's priors that holds:
the published order of r5.metal, m7i.metal-24xl (SMT on and off), m7i.metal-48xl and
m7a.24xlarge under a burst of per-layer idmapped mounts, read from cohsim's predictions at the
nominal priors and with each prior at its ends (`sensitivity`, the script; `relations`, what
is compared; `runs`, the predictions; `report`, the tables and JSON).
"""
