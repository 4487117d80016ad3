"""Why a second socket hurts an AMD part more than an Intel one: the remote-home effect.

Run from a checkout:  python examples/remote_home.py

The core-to-core benchmark allocates its cache line once, so on a two-socket machine the line is
homed on one socket. On the AMD chiplet part, two cores of the *other* socket in different CCXs
must go through the home socket's IO die: two socket crossings, as much as a cross-socket pair.
On Intel's mesh the whole socket is one LLC, so the same pair stays local. The model derives
both from one rule (see cohsim/machine/model.py); this script shows it against the measurements.
"""

from __future__ import annotations

from pathlib import Path

from cohsim.machine.c2c import compare
from cohsim.machine.catalog import Catalog
from cohsim.machine.matrix import read_matrix

DATA = Path(__file__).resolve().parent.parent / "calibration" / "data" / "core-to-core-latency"


def main() -> None:
    catalog = Catalog()
    for name, matrix, home in (
        ("c6a.metal", "aws_c6a.metal_epyc-7R13_2s.csv", 0),
        ("c6i.metal", "aws_c6i.metal_xeon-8375C_2s.csv", 0),
    ):
        m = catalog.get(name)
        c = compare(m, read_matrix(DATA / matrix), home, matrix)
        print(f"{name} ({m.topology.interconnect}, {m.topology.llc_domains} LLC domains):")
        for s in c.classes:
            print(
                f"  {s.pair_class:>13s}: model {s.model_ns:6.1f} ns, "
                f"measured {s.measured_median_ns:6.1f} ns ({s.pairs} pairs)"
            )
        print(f"  per-pair median |error| {c.median_abs_pct_error:.1f}%")


if __name__ == "__main__":
    main()
