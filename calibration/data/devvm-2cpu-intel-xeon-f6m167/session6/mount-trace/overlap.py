"""Unmounts at 2+ workers split by what the other workers were doing meanwhile: an overlay mount
or another unmount (mean time on the CPU and wall time per call, us).

    python overlap.py trace-common-parent-2w-1L.txt.xz
"""

import re, sys, lzma, statistics as S, collections
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent))
from analyse import LINE, kind
path = sys.argv[1]
calls = []  # (pid, kind, t0, t1, off)
st = {}; od = {}
with lzma.open(path, 'rt') as f:
    for line in f:
        m = LINE.match(line)
        if not m: continue
        _c, pid, _cpu, ts, ev, rest = m.groups(); pid = int(pid); t = float(ts) * 1e6
        if ev in ("sys_mount", "sys_umount"):
            if "->" not in rest:
                st[pid] = [kind(ev, rest, od, pid), t, 0.0, None]
            else:
                s = st.pop(pid, None)
                if s and not rest.split("->")[1].strip().startswith("0xffff"):
                    calls.append((pid, s[0], s[1], t, s[2]))
        elif ev == "sched_switch":
            prev = int(re.search(r"prev_pid=(\d+)", rest).group(1)); nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
            if prev in st: st[prev][3] = t
            if nxt in st and st[nxt][3] is not None: st[nxt][2] += t - st[nxt][3]; st[nxt][3] = None
# for each umount, what fraction of its span overlaps another pid's mount_overlay
ov = [c for c in calls if c[1] == "mount_overlay"]
for k in ("umount", "umount_overlay", "umount_detach"):
    rows = []
    for pid, kd, t0, t1, off in calls:
        if kd != k: continue
        o = sum(max(0, min(t1, b1) - max(t0, b0)) for p2, _, b0, b1, _ in ov if p2 != pid and b0 < t1 and b1 > t0)
        rows.append((o > 0, t1 - t0 - off, t1 - t0))
    for flag in (True, False):
        xs = [r for r in rows if r[0] == flag]
        if xs: print(f"{k:15s} overlaps another's overlay mount={flag!s:5s} n={len(xs):4d} on-CPU mean {S.mean(x[1] for x in xs):6.1f} wall {S.mean(x[2] for x in xs):6.1f}")
print("-- overlap with another worker's unmount")
um = [c for c in calls if c[1].startswith("umount")]
for k in ("umount", "umount_overlay", "umount_detach"):
    rows = []
    for pid, kd, t0, t1, off in calls:
        if kd != k: continue
        o = any(p2 != pid and b0 < t1 and b1 > t0 for p2, _, b0, b1, _ in um)
        rows.append((o, t1 - t0 - off, t1 - t0))
    for flag in (True, False):
        xs = [r for r in rows if r[0] == flag]
        if len(xs) > 5: print(f"{k:15s} overlaps another's unmount={flag!s:5s} n={len(xs):4d} on-CPU mean {S.mean(x[1] for x in xs):6.1f} wall {S.mean(x[2] for x in xs):6.1f}")
