"""Regenerate models/instances/*.toml, models/servers/*.toml and the matrix index from the facts
in calibration/data/ (instances.csv, the moto subset, pause_latency.csv, cache_latency.csv, the
c2c matrices).

The coherence latencies of measured machines are fitted with cohsim.machine.c2c (the same code as
`cohsim c2c NAME --vs MATRIX --home H --fit`); proxies copy the fitted values of the machine that
calibration/data/reference/c2c_proxy_map.csv names. Run from the repository root:

    python tools/gen_catalog.py
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

from cohsim.machine.c2c import detect_home, fit
from cohsim.machine.catalog import machine_to_toml
from cohsim.machine.matrix import home_to_text, read_matrix
from cohsim.machine.model import Coherence, Machine, Microarch, Topology

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "calibration" / "data"
C2C = DATA / "core-to-core-latency"
INST = "calibration/data/reference/instances.csv"
MOTO = "calibration/data/aws-instance-types/moto_instance_types_subset.json"
PAUSE = "calibration/data/reference/pause_latency.csv"
PROXY = "calibration/data/reference/c2c_proxy_map.csv"
CACHE = "calibration/data/reference/cache_latency.csv"

#: the cache_latency.csv row of each family, and why where it is another family's
CACHE_ROW = {
    "cascadelake": ("Intel Skylake-SP / Cascade Lake-SP", ""),
    "icelake": ("Intel Ice Lake-SP", ""),
    "sapphirerapids": ("Intel Sapphire Rapids", ""),
    "graniterapids": ("Intel Granite Rapids (Xeon 6 P-core)", ""),
    "milan": ("AMD Zen 3 (Milan)", ""),
    "genoa": ("AMD Zen 4 (Genoa)", ""),
    "turin": (
        "AMD Zen 4 (Genoa)",
        "assumption: the row 'AMD Zen 5 (Turin)' has sizes only; Zen 4's figures stand in (the "
        "same 1 MiB L2 and 32 MiB L3 a CCD). ",
    ),
    "graviton2": ("AWS Graviton2 (Neoverse N1)", ""),
    "graviton3": (
        "AWS Graviton2 (Neoverse N1)",
        "assumption: the row 'AWS Graviton3 (Neoverse V1)' has sizes only; Graviton2's figures "
        "stand in (the same 1 MiB L2 and 32 MiB shared SLC). ",
    ),
    "graviton4": ("AWS Graviton4 (Neoverse V2)", ""),
}
#: an L2 load (ns) where the row gives no cycles: the figure its note gives (Intel's TMA L2
#: hit cost; Arm's pointer chase on c8g.16xlarge)
L2_NS_NOTED = {
    "Intel Ice Lake-SP": (4.0, "its note's Intel TMA L2 hit cost, 4 ns"),
    "Intel Sapphire Rapids": (4.4, "its note's Intel TMA L2 hit cost, 4.4 ns"),
    "Intel Granite Rapids (Xeon 6 P-core)": (4.4, "its note's Intel TMA L2 hit cost, 4.4 ns"),
    "AWS Graviton4 (Neoverse V2)": (4.0, "its note's L2 row of Arm's pointer chase, 4.0 ns"),
}


def cache_facts(
    fam: str, ghz: float, rows: dict[str, dict[str, str]]
) -> tuple[dict[str, float], str] | None:
    """The L2 size, an L2 load and an LLC load (ns at `ghz`) of family `fam`, with their
    source; None where cache_latency.csv has nothing for it. Cycles run at the core's clock
    (AMD's L3 too); Intel's mesh L3 and Arm's SLC are taken in ns as the row gives them."""
    if fam not in CACHE_ROW:
        return None
    name, why = CACHE_ROW[fam]
    r = rows[name]
    if r["l2_cycles"]:
        l2 = float(r["l2_cycles"]) / ghz
        l2_src = f"l2_cycles {r['l2_cycles']} / freq_ghz"
    else:
        l2, noted = L2_NS_NOTED[name]
        l2_src = noted
    if r["llc_ns"]:
        llc = float(r["llc_ns"])
        llc_src = f"llc_ns {r['llc_ns']}"
    else:
        llc = float(r["llc_cycles"]) / ghz
        llc_src = f"llc_cycles {r['llc_cycles']} / freq_ghz"
    src = (
        f"{why}{CACHE} row '{name}': l2_kib {r['l2_kib']}; l2_load_ns = {l2_src}; "
        f"llc_load_ns = {llc_src} (its note and source say where each comes from)"
    )
    return {
        "l2_kib": float(r["l2_kib"]),
        "l2_load_ns": round(l2, 2),
        "llc_load_ns": round(llc, 2),
    }, src


def _as_skylake(unknown: str, note: str = "") -> tuple[float, str]:
    """An Intel core after Skylake that pause_latency.csv has no figure for: Skylake's cycles."""
    return 140.0, f"assumption: {unknown}; Intel's manual gives ~140 cycles 'from Skylake on'{note}"


def _as_zen4(zen: str) -> tuple[float, str]:
    """An AMD core that pause_latency.csv calls unknown: Zen 4's documented cycles."""
    return 64.0, (
        f"assumption: {PAUSE} says {zen} is unknown; taken equal to Zen 4's "
        "documented 64 cycles (row 'AMD Zen 4')"
    )


NEOVERSE_YIELD = (1.0, f"assumption: {PAUSE} row 'Arm Neoverse': YIELD latency not read; 1 cycle")

PAUSE_BY_FAMILY = {  # family -> (cycles, source)
    "broadwell": (10.0, f"{PAUSE} row 'Intel pre-Skylake (Haswell/Broadwell)': ~10 cycles"),
    "cascadelake": (
        140.0,
        f"{PAUSE} row 'Intel Skylake and later (incl. Skylake-SP/Cascade "
        "Lake-SP)': up to ~140 cycles",
    ),
    "icelake": _as_skylake(
        f"{PAUSE} says Ice Lake-SP is unknown", " (row 'Intel Skylake and later')"
    ),
    "sapphirerapids": _as_skylake(f"{PAUSE} says Sapphire Rapids is unknown"),
    "graniterapids": _as_skylake(f"no data for Granite Rapids in {PAUSE}"),
    "rome": _as_zen4("Zen 2"),
    "milan": _as_zen4("Zen 3"),
    "genoa": (64.0, f"{PAUSE} row 'AMD Zen 4 (Ryzen 7950X)': 64 cycles"),
    "turin": (64.0, f"assumption: no data for Zen 5 in {PAUSE}; taken equal to Zen 4's 64 cycles"),
    "graviton2": (
        1.0,
        f"assumption: {PAUSE} row 'Arm Neoverse': no PAUSE, the kernel spins with "
        "YIELD whose latency was not read; taken as 1 cycle (a hint, no stall)",
    ),
    "graviton3": NEOVERSE_YIELD,
    "graviton4": NEOVERSE_YIELD,
}

UARCH_FAMILY = {
    "Skylake-SP or Cascade Lake-SP": "cascadelake",
    "Cascade Lake-SP": "cascadelake",
    "Ice Lake-SP": "icelake",
    "Sapphire Rapids (Golden Cove)": "sapphirerapids",
    "Granite Rapids (Xeon 6)": "graniterapids",
    "Zen 3 (Milan)": "milan",
    "Zen 4 (Genoa)": "genoa",
    "Zen 5 (Turin)": "turin",
    "Neoverse N1": "graviton2",
    "Neoverse V1": "graviton3",
    "Neoverse V2": "graviton4",
}

# The CPUs of the measured servers: model (its first word is the vendor) -> (uarch, family,
#   interconnect, cores/socket, llc cores, base clock GHz). Intel's base clocks are in the CPU
#   names of calibration/data/core-to-core-latency/README.md; AMD's are AMD's published ones.
SERVER_CPUS = {
    "Intel Xeon E5-2695 v4": ("Broadwell-EP", "broadwell", "mesh", 18, 18, 2.1),
    "Intel Xeon Gold 6242": ("Cascade Lake-SP", "cascadelake", "mesh", 16, 16, 2.8),
    "Intel Xeon Platinum 8358": ("Ice Lake-SP", "icelake", "mesh", 32, 32, 2.6),
    "Intel Xeon Platinum 8360Y": ("Ice Lake-SP", "icelake", "mesh", 36, 36, 2.4),
    "Intel Xeon Gold 6336Y": ("Ice Lake-SP", "icelake", "mesh", 24, 24, 2.4),
    "Intel Xeon w9-3475X": ("Sapphire Rapids (Golden Cove)", "sapphirerapids", "mesh", 36, 36, 2.2),
    "AMD EPYC 7742": ("Zen 2 (Rome)", "rome", "chiplet", 64, 4, 2.25),
    "AMD EPYC 7763": ("Zen 3 (Milan)", "milan", "chiplet", 64, 8, 2.45),
    "AMD EPYC 7773X": ("Zen 3 (Milan-X)", "milan", "chiplet", 64, 8, 2.2),
    "AMD EPYC 9454": ("Zen 4 (Genoa)", "genoa", "chiplet", 48, 6, 2.75),
    "AMD EPYC 9654": ("Zen 4 (Genoa)", "genoa", "chiplet", 96, 8, 2.4),
}

# Measured servers (not AWS): name -> (matrix, CPU model, sockets, threads/core); one CPU can
#   stand in several (socket counts, SMT off).
SERVERS = {
    "xeon-e5-2695v4-2s": ("xeon-e5-2695v4_broadwell_2s.csv", "Intel Xeon E5-2695 v4", 2, 2),
    "xeon-gold-6242-2s": ("xeon-gold-6242_cascadelake_2s.csv", "Intel Xeon Gold 6242", 2, 2),
    "xeon-gold-6242-1s": ("xeon-gold-6242_cascadelake_1s.csv", "Intel Xeon Gold 6242", 1, 2),
    "xeon-8358-2s-smtoff": ("xeon-8358_icelake_2s_smtoff.csv", "Intel Xeon Platinum 8358", 2, 1),
    "xeon-8360Y-2s": ("xeon-8360Y_icelake_2s_truncated128.csv", "Intel Xeon Platinum 8360Y", 2, 2),
    "xeon-gold-6336Y-2s": ("xeon-gold-6336Y_icelake_2s.csv", "Intel Xeon Gold 6336Y", 2, 2),
    "xeon-w9-3475X-1s": ("xeon-w9-3475X_sapphirerapids_1s.csv", "Intel Xeon w9-3475X", 1, 1),
    "epyc-7742-2s": ("epyc-7742_rome_2s.csv", "AMD EPYC 7742", 2, 2),
    "epyc-7763-2s": ("epyc-7763_milan_2s.csv", "AMD EPYC 7763", 2, 2),
    "epyc-7773X-1s": ("epyc-7773X_milanx_1s.csv", "AMD EPYC 7773X", 1, 2),
    "epyc-9454-2s": ("epyc-9454_genoa_2s.csv", "AMD EPYC 9454", 2, 2),
    "epyc-9654-2s-smtoff": ("epyc-9654_genoa_2s_smtoff.csv", "AMD EPYC 9654", 2, 1),
}

# AWS instances measured directly: instance -> matrix
AWS_MEASURED = {
    "c5.metal": "aws_c5.metal_xeon-8275CL_2s.csv",
    "c6i.metal": "aws_c6i.metal_xeon-8375C_2s.csv",
    "c6a.metal": "aws_c6a.metal_epyc-7R13_2s.csv",
    "c6gd.metal": "aws_c6gd.metal_graviton2.csv",
    "c7g.metal": "aws_c7g.16xlarge_graviton3.csv",
}

# Proxies for the rest: instance family -> (catalog machine whose fitted values are used, note)
PROXY_OF = {
    "cascadelake": (
        "c5.metal",
        "proxy row 'r5.metal / r5.24xlarge / m5.metal': same 24-core/"
        "socket Skylake/Cascade Lake-SP 2-socket mesh",
    ),
    "icelake": ("c6i.metal", "proxy row 'm6i.metal / c6i.metal': exact CPU, measured on c6i.metal"),
    "milan": ("c6a.metal", "proxy row 'm6a.metal / c6a.metal': exact CPU, measured on c6a.metal"),
    "sapphirerapids": (
        "xeon-w9-3475X-1s",
        "proxy row 'm7i.* / c7i.* / r7i.*': weak proxy, SPR workstation with 36 cores",
    ),
    "genoa": (
        "epyc-9654-2s-smtoff",
        "proxy row 'm7a.* / c7a.* / r7a.*': good proxy, Genoa 96-core SMT off",
    ),
    "graviton2": ("c6gd.metal", "proxy row 'm6g / c6g(d)': exact CPU"),
    "graviton3": ("c7g.metal", "proxy row 'm7g / c7g': exact CPU (c7g.16xlarge, virtualised)"),
    "turin": (
        "epyc-9654-2s-smtoff",
        "assumption: proxy row 'm8a.*' names no matrix; Zen 4 "
        "Genoa (same 8-core CCX, same IO-die design) stands in",
    ),
    "graniterapids": (
        "xeon-w9-3475X-1s",
        "assumption: proxy row 'm8i.*' names no matrix; the "
        "previous Intel mesh generation (SPR) stands in",
    ),
    "graviton4": (
        "c7g.metal",
        "assumption: proxy row 'm8g' names no matrix; Graviton3 (CMN-650) "
        "stands in for Graviton4 (CMN-700)",
    ),
}
# Values no proxy of the family has, with their assumption.
SMT_FALLBACK = (
    "c6i.metal",
    "assumption: no SMT pairs in the Sapphire Rapids proxy matrix; the "
    "Ice Lake c6i.metal SMT-sibling latency stands in (the line stays in "
    "the core's private caches)",
)
SOCKET_FALLBACK = (
    "c6i.metal",
    "assumption: no two-socket matrix of this CPU; the c6i.metal "
    "(Ice Lake, UPI) cross-socket latency stands in",
)


def placeholder(topo: Topology) -> Coherence:
    return Coherence(
        same_llc_ns=2.0,
        smt_ns=1.0 if topo.threads_per_core > 1 else None,
        cross_llc_ns=3.0 if topo.llc_domains_per_socket > 1 else None,
        cross_socket_ns=4.0 if topo.sockets > 1 else None,
    )


def with_caches(m: Machine, rows: dict[str, dict[str, str]]) -> Machine:
    """`m` with its family's cache figures and their source, where there are any."""
    facts = cache_facts(m.family, m.microarch.freq_ghz, rows)
    if facts is None:
        return m
    values, src = facts
    sources = {**m.sources, **{f"microarch.{k}": src for k in values}}
    return replace(m, microarch=replace(m.microarch, **values), sources=sources)


def fitted(m: Machine, matrix: str) -> tuple[Machine, str]:
    meas = read_matrix(C2C / matrix)
    rel = f"calibration/data/core-to-core-latency/{matrix}"
    home = detect_home(m, meas, rel)
    return fit(m, meas, home, rel), home_to_text(home)


def main() -> None:
    rows = {r["instance"]: r for r in csv.DictReader(open(DATA / "reference" / "instances.csv"))}
    moto = json.load(open(DATA / "aws-instance-types" / "moto_instance_types_subset.json"))
    caches = {r["uarch"]: r for r in csv.DictReader(open(ROOT / CACHE))}
    out: dict[str, Machine] = {}
    index = []

    for name, (matrix, cpu, s, tpc) in SERVERS.items():
        uarch, fam, ic, cps, llc, ghz = SERVER_CPUS[cpu]
        vendor = cpu.split()[0]
        topo = Topology(ic, s, cps, tpc, llc, s)
        cyc, psrc = PAUSE_BY_FAMILY[fam]
        fsrc_text = (
            f"the CPU's name in calibration/data/core-to-core-latency/README.md "
            f"(base clock '{ghz} GHz')"
            if vendor == "Intel"
            else f"assumption: AMD's published base clock of the {cpu} ({ghz} GHz); not "
            "in calibration/data"
        )
        m = Machine(
            name=name,
            topology=topo,
            microarch=Microarch(uarch, cyc, ghz),
            coherence=placeholder(topo),
            kind="server",
            vendor=vendor,
            cpu_model=cpu,
            family=fam,
            description=f"{cpu}, {s} socket(s), measured core-to-core matrix {matrix}",
            sources={
                "topology": f"calibration/data/reference/c2c_summary.csv rows "
                f"{matrix} (sockets, logical CPUs, CCX size) and "
                "calibration/data/core-to-core-latency/README.md (CPU "
                "numbering); numa_nodes: assumption, one per socket "
                "(not recorded)",
                "microarch.pause_cycles": psrc,
                "microarch.freq_ghz": fsrc_text,
            },
        )
        m = with_caches(m, caches)
        m, home = fitted(m, matrix)
        out[name] = m
        index.append((matrix, name, fam, home))

    for inst, r in rows.items():
        fam = UARCH_FAMILY[r["uarch"]]
        sockets_known = r["sockets"] != "unknown"
        cores = int(r["cores"])
        if sockets_known:
            sockets = int(r["sockets"])
        else:
            sockets = 2 if cores >= 192 or (fam == "cascadelake" and cores == 48) else 1
            if inst.startswith(("m7i.48", "m8i.metal-48")):
                sockets = 2 if inst.startswith("m7i") else 1
        numa = int(r["numa_nodes"]) if r["numa_nodes"] != "unknown" else sockets
        llc = int(r["llc_domain_cores"]) if r["llc_domain_cores"] != "unknown" else cores // sockets
        topo = Topology(
            r["interconnect"], sockets, cores // sockets, int(r["threads_per_core"]), llc, numa
        )
        topo_src = f"{INST} row {inst} (sources {r['source']})"
        assumed = []
        if not sockets_known:
            assumed.append(
                f"sockets={sockets} (unknown in instances.csv; "
                + (
                    "half of the 96xl's 192 cores on one socket"
                    if inst == "m8i.metal-48xl"
                    else "the same host as the .metal size"
                    if cores < 192 or fam != "graniterapids"
                    else ""
                )
                + ")"
            )
        if r["numa_nodes"] == "unknown":
            assumed.append(f"numa_nodes={numa} (unknown; one per socket assumed)")
        if r["llc_domain_cores"] == "unknown":
            assumed.append("llc_domain_cores = one LLC per socket (unknown; Intel mesh assumed)")
        if assumed:
            topo_src += "; assumption: " + "; ".join(assumed)
        ghz = moto.get(inst, {}).get("ProcessorInfo", {}).get("SustainedClockSpeedInGhz")
        fsrc = f"{MOTO} {inst} SustainedClockSpeedInGhz (AWS sustained all-core clock)"
        cyc, psrc = PAUSE_BY_FAMILY[fam]
        m = Machine(
            name=inst,
            topology=topo,
            microarch=Microarch(r["uarch"], cyc, float(ghz)),
            coherence=placeholder(topo),
            kind="instance",
            vendor=r["vendor"],
            cpu_model=r["cpu_model"],
            family=fam,
            description=f"AWS {inst}: {r['cpu_model']}",
            sources={
                "topology": topo_src,
                "microarch.pause_cycles": psrc,
                "microarch.freq_ghz": fsrc,
            },
        )
        m = with_caches(m, caches)
        if inst in AWS_MEASURED:
            m, home = fitted(m, AWS_MEASURED[inst])
            index.append((AWS_MEASURED[inst], inst, fam, home))
        out[inst] = m

    for inst in rows:
        m = out[inst]
        if inst in AWS_MEASURED:
            continue
        proxy_name, note = PROXY_OF[m.family]
        proxy = out[proxy_name]
        values, sources = {}, dict(m.sources)
        for key in placeholder(m.topology).values():
            v = proxy.coherence.values().get(key)
            src = (
                f"{'' if note.startswith('assumption') else 'proxy: '}{note} "
                f"({PROXY}); value of {proxy_name}: {proxy.sources.get('coherence.' + key)}"
            )
            if v is None:
                fb_name, fb_note = SMT_FALLBACK if key == "smt_ns" else SOCKET_FALLBACK
                v = out[fb_name].coherence.values()[key]
                src = f"{fb_note}; value of {fb_name}: {out[fb_name].sources['coherence.' + key]}"
            values[key] = v
            sources[f"coherence.{key}"] = src
        out[inst] = replace(m, coherence=Coherence(**values), sources=sources)

    for name, m in out.items():
        sub = "servers" if m.kind == "server" else "instances"
        (ROOT / "models" / sub / f"{name}.toml").write_text(machine_to_toml(m))
    lines = [
        "# Which catalog machine each matrix was measured on, its parameter family, and the",
        "# socket that homed the benchmark's line (detected by cohsim.machine.c2c.detect_home: the",
        "# policy with the lowest per-pair error; 'local' = no remote-home effect seen).",
        "# Written by tools/gen_catalog.py.",
        "schema = 1",
        "",
    ]
    for matrix, name, fam, home in sorted(index):
        lines += [
            "[[matrix]]",
            f'file = "{matrix}"',
            f'machine = "{name}"',
            f'family = "{fam}"',
            f'home = "{home}"',
            "",
        ]
    (C2C / "matrices.toml").write_text("\n".join(lines))
    print(f"wrote {len(out)} machines, {len(index)} matrices")


if __name__ == "__main__":
    main()
