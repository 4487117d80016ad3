"""`cohsim bench pause|mount|wake|ns|prop|wake-idle`: run the real benchmarks on this host
(registered by cohsim.cli.app); `wake-idle` reads scheduler traces instead (cohsim.bench.wakeidle).

The flags mirror the C programs' own (calibration/bench/README.md); this module only checks
them, hands them to `cohsim.bench.runner.run_bench` and prints a summary.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from cohsim import provenance
from cohsim.bench import runner as bench
from cohsim.cli.args import nonneg_int, positive_int
from cohsim.cli.outputs import check_dir
from cohsim.units import NS_PER_US

_PLACEMENTS = ("compact", "scatter", "one-socket")
_LOCKS = ("ttas", "ticket")
_STRATEGIES = ("per-layer", "common-parent", "lowerdir-plus")
_NS_VARIANTS = ("newns", "userns", "shared")


def _choice_list(allowed: tuple[str, ...], flag: str) -> Callable[[str], str]:
    def check(text: str) -> str:
        bad = [v for v in text.split(",") if v not in allowed]
        if bad or not text:
            raise argparse.ArgumentTypeError(
                f"{flag}: {','.join(bad) or text!r} not in {', '.join(allowed)}"
            )
        return text

    return check


def _int_list(flag: str, low: int = 1) -> Callable[[str], str]:
    def check(text: str) -> str:
        try:
            bench.parse_int_list(text, flag, low)
        except Exception as exc:  # CohsimError -> argparse usage error (exit 2)
            raise argparse.ArgumentTypeError(str(exc)) from exc
        return text

    return check


def _list_arg(
    p: argparse.ArgumentParser,
    flag: str,
    default: str | None,
    help: str,
    *,
    choices: tuple[str, ...] = (),
    low: int = 1,
) -> None:
    """A comma-separated list flag: of `choices`, or of integers >= `low`; a malformed one is
    argparse's usage error (exit 2) naming `flag`, before any benchmark is built."""
    check = _choice_list(choices, flag) if choices else _int_list(flag, low)
    p.add_argument(flag, default=default, type=check, help=help)


def _cpu_pair(text: str) -> str:
    """``"A,B"``: two different CPU numbers (whether this process may use them, wake_bench says)."""
    try:
        cpus = [int(v) for v in text.split(",")]
    except ValueError:
        cpus = []
    if len(cpus) != 2 or cpus[0] == cpus[1] or min(cpus) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not two different CPU numbers A,B")
    return text


def _flags(a: argparse.Namespace, *flags: str) -> list[str]:
    """``["--flag", "value", ...]`` for the C program, each value read from the flag's dest."""
    return [w for f in flags for w in (f, str(getattr(a, f[2:].replace("-", "_"))))]


def _pause_args(a: argparse.Namespace) -> list[str]:
    out = _flags(a, "--threads", "--lock", "--cs-ns", "--think-ns")
    out += _flags(a, "--duration-ms", "--warmup-ms", "--repeats")
    return out + _flags(a, "--cpus" if a.cpus else "--placement")


def _mount_args(a: argparse.Namespace) -> list[str]:
    out = _flags(a, "--strategy", "--workers", "--layers", "--containers")
    out += _flags(a, "--sequences-per-container", "--repeats", "--mode", "--mountinfo-every")
    out += ["--shared-layers"] if a.shared_layers else []
    out += ["--no-idmap"] if a.no_idmap else []
    return out


def _wake_args(a: argparse.Namespace) -> list[str]:
    return _flags(a, "--samples", "--repeats", *(["--cpus"] if a.cpus else []))


def _ns_args(a: argparse.Namespace) -> list[str]:
    return _flags(a, "--mounts", "--variant", "--repeats")


def _prop_args(a: argparse.Namespace) -> list[str]:
    out = _flags(a, "--slaves", "--mounts", "--peers", "--repeats")
    out += _flags(a, "--ring") if a.ring is not None else []
    return out + (["--ring-apart"] if a.ring_apart else [])


_ARGS = {
    "pause": _pause_args,
    "mount": _mount_args,
    "wake": _wake_args,
    "ns": _ns_args,
    "prop": _prop_args,
}


def _print_ns(summary: dict[str, Any]) -> None:
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


def _print_prop(summary: dict[str, Any]) -> None:
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
            f"{'ring':>6}{'group':>7}{'children':>9}" + "".join(f"{c[5:]:>13}_p50_us" for c in cols)
        )
    for c in summary["ring"]:
        cells = "".join(f"{(c[f'{op}_p50_ns'] or 0) / NS_PER_US:>20.1f}" for op in cols)
        print(f"{c['ring']:>6}{c['group_mounts']:>7}{c['children']:>9}{cells}")


def _print_human(kind: str, summary: dict[str, Any], run: bench.BenchRun) -> None:
    if kind == "wake":
        reps = summary["repeats"]
        print(
            f"wake-up onto an idle CPU: wake_ns {summary['wake_ns']:.0f} ns"
            f" (median of {len(reps)} repeats; (cross p50 - same p50) / 2)"
        )
        print(
            f"futex round trip p50: same CPU {summary['same_p50_ns']:.0f} ns,"
            f" across CPUs {summary['cross_p50_ns']:.0f} ns"
        )
        print(f"{'repeat':>6}{'same_p50_ns':>13}{'cross_p50_ns':>14}{'wake_ns':>10}")
        for r in reps:
            print(
                f"{r['repeat']:>6}{r['same_p50_ns']:>13.0f}{r['cross_p50_ns']:>14.0f}"
                f"{r['wake_ns']:>10.0f}"
            )
    elif kind == "ns":
        _print_ns(summary)
    elif kind == "prop":
        _print_prop(summary)
    elif kind == "pause":
        print(f"PAUSE latency: {summary['pause_ns']:.1f} ns")
        print(f"{'lock':<8}{'threads':>8}{'p50_ns':>10}{'p99_ns':>10}{'acq/s':>14}  placement")
        for c in summary["configs"]:
            print(
                f"{c['lock']:<8}{c['threads']:>8}{c['p50_ns']:>10.1f}{c['p99_ns']:>10.1f}"
                f"{c['acquisitions_per_s']:>14.0f}  {c['placement']}"
            )
    else:
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
    wrote = [run.csv_path, run.sidecar_path] + ([run.strace_path] if run.strace_path else [])
    print("wrote " + ", ".join(str(p) for p in wrote) + f" ({run.sidecar['wall_s']:.1f} s)")


def _run(args: argparse.Namespace) -> int:
    kind = args.bench
    c_args = _ARGS[kind](args)
    check_dir(args.out)
    run = bench.run_bench(
        kind,
        c_args,
        args.out,
        strace=getattr(args, "strace", None),
        progress=not args.no_progress,
        command_line=["cohsim", *sys.argv[1:]],
    )
    summary = bench.summarize(kind, run.rows)
    if args.json:
        doc = {
            "schema": bench.SCHEMA,
            "bench": kind,
            "summary": summary,
            "files": {
                "csv": str(run.csv_path),
                "sidecar": str(run.sidecar_path),
                "strace": str(run.strace_path) if run.strace_path else None,
            },
            "host": run.sidecar["host"],
            "wall_s": run.sidecar["wall_s"],
            "provenance": run.sidecar["provenance"],
        }
        print(provenance.dumps(doc), end="")
    else:
        _print_human(kind, summary, run)
    return 0


def _wake_idle(args: argparse.Namespace) -> int:
    from cohsim.bench import wakeidle

    check_dir(args.out)
    table, csv_path = wakeidle.write_table(args.traces, args.out, ["cohsim", *sys.argv[1:]])
    bins = [
        {
            "idle_from_ns": lo,
            "samples": table.samples[b],
            "p50_ns": round(table.draw(lo, 0.5)),
            "p90_ns": round(table.draw(lo, 0.9)),
            "mean_ns": round(table.mean(lo)),
        }
        for b, lo in enumerate(table.edges_ns)
    ]
    if args.json:
        doc = {"schema": bench.SCHEMA, "bench": "wake-idle", "bins": bins, "csv": str(csv_path)}
        print(provenance.dumps(doc), end="")
        return 0
    print(f"{'idle from':>10}{'samples':>9}{'p50_ns':>9}{'p90_ns':>9}{'mean_ns':>10}")
    for b in bins:
        print(
            f"{b['idle_from_ns'] / NS_PER_US:>8.0f}us{b['samples']:>9}{b['p50_ns']:>9}"
            f"{b['p90_ns']:>9}{b['mean_ns']:>10}"
        )
    print(f"wrote {csv_path} and its sidecar")
    return 0


def _add_pause(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench pause`: pause_bench's flags."""
    pp = kinds.add_parser(
        "pause",
        help="lock hand-off latency of a PAUSE-spinning lock",
        description="pause_bench: pinned threads contend for one spinlock.",
    )
    _list_arg(pp, "--threads", "1,2", "comma-separated thread counts (default 1,2)")
    pp.add_argument(
        "--placement",
        default="compact",
        choices=_PLACEMENTS,
        help="which CPUs the threads are pinned to (default compact)",
    )
    _list_arg(pp, "--cpus", None, "explicit CPU list, overrides --placement", low=0)
    _list_arg(
        pp,
        "--lock",
        "ttas,ticket",
        "lock kinds, comma-separated (default ttas,ticket)",
        choices=_LOCKS,
    )
    pp.add_argument(
        "--cs-ns", type=nonneg_int, default=100, help="critical section length (default 100)"
    )
    pp.add_argument(
        "--think-ns", type=nonneg_int, default=0, help="think time between acquisitions"
    )
    pp.add_argument("--duration-ms", type=positive_int, default=1000, help="measured time per run")
    pp.add_argument(
        "--warmup-ms", type=nonneg_int, default=100, help="unmeasured time before each run"
    )
    pp.add_argument(
        "--repeats", type=positive_int, default=3, help="repeats of every configuration"
    )
    return pp


def _add_mount(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench mount`: mount_bench's flags."""
    pm = kinds.add_parser(
        "mount",
        help="containerd's idmapped-rootfs mount sequences (root)",
        description="mount_bench: K workers run containerd's mount sequences in "
        "a private mount namespace (needs root).",
    )
    _list_arg(
        pm,
        "--strategy",
        ",".join(_STRATEGIES),
        "strategies, comma-separated (default all three)",
        choices=_STRATEGIES,
    )
    _list_arg(pm, "--workers", "1", "concurrent workers, comma-separated (default 1)")
    _list_arg(pm, "--layers", "10", "image layers, comma-separated (default 10)")
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
        "--strace",
        metavar="FILE",
        default=None,
        help="also rerun under strace -f -tt -T and keep the log in FILE",
    )
    return pm


def _add_wake(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench wake`: wake_bench's flags."""
    pw = kinds.add_parser(
        "wake",
        help="wake-up latency of a task that slept, onto an idle CPU",
        description="wake_bench: two threads ping-pong through a futex on one CPU and across"
        " two; wake_ns = (cross-CPU p50 - same-CPU p50) / 2 per repeat.",
    )
    pw.add_argument(
        "--cpus",
        default=None,
        type=_cpu_pair,
        metavar="A,B",
        help="the two CPUs (default: the first two this process may run on)",
    )
    pw.add_argument(
        "--samples",
        type=positive_int,
        default=20000,
        help="timed round trips per placement (default 20000)",
    )
    pw.add_argument("--repeats", type=positive_int, default=5, help="repeats (default 5)")
    return pw


def _add_ns(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench ns`: ns_bench's flags."""
    pn = kinds.add_parser(
        "ns",
        help="a container's mount-namespace copy and teardown vs the mount-table size (root)",
        description="ns_bench: with N extra bind mounts, a child unshares a mount namespace"
        " (copy of the whole table), makes it rslave as runc does, detaches the copied mounts"
        " and exits (needs root).",
    )
    _list_arg(
        pn,
        "--mounts",
        "0,1000,5000",
        "extra mounts N, comma-separated (default 0,1000,5000)",
        low=0,
    )
    _list_arg(
        pn,
        "--variant",
        ",".join(_NS_VARIANTS),
        "CLONE_NEWNS alone (newns), with CLONE_NEWUSER (userns), and CLONE_NEWNS with the"
        " scratch mounts rshared so the copies are peers of the host's (shared); default all",
        choices=_NS_VARIANTS,
    )
    pn.add_argument("--repeats", type=positive_int, default=5, help="children per (variant, N)")
    return pn


def _add_prop(kinds: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`bench prop`: prop_bench's flags."""
    pq = kinds.add_parser(
        "prop",
        help="a host mount propagated into K slave namespaces; mountinfo reads vs N (root)",
        description="prop_bench: a bind mount + umount under a shared tmpfs with K live slave"
        " namespaces, and one full read of /proc/self/mountinfo at N mounts of one peer group,"
        " in its own namespace and in a slave one (needs root).",
    )
    _list_arg(
        pq,
        "--slaves",
        "0,10,50,100,200",
        "live slave namespaces K, comma-separated (default 0,10,50,100,200)",
        low=0,
    )
    _list_arg(
        pq,
        "--mounts",
        "0,1000,5000",
        "extra mounts N for the reads, comma-separated (default 0,1000,5000)",
        low=0,
    )
    pq.add_argument(
        "--peers", type=nonneg_int, default=0, help="peer namespaces alive during the reads"
    )
    _list_arg(
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
    pq.add_argument("--repeats", type=positive_int, default=5, help="timed calls per K, N and R")
    return pq


def _add_wake_idle(
    kinds: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """`bench wake-idle`: scheduler traces in, a wake_bench table out."""
    pi = kinds.add_parser(
        "wake-idle",
        help="wake-up latency by how long the CPU was idle, from scheduler traces",
        description="Read ftrace dumps (plain, gzip or xz) recorded with sched_switch, sched_waking"
        " and sched_wakeup on (calibration/bench/wake_trace.sh records them while mount_bench"
        " runs) and write the wake-up latency quantiles per idle-duration bin as wake_bench"
        " rows (lock sched-trace).",
    )
    pi.add_argument("traces", nargs="+", metavar="TRACE", help="ftrace text dumps")
    pi.add_argument("--out", required=True, metavar="DIR", help="directory for CSV and sidecar")
    add_json(pi)
    pi.set_defaults(func=_wake_idle)
    return pi


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add this group's subcommands to the cohsim parser."""
    p = sub.add_parser(
        "bench",
        help="run the real benchmarks (pause_bench, mount_bench, wake_bench, ns_bench, prop_bench)",
        description="Build the C benchmarks with the system compiler ($CC, default cc),"
        " run them and write <bench>_bench.csv and a JSON sidecar of host facts.",
    )
    kinds = p.add_subparsers(dest="bench", required=True, metavar="BENCH")

    pp, pm, pw, pn = _add_pause(kinds), _add_mount(kinds), _add_wake(kinds), _add_ns(kinds)
    pq = _add_prop(kinds)
    _add_wake_idle(kinds, add_json)

    for q in (pp, pm, pw, pn, pq):
        q.add_argument("--out", required=True, metavar="DIR", help="directory for CSV and sidecar")
        q.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
        add_json(q)
        q.set_defaults(func=_run)
