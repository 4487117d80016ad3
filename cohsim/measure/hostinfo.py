"""Facts about the host a real benchmark ran on: CPU, topology, kernel, virtualisation.

A measurement is only as useful as the description of the machine it came from. These facts go
into the JSON sidecar written next to every `cohsim bench` CSV, and calibration uses them to
match data to a catalog machine. Everything is read from `/sys` and `/proc` (both roots are
parameters, so a small synthetic tree can stand in for a real one in tests); nothing here
needs root.

Topology comes from `/sys/devices/system/cpu/cpu*/topology` (package, core, SMT siblings) and
from the level-3 cache's `shared_cpu_list` (LLC domains: one per socket on a mesh, one per
CCX on a chiplet part). Virtualisation is reported from every independent source available:
the cpuinfo `hypervisor` flag, `/sys/class/dmi/id` and `systemd-detect-virt`.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Version of the `host` block's layout inside a sidecar.
HOSTINFO_SCHEMA = 1


@dataclass(frozen=True)
class HostInfo:
    """What a benchmark result must say about the machine it was measured on."""

    cpu_model: str  #: cpuinfo "model name" (or the arm64 implementer/part when there is none)
    vendor: str  #: cpuinfo vendor_id, e.g. GenuineIntel, AuthenticAMD; "" when unknown
    cpu_family_model: str  #: "family/model/stepping" from cpuinfo (x86), "" otherwise
    arch: str  #: machine architecture, e.g. x86_64, aarch64
    online_cpus: int  #: logical CPUs online
    sockets: int  #: distinct physical packages
    numa_nodes: int  #: online NUMA nodes
    cores: int  #: distinct (package, core) pairs
    threads_per_core: int  #: most SMT siblings any core has
    smt: str  #: /sys/devices/system/cpu/smt/control (on, off, notsupported, ...) or "unknown"
    llc_domains: int  #: distinct L3 sharing sets (sockets when no L3 is reported)
    llc_domain_cpus: tuple[str, ...]  #: the cpulist of each LLC domain, in first-CPU order
    llc_size: str  #: size of one L3 as /sys reports it, e.g. "107520K"; "" when none
    kernel_release: str  #: uname -r
    virtualized: bool  #: True when any source says this is a VM or container
    hypervisor_flag: bool  #: cpuinfo flags contain "hypervisor"
    dmi: dict[str, str] = field(default_factory=dict)  #: sys_vendor, product_name, ... if present
    detect_virt: str = ""  #: output of systemd-detect-virt ("none", "kvm", "docker", ...) or ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict, with the schema number."""
        doc = asdict(self)
        doc["llc_domain_cpus"] = list(self.llc_domain_cpus)
        doc["schema"] = HOSTINFO_SCHEMA
        return doc

    def slug(self, prefix: str = "host") -> str:
        """A directory-friendly name, e.g. ``devvm-2cpu-intel-xeon-f6m167``.

        Trademarks, "Processor"/"CPU" and the clock suffix are dropped; on x86 the cpuinfo
        family and model numbers are appended, because virtual machines often hide the real
        model name behind a generic one.
        """
        model = re.sub(r"\((r|tm|c)\)", "", self.cpu_model.lower())
        model = re.sub(r"@.*$", "", model)
        model = re.sub(r"\b(processor|cpu)\b", "", model)
        model = re.sub(r"[^a-z0-9]+", "-", model).strip("-") or "unknown-cpu"
        if self.cpu_family_model:
            family, model_no, *_ = self.cpu_family_model.split("/")
            model += f"-f{family}m{model_no}"
        return f"{prefix}-{self.online_cpus}cpu-{model}"


def parse_cpulist(text: str) -> list[int]:
    """Expand a kernel cpulist such as ``0-3,8,10-11`` into CPU numbers."""
    out: list[int] = []
    text = text.strip()
    if not text:
        return out
    for part in text.split(","):
        a, sep, b = part.partition("-")
        if not a.isdigit() or (sep and not b.isdigit()):
            raise ValueError(f"not a cpulist: {text!r}")
        lo = int(a)
        hi = int(b) if sep else lo
        if hi < lo:
            raise ValueError(f"not a cpulist: {text!r}")
        out.extend(range(lo, hi + 1))
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _cpuinfo_fields(text: str) -> dict[str, str]:
    """The first processor block of /proc/cpuinfo, plus arm64's global lines."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def _l3_dir(cpu_dir: Path) -> Path | None:
    cache = cpu_dir / "cache"
    if not cache.is_dir():
        return None
    for index in sorted(cache.glob("index*")):
        if _read(index / "level") == "3":
            return index
    return None


def _detect_virt() -> str:
    exe = shutil.which("systemd-detect-virt")
    if not exe:
        return ""
    try:
        res = subprocess.run([exe], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return res.stdout.strip()


_VM_VENDORS = ("qemu", "kvm", "amazon ec2", "vmware", "xen", "microsoft", "google", "firecracker")


def _online_cpus(cpu_root: Path) -> list[int]:
    online_text = _read(cpu_root / "online")
    if online_text:
        return parse_cpulist(online_text)
    return sorted(int(p.name[3:]) for p in cpu_root.glob("cpu[0-9]*"))


@dataclass
class _Topology:
    packages: set[int]
    cores: set[tuple[int, int]]
    threads_per_core: int
    llc_domain_cpus: tuple[str, ...]
    llc_size: str


def _topology(cpu_root: Path, cpus: list[int]) -> _Topology:
    packages: set[int] = set()
    cores: set[tuple[int, int]] = set()
    threads_per_core = 1
    llc_sets: dict[str, int] = {}  # cpulist text -> first CPU (for ordering)
    llc_size = ""
    for cpu in cpus:
        d = cpu_root / f"cpu{cpu}"
        pkg = int(_read(d / "topology/physical_package_id") or 0)
        core = int(_read(d / "topology/core_id") or cpu)
        packages.add(pkg)
        cores.add((pkg, core))
        siblings = _read(d / "topology/thread_siblings_list")
        if siblings:
            threads_per_core = max(threads_per_core, len(parse_cpulist(siblings)))
        l3 = _l3_dir(d)
        shared = _read(l3 / "shared_cpu_list") if l3 else None
        if shared:
            llc_sets.setdefault(shared, min(parse_cpulist(shared)))
            if not llc_size and l3 is not None:
                llc_size = _read(l3 / "size") or ""
    if llc_sets:
        llc_domain_cpus = tuple(sorted(llc_sets, key=llc_sets.__getitem__))
    else:
        llc_domain_cpus = ()
    return _Topology(packages, cores, threads_per_core, llc_domain_cpus, llc_size)


def _numa_nodes(sys_root: Path) -> int:
    node_online = _read(sys_root / "devices/system/node/online")
    if node_online:
        return len(parse_cpulist(node_online))
    return max(1, len(list((sys_root / "devices/system/node").glob("node[0-9]*"))))


def _cpu_model(f: dict[str, str], real: bool) -> str:
    model = f.get("model name") or f.get("Model name") or ""
    if not model and "CPU part" in f:
        model = f"arm implementer {f.get('CPU implementer', '?')} part {f['CPU part']}"
    if not model and real:
        model = platform.processor()
    return model


def _dmi(sys_root: Path) -> dict[str, str]:
    dmi: dict[str, str] = {}
    for key in ("sys_vendor", "product_name", "product_version", "board_vendor", "bios_vendor"):
        value = _read(sys_root / "class/dmi/id" / key)
        if value:
            dmi[key] = value
    return dmi


def _dmi_says_vm(dmi: dict[str, str]) -> bool:
    dmi_vm = any(
        v in dmi.get("sys_vendor", "").lower() or v in dmi.get("product_name", "").lower()
        for v in _VM_VENDORS
    )
    # EC2 metal instances report "Amazon EC2" in DMI but no hypervisor flag: not virtualised.
    return dmi_vm and "metal" not in dmi.get("product_name", "").lower()


def collect(
    sys_root: str | Path = "/sys",
    proc_root: str | Path = "/proc",
    *,
    run_detect_virt: bool | None = None,
) -> HostInfo:
    """Read this host's facts (or those of a synthetic tree under `sys_root`/`proc_root`).

    `run_detect_virt` defaults to True only for the real `/sys`, so a synthetic tree is never
    mixed with facts from the machine running the test.
    """
    sys_root = Path(sys_root)
    proc_root = Path(proc_root)
    real = sys_root == Path("/sys")
    if run_detect_virt is None:
        run_detect_virt = real

    cpu_root = sys_root / "devices/system/cpu"
    cpus = _online_cpus(cpu_root)
    topo = _topology(cpu_root, cpus)

    f = _cpuinfo_fields(_read(proc_root / "cpuinfo") or "")
    family_model = ""
    if "cpu family" in f:
        family_model = f"{f['cpu family']}/{f.get('model', '?')}/{f.get('stepping', '?')}"
    flags = set((f.get("flags") or f.get("Features") or "").split())

    dmi = _dmi(sys_root)
    kernel = _read(proc_root / "sys/kernel/osrelease") or (platform.release() if real else "")
    detect = _detect_virt() if run_detect_virt else ""
    hypervisor = "hypervisor" in flags

    return HostInfo(
        cpu_model=_cpu_model(f, real),
        vendor=f.get("vendor_id", ""),
        cpu_family_model=family_model,
        arch=platform.machine() if real else "",
        online_cpus=len(cpus),
        sockets=max(1, len(topo.packages)),
        numa_nodes=_numa_nodes(sys_root),
        cores=max(1, len(topo.cores)),
        threads_per_core=topo.threads_per_core,
        smt=_read(cpu_root / "smt/control") or "unknown",
        llc_domains=len(topo.llc_domain_cpus) or max(1, len(topo.packages)),
        llc_domain_cpus=topo.llc_domain_cpus,
        llc_size=topo.llc_size,
        kernel_release=kernel,
        virtualized=hypervisor or _dmi_says_vm(dmi) or detect not in ("", "none"),
        hypervisor_flag=hypervisor,
        dmi=dmi,
        detect_virt=detect,
    )
