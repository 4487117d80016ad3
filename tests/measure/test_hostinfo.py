"""Host facts: this host, and small synthetic /sys + /proc trees standing in for servers."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cohsim.measure.hostinfo import HOSTINFO_SCHEMA, collect, parse_cpulist

INTEL_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz
stepping\t: 7
flags\t\t: fpu vme de pse tsc msr pae mce ht syscall
"""


def make_tree(
    root: Path,
    *,
    packages: list[int],
    siblings: dict[int, str],
    llc: dict[int, str] | None,
    nodes: str = "0",
    smt: str = "on",
    cpuinfo: str = INTEL_CPUINFO,
    dmi: dict[str, str] | None = None,
) -> tuple[Path, Path]:
    """A /sys and /proc with just the files hostinfo reads."""
    sys_root, proc_root = root / "sys", root / "proc"
    cpu_root = sys_root / "devices/system/cpu"
    n = len(packages)
    (cpu_root).mkdir(parents=True)
    (cpu_root / "online").write_text(f"0-{n - 1}\n")
    (cpu_root / "smt").mkdir()
    (cpu_root / "smt/control").write_text(smt + "\n")
    for cpu, pkg in enumerate(packages):
        topo = cpu_root / f"cpu{cpu}/topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(f"{pkg}\n")
        first = parse_cpulist(siblings[cpu])[0]
        (topo / "core_id").write_text(f"{first}\n")
        (topo / "thread_siblings_list").write_text(siblings[cpu] + "\n")
        for index, level in ((0, 1), (2, 2)):
            d = cpu_root / f"cpu{cpu}/cache/index{index}"
            d.mkdir(parents=True)
            (d / "level").write_text(f"{level}\n")
            (d / "shared_cpu_list").write_text(siblings[cpu] + "\n")
        if llc is not None:
            d = cpu_root / f"cpu{cpu}/cache/index3"
            d.mkdir(parents=True)
            (d / "level").write_text("3\n")
            (d / "shared_cpu_list").write_text(llc[cpu] + "\n")
            (d / "size").write_text("36608K\n")
    node = sys_root / "devices/system/node"
    node.mkdir(parents=True)
    (node / "online").write_text(nodes + "\n")
    if dmi:
        d = sys_root / "class/dmi/id"
        d.mkdir(parents=True)
        for k, v in dmi.items():
            (d / k).write_text(v + "\n")
    (proc_root / "sys/kernel").mkdir(parents=True)
    (proc_root / "sys/kernel/osrelease").write_text("6.1.0-test\n")
    (proc_root / "cpuinfo").write_text(cpuinfo)
    return sys_root, proc_root


def two_socket_smt(tmp_path: Path, **kw: object) -> tuple[Path, Path]:
    # 2 sockets x 2 cores x 2 threads, Linux numbering: cpu i and i+4 are SMT siblings.
    packages = [0, 0, 1, 1, 0, 0, 1, 1]
    siblings = {c: f"{c % 4},{c % 4 + 4}" for c in range(8)}
    llc = {c: ("0-1,4-5" if packages[c] == 0 else "2-3,6-7") for c in range(8)}
    return make_tree(tmp_path, packages=packages, siblings=siblings, llc=llc, nodes="0-1", **kw)  # type: ignore[arg-type]


def test_this_host() -> None:
    h = collect()
    assert h.online_cpus == os.cpu_count()
    assert h.sockets >= 1 and h.cores >= 1 and h.threads_per_core >= 1 and h.numa_nodes >= 1
    assert h.cores * h.threads_per_core >= h.online_cpus
    assert h.llc_domains >= 1
    assert h.kernel_release == platform.release()
    assert h.arch == platform.machine()
    doc = h.to_json()
    assert doc["schema"] == HOSTINFO_SCHEMA and isinstance(doc["llc_domain_cpus"], list)
    assert re.fullmatch(r"devvm-\d+cpu-[a-z0-9-]+", h.slug("devvm"))


def test_synthetic_two_socket_metal(tmp_path: Path) -> None:
    sys_root, proc_root = two_socket_smt(
        tmp_path, dmi={"sys_vendor": "Amazon EC2", "product_name": "m5.metal"}
    )
    h = collect(sys_root, proc_root)
    assert (h.online_cpus, h.sockets, h.cores, h.threads_per_core) == (8, 2, 4, 2)
    assert (h.numa_nodes, h.smt, h.llc_domains) == (2, "on", 2)
    assert h.llc_domain_cpus == ("0-1,4-5", "2-3,6-7")
    assert h.llc_size == "36608K"
    assert h.cpu_model == "Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz"
    assert (h.vendor, h.cpu_family_model, h.kernel_release) == (
        "GenuineIntel",
        "6/85/7",
        "6.1.0-test",
    )
    assert h.dmi["product_name"] == "m5.metal"
    assert not h.hypervisor_flag and not h.virtualized  # EC2 metal: DMI says Amazon, no hypervisor
    assert h.detect_virt == ""  # never consulted for a synthetic tree
    assert h.slug("host") == "host-8cpu-intel-xeon-platinum-8259cl-f6m85"


def test_synthetic_vm_flags(tmp_path: Path) -> None:
    cpuinfo = INTEL_CPUINFO.replace("syscall", "syscall hypervisor")
    sys_root, proc_root = two_socket_smt(tmp_path, cpuinfo=cpuinfo, smt="off")
    h = collect(sys_root, proc_root)
    assert h.hypervisor_flag and h.virtualized and h.smt == "off"


def test_dmi_alone_marks_a_vm(tmp_path: Path) -> None:
    sys_root, proc_root = two_socket_smt(
        tmp_path, dmi={"sys_vendor": "QEMU", "product_name": "Standard PC"}
    )
    assert collect(sys_root, proc_root).virtualized


def test_no_l3_means_one_domain_per_socket(tmp_path: Path) -> None:
    sys_root, proc_root = make_tree(
        tmp_path,
        packages=[0, 0, 1, 1],
        siblings={c: str(c) for c in range(4)},
        llc=None,
        smt="notsupported",
    )
    h = collect(sys_root, proc_root)
    assert (h.sockets, h.llc_domains, h.llc_domain_cpus, h.threads_per_core) == (2, 2, (), 1)


def test_arm64_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = (
        "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd\n"
        "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n"
    )
    sys_root, proc_root = make_tree(
        tmp_path,
        packages=[0, 0],
        siblings={0: "0", 1: "1"},
        llc={0: "0-1", 1: "0-1"},
        smt="notsupported",
        cpuinfo=cpuinfo,
    )
    h = collect(sys_root, proc_root)
    assert h.cpu_model == "arm implementer 0x41 part 0xd0c"
    assert h.cpu_family_model == "" and h.vendor == ""
    assert h.slug("host") == "host-2cpu-arm-implementer-0x41-part-0xd0c"


def test_parse_cpulist_examples() -> None:
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == []
    for bad in ("a", "3-1", "1,,2", "-1"):
        with pytest.raises(ValueError):
            parse_cpulist(bad)


@given(st.sets(st.integers(min_value=0, max_value=300), min_size=1))
def test_parse_cpulist_round_trip(cpus: set[int]) -> None:
    ordered = sorted(cpus)
    parts, start = [], ordered[0]
    for a, b in zip(ordered, ordered[1:] + [None], strict=True):
        if b != a + 1:
            parts.append(f"{start}-{a}" if a != start else str(a))
            start = b
    assert parse_cpulist(",".join(parts)) == ordered
