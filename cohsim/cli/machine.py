"""`cohsim machines`, `show`, `c2c`: the machine model (level 1) on the command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cohsim import provenance
from cohsim.cli.outputs import check_plot
from cohsim.errors import CohsimError
from cohsim.machine.c2c import compare, detect_home, fit
from cohsim.machine.catalog import Catalog, machine_to_toml, summary_row
from cohsim.machine.matrix import home_from_text, home_to_text, read_matrix
from cohsim.machine.model import Machine
from cohsim.machine.parts import CACHE_KEYS

#: What `cohsim machines` prints of each catalog.summary_row (--json gives all of it).
TABLE_COLUMNS = (
    "name",
    "vendor",
    "uarch",
    "interconnect",
    "sockets",
    "numa_nodes",
    "cores",
    "threads_per_core",
    "vcpus",
    "llc_domains",
)


def _table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
    lines += [
        "  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths, strict=True)) for r in rows
    ]
    return "\n".join(line.rstrip() for line in lines)


def _machines(args: argparse.Namespace) -> int:
    rows = [summary_row(m) for m in Catalog().machines()]
    if args.json:
        print(
            provenance.dumps({"schema": 1, "machines": rows, "provenance": provenance.stamp()}),
            end="",
        )
    else:
        print(_table(rows, list(TABLE_COLUMNS)))
    return 0


def _show_doc(m: Machine) -> dict[str, Any]:
    doc = summary_row(m)
    doc.update(
        {
            "cores_per_socket": m.topology.cores_per_socket,
            "llc_domain_cores": m.topology.llc_domain_cores,
            "pause_cycles": m.microarch.pause_cycles,
            "pause_ns": round(m.microarch.pause_ns, 3),
            "freq_ghz": m.microarch.freq_ghz,
            "caches": {k: getattr(m.microarch, k) for k in CACHE_KEYS}
            if m.microarch.caches_known
            else None,
            "coherence_ns": m.coherence.values(),
            "class_latency_ns": {c.label: round(v, 3) for c, v in m.class_latency_ns(0).items()},
            "graph": {
                "nodes": m.graph.number_of_nodes(),
                "edges": m.graph.number_of_edges(),
                "edge_weights_ns": {k: round(v, 4) for k, v in m.edge_weights_ns.items()},
            },
            "sources": m.sources,
        }
    )
    return doc


def _show(args: argparse.Namespace) -> int:
    m = Catalog().get(args.instance)
    check_plot(args.plot)
    if args.plot:
        from cohsim.plots.machine import topology_figure
        from cohsim.plots.save import save_figure

        save_figure(topology_figure(m), args.plot)
    if args.json:
        print(
            provenance.dumps(
                {"schema": 1, "machine": _show_doc(m), "provenance": provenance.stamp()}
            ),
            end="",
        )
        return 0
    d = _show_doc(m)
    print(f"{m.name} ({m.kind}): {m.cpu_model}, {m.microarch.uarch}")
    print(
        f"  {d['interconnect']}: {d['sockets']} socket(s), {d['numa_nodes']} NUMA node(s), "
        f"{d['llc_domains']} LLC domain(s) of {d['llc_domain_cores']} cores, "
        f"{d['cores']} cores x {d['threads_per_core']} threads = {d['vcpus']} CPUs"
    )
    print(
        f"  PAUSE {m.microarch.pause_cycles:g} cycles at {m.microarch.freq_ghz:g} GHz = "
        f"{m.microarch.pause_ns:.1f} ns"
    )
    micro = m.microarch
    if micro.caches_known:  # what the walks of the kernel's mount lists cost here
        print(
            f"  L2 {micro.l2_kib:g} KiB, a load {micro.l2_load_ns:g} ns; "
            f"a last-level cache load {micro.llc_load_ns:g} ns"
        )
    for cls, v in d["class_latency_ns"].items():
        print(f"  {cls:>13s}: {v:7.1f} ns")
    print("  sources:")
    for key, text in m.sources.items():
        print(f"    {key}: {text}")
    if args.plot:
        print(f"  topology picture: {args.plot}")
    return 0


def _c2c(args: argparse.Namespace) -> int:
    m = Catalog().get(args.instance)
    if args.fit and not args.vs:
        raise CohsimError("--fit needs a measured matrix: add --vs MATRIX.csv")
    check_plot(args.plot)
    measured = read_matrix(args.vs) if args.vs else None
    home: int | None
    if args.home == "auto":
        home = detect_home(m, measured, args.vs) if measured is not None else None
    else:
        home = home_from_text(args.home, "--home")
    if args.fit and measured is not None:
        m = fit(m, measured, home, args.vs)
    doc: dict[str, Any] = {
        "schema": 1,
        "machine": m.name,
        "home": home_to_text(home),
        "class_latency_ns": {c.label: round(v, 3) for c, v in m.class_latency_ns(home).items()},
    }
    comparison = None
    if measured is not None:
        comparison = compare(m, measured, home, args.vs)
        doc.update(comparison.to_dict())
        doc["machine"] = m.name
    if args.fit:
        doc["fitted_coherence_ns"] = m.coherence.values()
        doc["fitted_toml"] = machine_to_toml(m)
    doc["provenance"] = provenance.stamp(inputs=[args.vs] if args.vs else [])
    if args.plot:
        from cohsim.plots.machine import c2c_figure
        from cohsim.plots.save import save_figure

        save_figure(
            c2c_figure(
                m.latency_matrix(home), measured, m.name, Path(args.vs).name if args.vs else ""
            ),
            args.plot,
        )
    if args.json:
        print(provenance.dumps(doc), end="")
        return 0
    print(f"{m.name}: line homed on {home_to_text(home)}")
    if comparison is None:
        for cls, v in doc["class_latency_ns"].items():
            print(f"  {cls:>13s}: {v:7.1f} ns")
    else:
        print(f"  {'class':>13s}  {'pairs':>6s}  {'model ns':>9s}  {'measured ns':>11s}  error")
        for c in comparison.classes:
            print(
                f"  {c.pair_class:>13s}  {c.pairs:6d}  {c.model_ns:9.1f}  "
                f"{c.measured_median_ns:11.1f}  {c.pct_error:+6.1f}%"
            )
        print(
            f"  per-pair median |error|: {comparison.median_abs_pct_error:.1f}% over "
            f"{comparison.cpus} CPUs"
        )
    if args.fit:
        print("  fitted [coherence]:")
        for key, v in m.coherence.values().items():
            print(f"    {key} = {v}")
    if args.plot:
        print(f"  heat maps: {args.plot}")
    return 0


def _home(text: str) -> str:
    """auto, local or socketN (whether the machine has that socket is its to say)."""
    if text != "auto":
        try:
            home_from_text(text, "--home")
        except CohsimError as exc:
            raise argparse.ArgumentTypeError(exc.what) from None
    return text


def register(
    sub: argparse._SubParsersAction, add_json: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Add `machines`, `show` and `c2c` to the cohsim parser."""
    p = sub.add_parser("machines", help="list the instance catalog")
    add_json(p)
    p.set_defaults(func=_machines)

    p = sub.add_parser("show", help="one machine's topology, latencies and sources")
    p.add_argument("instance", help="catalog name (see `cohsim machines`) or a machine TOML file")
    p.add_argument("--plot", metavar="FILE", help="draw the topology (PNG, SVG or PDF)")
    add_json(p)
    p.set_defaults(func=_show)

    p = sub.add_parser(
        "c2c", help="modelled core-to-core latency; compare with or fit to a measured matrix"
    )
    p.add_argument("instance", help="catalog name or a machine TOML file")
    p.add_argument("--vs", metavar="MATRIX.csv", help="a measured lower-triangle matrix (ns)")
    p.add_argument(
        "--fit",
        action="store_true",
        help="derive the per-class latencies from the matrix (needs --vs)",
    )
    p.add_argument(
        "--home",
        type=_home,
        default="auto",
        help="socket homing the benchmark's line: auto (detect), local, socket0, ...",
    )
    p.add_argument("--plot", metavar="FILE", help="model and measured heat maps side by side")
    add_json(p)
    p.set_defaults(func=_c2c)
