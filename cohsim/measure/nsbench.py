"""`ns_bench`: what a container's own mount namespace costs as the host's mount table grows.

runc starts every container with ``unshare(CLONE_NEWNS)`` (with ``CLONE_NEWUSER`` too under
user namespaces): the kernel's ``copy_mnt_ns()`` copies the whole mount table under
``namespace_sem`` held for writing, so one container start holds the lock for a time that grows
with the number of mounts N, and every mount and unmount of every other container waits behind
it. At the end runc detaches the old root (``pivot_root(".", ".")`` + ``umount2(".",
MNT_DETACH)``), tearing down the copied mounts again under the same lock. Right after the
copy runc makes it rslave (``mount("", "/", MS_REC|MS_SLAVE)``: namespace_sem and one
mount_lock write hold across a walk of every copied mount). ns_bench
(calibration/bench/ns_bench.c, its CSV documented in calibration/bench/README.md) times these
against N extra bind mounts, with private copies (variants ``newns``, ``userns``) and with copies
that are peers of the host's mounts (``shared``); this module names its columns and summarises
its rows: per (variant, N), the per-repeat medians the program itself reports (rows with repeat
``all``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

NS_COLUMNS = ("bench", "variant", "mounts", "op", "metric", "value", "unit", "repeat")
#: The last row of every recorded child (progress is counted on it).
NS_DONE_METRIC = "wall_ns"
#: The program's defaults for the flags that multiply the number of runs.
NS_RUN_KEYS = (("--variant", "newns,userns,shared"), ("--mounts", "0,1000,5000"))
#: The timed steps of one child, in order.
NS_OPS = ("unshare", "rslave", "umount_scratch", "umount_oldroot", "exit")


def summarize_ns(rows: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    """Per (variant, mounts): p50/mean/min of each step over the repeats, and the copy's size."""
    groups: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for r in rows:
        key = (r["variant"], int(r["mounts"]))
        if r["repeat"] == "all":
            groups[key][f"{r['op']}.{r['metric']}"] = float(r["value"])
        elif r["op"] == "mount_table" and r["metric"] == "after_unshare":
            groups[key]["copied_mounts"] = float(r["value"])
        elif r["op"] == "mount_table" and r["metric"] == "master_after_rslave":
            groups[key]["slave_mounts"] = float(r["value"])
        elif r["op"] == "umount_scratch" and r["metric"] == "failed":
            groups[key]["umount_scratch_failed"] = groups[key].get(
                "umount_scratch_failed", 0.0
            ) + float(r["value"])
    configs = []
    for (variant, mounts), g in sorted(groups.items()):
        cfg: dict[str, Any] = {
            "variant": variant,
            "mounts": mounts,
            "copied_mounts": int(g.get("copied_mounts", 0)),
            # copies left with a master after the rslave: the peers of the parent's (shared)
            "slave_mounts": int(g.get("slave_mounts", 0)),
            "parent_mounts": int(g.get("mount_table.parent", 0)),
            "umount_scratch_failed": int(g.get("umount_scratch_failed", 0)),
        }
        for op in NS_OPS:
            for stat in ("p50_ns", "mean_ns", "min_ns"):
                cfg[f"{op}_{stat}"] = g.get(f"{op}.{stat}")
        configs.append(cfg)
    return {"configs": configs}
