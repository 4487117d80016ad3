"""`cohsim bench prop`: prop_bench's flags, argv and summary (propagation, mountinfo reads)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import nonneg_int, positive_int
from cohsim.cli.benches.flags import allowed_cpus, flags, list_arg
from cohsim.units import NS_PER_US


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench prop`: prop_bench's flags."""
    pq = kinds.add_parser(
        "prop",
        help="a host mount propagated into K slave namespaces; mountinfo reads vs N (root)",
        description="prop_bench: a bind mount + umount under a shared tmpfs with K live slave"
        " namespaces, and one full read of /proc/self/mountinfo at N mounts of one peer group,"
        " in its own namespace and in a slave one (needs root).",
    )
    list_arg(
        pq,
        "--slaves",
        "0,10,50,100,200",
        "live slave namespaces K, comma-separated (default 0,10,50,100,200)",
        low=0,
    )
    list_arg(
        pq,
        "--mounts",
        "0,1000,5000",
        "extra mounts N for the reads, comma-separated (default 0,1000,5000)",
        low=0,
    )
    pq.add_argument(
        "--peers", type=nonneg_int, default=0, help="peer namespaces alive during the reads"
    )
    list_arg(
        pq,
        "--ring",
        None,
        "extra peers R of the shared scratch, comma-separated: time mounts and unmounts under"
        " it with its peer group at R + 1 mounts and no slave namespace (default: none)",
        low=0,
    )
    pq.add_argument(
        "--ring-apart",
        action="store_true",
        help="with --ring: make the R peers under a private tmpfs, not children of the scratch",
    )
    pq.add_argument(
        "--ring-cpus",
        type=allowed_cpus("--ring-cpus"),
        metavar="LIST",
        help="with --ring: make the ring's binds in turn by threads pinned one to each of these"
        " CPUs (bind i on the (i mod n)-th), so that neighbours on the ring come from different"
        " CPUs' slabs; the timed calls stay on the main thread (default: the main thread makes"
        " them all)",
    )
    pq.add_argument("--repeats", type=positive_int, default=5, help="timed calls per K, N and R")
    pq.set_defaults(prop_parser=pq)
    return pq


def c_args(a: argparse.Namespace) -> list[str]:
    if a.ring_cpus is not None and a.ring is None:
        a.prop_parser.error("--ring-cpus needs --ring")
    out = flags(a, "--slaves", "--mounts", "--peers", "--repeats")
    out += flags(a, "--ring") if a.ring is not None else []
    out += ["--ring-apart"] if a.ring_apart else []
    return out + (flags(a, "--ring-cpus") if a.ring_cpus is not None else [])


def show(summary: dict[str, Any]) -> None:
    print(f"{'slaves':>6}{'seen':>6}{'mount_p50_us':>14}{'mount_min_us':>14}{'umount_p50_us':>15}")
    for c in summary["slaves"]:
        print(
            f"{c['slaves']:>6}{c['seen_in_slave']:>6}{c['bind_mount_p50_ns'] / NS_PER_US:>14.1f}"
            f"{c['bind_mount_min_ns'] / NS_PER_US:>14.1f}{c['umount_p50_ns'] / NS_PER_US:>15.1f}"
        )
    print(f"{'mounts':>7}{'peers':>6}{'ns':>7}{'lines':>7}{'reads':>7}{'read_p50_us':>13}")
    for c in summary["reads"]:
        print(
            f"{c['mounts']:>7}{c['peers']:>6}{c['ns']:>7}{c['lines']:>7}{c['reads']:>7}"
            f"{c['read_p50_ns'] / NS_PER_US:>13.1f}"
        )
    cols = ("ring_bind", "ring_umount", "ring_detach", "ring_move_mount")
    if summary["ring"]:
        print(
            f"{'ring':>6}{'group':>7}{'children':>9}{'cpus':>5}"
            + "".join(f"{c[5:]:>13}_p50_us" for c in cols)
        )
    for c in summary["ring"]:
        cells = "".join(f"{(c[f'{op}_p50_ns'] or 0) / NS_PER_US:>20.1f}" for op in cols)
        cpus = "-" if c["bind_cpus"] is None else c["bind_cpus"]
        print(f"{c['ring']:>6}{c['group_mounts']:>7}{c['children']:>9}{cpus:>5}{cells}")
