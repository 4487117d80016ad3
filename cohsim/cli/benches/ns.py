"""`cohsim bench ns`: ns_bench's flags, argv and summary (a container's namespace copy)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import positive_int
from cohsim.cli.benches.flags import flags, list_arg
from cohsim.units import NS_PER_US

_NS_VARIANTS = ("newns", "userns", "shared")


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench ns`: ns_bench's flags."""
    pn = kinds.add_parser(
        "ns",
        help="a container's mount-namespace copy and teardown vs the mount-table size (root)",
        description="ns_bench: with N extra bind mounts, a child unshares a mount namespace"
        " (copy of the whole table), makes it rslave as runc does, detaches the copied mounts"
        " and exits (needs root).",
    )
    list_arg(
        pn,
        "--mounts",
        "0,1000,5000",
        "extra mounts N, comma-separated (default 0,1000,5000)",
        low=0,
    )
    list_arg(
        pn,
        "--variant",
        ",".join(_NS_VARIANTS),
        "CLONE_NEWNS alone (newns), with CLONE_NEWUSER (userns), and CLONE_NEWNS with the"
        " scratch mounts rshared so the copies are peers of the host's (shared); default all",
        choices=_NS_VARIANTS,
    )
    pn.add_argument("--repeats", type=positive_int, default=5, help="children per (variant, N)")
    return pn


def c_args(a: argparse.Namespace) -> list[str]:
    return flags(a, "--mounts", "--variant", "--repeats")


def show(summary: dict[str, Any]) -> None:
    print(
        f"{'variant':<8}{'mounts':>7}{'copied':>8}{'unshare_p50_us':>16}{'unshare_min_us':>16}"
        f"{'rslave_p50_us':>15}{'detach_p50_us':>15}{'exit_p50_us':>13}"
    )
    for c in summary["configs"]:
        # the teardown of the copied mounts: the scratch subtree (newns) or, where that is
        # locked (userns), the old root with everything under it
        detach = c["umount_scratch_p50_ns"] or c["umount_oldroot_p50_ns"]
        print(
            f"{c['variant']:<8}{c['mounts']:>7}{c['copied_mounts']:>8}"
            f"{c['unshare_p50_ns'] / NS_PER_US:>16.1f}{c['unshare_min_ns'] / NS_PER_US:>16.1f}"
            f"{(c['rslave_p50_ns'] or 0) / NS_PER_US:>15.1f}"
            f"{detach / NS_PER_US:>15.1f}{c['exit_p50_ns'] / NS_PER_US:>13.1f}"
        )
