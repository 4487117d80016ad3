"""`cohsim bench mount`: mount_bench's flags, argv and summary (containerd's mount sequences)."""

from __future__ import annotations

import argparse
from typing import Any

from cohsim.cli.args import nonneg_int, positive_int
from cohsim.cli.benches.flags import flags, list_arg
from cohsim.units import NS_PER_US
from cohsim.workload.synth import STRATEGIES


def add(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench mount`: mount_bench's flags."""
    pm = kinds.add_parser(
        "mount",
        help="containerd's idmapped-rootfs mount sequences (root)",
        description="mount_bench: K workers run containerd's mount sequences in "
        "a private mount namespace (needs root).",
    )
    list_arg(
        pm,
        "--strategy",
        ",".join(STRATEGIES),
        "strategies, comma-separated (default all three)",
        choices=STRATEGIES,
    )
    list_arg(pm, "--workers", "1", "concurrent workers, comma-separated (default 1)")
    list_arg(pm, "--layers", "10", "image layers, comma-separated (default 10)")
    pm.add_argument(
        "--containers", type=positive_int, default=5, help="containers per worker per run"
    )
    pm.add_argument(
        "--sequences-per-container",
        type=positive_int,
        default=2,
        help="rootfs sequences per container (default 2: shim + containerd)",
    )
    pm.add_argument(
        "--repeats", type=positive_int, default=1, help="repeats of every configuration"
    )
    pm.add_argument(
        "--mode",
        default="processes",
        choices=("processes", "threads"),
        help="workers as processes (like shims, default) or threads",
    )
    pm.add_argument(
        "--mountinfo-every",
        type=nonneg_int,
        default=1,
        help="count the mount table every Nth sequence (0: never)",
    )
    pm.add_argument(
        "--shared-layers",
        action="store_true",
        help="all workers use the same layer directories (one image)",
    )
    pm.add_argument(
        "--no-idmap", action="store_true", help="plain bind mounts, no MOUNT_ATTR_IDMAP"
    )
    pm.add_argument(
        "--cpu-time",
        action="store_true",
        help="also each call's CPU time (the worker's thread CPU clock around it): "
        "cpu_mean_ns and cpu_share per call kind, how much of a wait was spent spinning",
    )
    pm.add_argument(
        "--layer-depth",
        type=int,
        default=3,
        metavar="N",
        help="ancestors of each layer's directory in the scratch file system, its root "
        "included (default 3, at least 3): overlayfs looks each up in the inode hash",
    )
    pm.add_argument(
        "--strace",
        metavar="FILE",
        default=None,
        help="also rerun under strace -f -tt -T and keep the log in FILE",
    )
    return pm


def c_args(a: argparse.Namespace) -> list[str]:
    out = flags(a, "--strategy", "--workers", "--layers", "--containers")
    out += flags(a, "--sequences-per-container", "--repeats", "--mode", "--mountinfo-every")
    out += ["--shared-layers"] if a.shared_layers else []
    out += ["--no-idmap"] if a.no_idmap else []
    out += ["--cpu-time"] if a.cpu_time else []
    out += [f"--layer-depth={a.layer_depth}"] if a.layer_depth != 3 else []
    return out


def show(summary: dict[str, Any]) -> None:
    print(
        f"{'strategy':<15}{'workers':>8}{'layers':>7}{'seq_p50_us':>12}{'ct/s':>9}"
        f"{'mount_ops/s':>13}{'peak_mounts':>13}"
    )
    for c in summary["configs"]:
        print(
            f"{c['strategy']:<15}{c['workers']:>8}{c['layers']:>7}"
            f"{c['sequence_p50_ns'] / NS_PER_US:>12.1f}{c['containers_per_s']:>9.0f}"
            f"{c['mount_ops_per_s']:>13.0f}{c['mount_table_peak']:>13.0f}"
        )
