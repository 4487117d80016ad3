"""How real readers of /proc/self/mountinfo read it: read() sizes asked for and returned.

    python -m calibration.analysis.mountinfo_readers.summary [DATA_DIR]

Default: calibration/data/devvm-2cpu-amd-epyc-f25m1/mountinfo-readers/, which holds one
`strace -f -T -s 16 -e trace=openat,read,pread64,readv,lseek,close` log per reader and table
(`READER-TABLE.strace`, TABLE `host`: the initial namespace, or `1000`: 1,000 bind mounts more in
a private namespace) and the table each read (`mountinfo-TABLE.txt`). Per log: the read() calls
on the mountinfo fd (from its openat to its close), the sizes asked for, the bytes returned,
the lines of the table and lines per data-returning read().

Then a replay of the kernel's seq_read_iter() (fs/seq_file.c) over the table's records with the
same requests: a read() first hands over what the last one left in the seq_file buffer; if
the request is not yet full it calls m_start() (namespace_sem taken for reading), shows records
until the buffer (one page, 4096 B) would overflow or holds at least what is still asked for,
m_stop() (released), and copies. The replay predicts the bytes each read() returned; where it
matches the log call for call, its count of m_start() calls is the number of namespace_sem
read sections the reader took, and their records the lines each held the lock for.
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "calibration/data/devvm-2cpu-amd-epyc-f25m1/mountinfo-readers"
READERS = ("cat", "findmnt", "mount", "python3")
TABLES = ("host", "1000")
PAGE = 4096

OPEN = re.compile(r'openat\(AT_FDCWD, "/proc/self/mountinfo", [^)]*\) = (\d+)')
READ = re.compile(r"^\d+ +read\((\d+), .*, (\d+)\) += (\d+)")
CLOSE = re.compile(r"^\d+ +close\((\d+)\)")


@dataclass
class Reads:
    asked: list[int]
    got: list[int]


def reads_of(log: Path) -> Reads:
    """The read() calls on the first mountinfo fd of `log`, up to its close."""
    fd = None
    out = Reads([], [])
    for line in log.read_text().splitlines():
        if fd is None:
            m = OPEN.search(line)
            fd = m.group(1) if m else None
            continue
        if (m := READ.match(line)) and m.group(1) == fd:
            out.asked.append(int(m.group(2)))
            out.got.append(int(m.group(3)))
        elif (m := CLOSE.match(line)) and m.group(1) == fd:
            break
    if fd is None:
        raise SystemExit(f"{log}: no openat of /proc/self/mountinfo")
    return out


def replay(records: list[int], asked: list[int]) -> tuple[list[int], list[int]]:
    """seq_read_iter() over records of these sizes: bytes per read(), records per m_start()."""
    count = index = 0
    got: list[int] = []
    held: list[int] = []
    for want in asked:
        copied = 0
        if count:  # flush what the last read() left in the buffer
            n = min(count, want)
            count, copied, want = count - n, n, want - n
            if count:
                got.append(copied)
                continue
        if index >= len(records):  # m_start() finds no record: EOF
            held.append(0)
            got.append(copied)
            continue
        shown = 1  # m_start() and the first record
        count = records[index]
        while True:  # Fill: next record while the request wants more and the page has room
            index += 1
            if index >= len(records) or count >= want:
                break
            if count + records[index] >= PAGE:  # seq_has_overflowed(): not shown
                break
            count += records[index]
            shown += 1
        held.append(shown)
        n = min(count, want)
        count -= n
        got.append(copied + n)
    return got, held


def main(argv: list[str]) -> int:
    data = Path(argv[0]) if argv else DATA
    print(f"mountinfo readers: {data.name}/ (read() calls on the mountinfo fd, EOF read included)")
    print(
        f"{'reader':<8}{'table':>6}{'lines':>6}{'bytes':>7}{'reads':>6}  {'asked (B)':<22}"
        f"{'returned per data read (B)':<30}{'lines/read':>10}  {'m_start':>7}"
        f"{'lines/m_start':>14}  replay"
    )
    for table in TABLES:
        text = (data / f"mountinfo-{table}.txt").read_text()
        records = [len(line) + 1 for line in text.splitlines()]
        for reader in READERS:
            r = reads_of(data / f"{reader}-{table}.strace")
            data_reads = [g for g in r.got if g]
            asked = sorted(set(r.asked))
            asked_s = ",".join(map(str, asked)) if len(asked) <= 3 else f"{asked[0]}..{asked[-1]}"
            got_s = (
                f"{min(data_reads)}..{max(data_reads)}, median {statistics.median(data_reads):.0f}"
            )
            pred, held = replay(records, r.asked)
            starts = [h for h in held if h]
            print(
                f"{reader:<8}{table:>6}{len(records):>6}{sum(r.got):>7}{len(r.got):>6}  "
                f"{asked_s:<22}{got_s:<30}{len(records) / len(data_reads):>10.1f}  "
                f"{len(held):>7}{statistics.mean(starts):>14.1f}  "
                f"{'matches' if pred == r.got else 'DIFFERS'}"
            )
            if sum(r.got) != len(text):
                print(f"  note: {reader} read {sum(r.got)} B, the table file has {len(text)} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
