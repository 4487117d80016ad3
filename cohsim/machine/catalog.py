"""The instance catalog: machine TOML files in `models/`, read, checked, written and looked up.

A machine file is what people write: a `schema` number, the unit in every
key name, and a `[sources]` table that says where every number comes from — a file and row under
calibration/data/, a cohsim command, or "assumption: why". Unknown keys, wrong types, missing
fields, numbers without a source and impossible values are errors naming the file and key.

Format history:
  schema 1 — topology, microarch (pause_cycles, freq_ghz), coherence (per-class latencies),
             sources; an optional [walks] table (`children_from`, `children_scale`,
             `peers_from`, `peers_scale`: arrays, cohsim.machine.parts.Walks) where a list walk's
             cost against its length was measured; optional microarch keys `l2_kib`,
             `l2_load_ns`, `llc_load_ns` (all three or none: the caches the walks run from
             where they were not measured, cohsim.kernel.walk).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from cohsim.errors import CohsimError
from cohsim.io import catalog_dir, read_toml
from cohsim.machine.model import Machine
from cohsim.machine.parts import Coherence, Microarch, Topology, Walks

SCHEMA = 1

# key -> (python type(s), required). The unit is part of every numeric key's name.
_TOP: dict[str, tuple[tuple[type, ...], bool]] = {
    "schema": ((int,), True),
    "name": ((str,), True),
    "kind": ((str,), True),
    "vendor": ((str,), True),
    "cpu_model": ((str,), True),
    "family": ((str,), True),
    "description": ((str,), False),
}
_TABLES: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "topology": {
        "interconnect": ((str,), True),
        "sockets": ((int,), True),
        "numa_nodes": ((int,), True),
        "cores_per_socket": ((int,), True),
        "threads_per_core": ((int,), True),
        "llc_domain_cores": ((int,), True),
    },
    "microarch": {
        "uarch": ((str,), True),
        "pause_cycles": ((int, float), True),
        "freq_ghz": ((int, float), True),
        "corun_slowdown": ((int, float), False),
        "l2_kib": ((int, float), False),
        "l2_load_ns": ((int, float), False),
        "llc_load_ns": ((int, float), False),
    },
    "coherence": {
        "smt_ns": ((int, float), False),
        "same_llc_ns": ((int, float), True),
        "cross_llc_ns": ((int, float), False),
        "cross_socket_ns": ((int, float), False),
    },
}
#: the optional [walks] table: per walk, its bands' start lengths and scales (equal arrays)
_WALKS = ("children", "peers")
KINDS = ("instance", "server")
ARCHETYPES = ("mesh", "chiplet", "cmn")


def _type_name(types: tuple[type, ...]) -> str:
    return " or ".join(
        "number" if t is float else t.__name__ for t in types if t is not int or float not in types
    )


def _check_value(where: str, key: str, value: Any, types: tuple[type, ...]) -> None:
    ok = isinstance(value, types) and not isinstance(value, bool)
    if not ok:
        raise CohsimError(
            f"{key} must be a {_type_name(types)}, not {type(value).__name__} {value!r}", where
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise CohsimError(f"{key} must be finite, not {value!r}", where)
    if isinstance(value, int | float) and value < 0:
        raise CohsimError(f"{key} must not be negative, not {value!r}", where)


def _check_keys(
    where: str, prefix: str, doc: dict[str, Any], spec: dict[str, tuple[tuple[type, ...], bool]]
) -> None:
    for key in doc:
        if key not in spec:
            raise CohsimError(
                f"unknown key {prefix}{key} (expected one of {', '.join(spec)})", where
            )
    for key, (types, required) in spec.items():
        if key not in doc:
            if required:
                raise CohsimError(f"missing key {prefix}{key}", where)
            continue
        _check_value(where, f"{prefix}{key}", doc[key], types)


def machine_from_dict(doc: dict[str, Any], where: str) -> Machine:
    """Validate a parsed machine document and build the Machine; errors name `where` and key."""
    top = {k: v for k, v in doc.items() if k not in _TABLES and k not in ("sources", "walks")}
    _check_keys(where, "", top, _TOP)
    if doc["schema"] != SCHEMA:
        raise CohsimError(
            f"schema {doc['schema']} is not supported (this cohsim reads schema {SCHEMA})", where
        )
    if doc["kind"] not in KINDS:
        raise CohsimError(f"kind must be one of {', '.join(KINDS)}, not {doc['kind']!r}", where)
    tables: dict[str, dict[str, Any]] = {}
    for name, spec in _TABLES.items():
        table = doc.get(name)
        if not isinstance(table, dict):
            raise CohsimError(f"missing table [{name}]", where)
        _check_keys(where, f"{name}.", table, spec)
        tables[name] = table
    sources = doc.get("sources")
    if not isinstance(sources, dict):
        raise CohsimError("missing table [sources]", where)
    for key, text in sources.items():
        if not isinstance(text, str) or not text.strip():
            raise CohsimError(f"sources.{key} must be a non-empty string", where)
        table = key.split(".")[0]
        if table == "walks" and isinstance(doc.get("walks"), dict):
            if "." in key and key.split(".", 1)[1] not in doc["walks"]:
                raise CohsimError(f"sources.{key} names no parameter of this file", where)
            continue
        if table not in _TABLES or ("." in key and key.split(".", 1)[1] not in tables[table]):
            raise CohsimError(f"sources.{key} names no parameter of this file", where)
    for table, values in tables.items():
        for key, value in values.items():
            if (
                isinstance(value, int | float)
                and f"{table}.{key}" not in sources
                and table not in sources
            ):
                raise CohsimError(
                    f'{table}.{key} has no source: add sources."{table}.{key}" '
                    f'(a file under calibration/data/, or "assumption: why")',
                    where,
                )
    walks = _walks(doc.get("walks"), sources, where)
    try:
        topo = Topology(**tables["topology"])
        # numbers as floats, the one string (uarch) as it is; checked against _TABLES above
        micro_kw: dict[str, Any] = {
            k: float(v) if k != "uarch" else v for k, v in tables["microarch"].items()
        }
        micro = Microarch(**micro_kw)
        coh = Coherence(**{k: float(v) for k, v in tables["coherence"].items()})
        return Machine(
            name=doc["name"],
            topology=topo,
            microarch=micro,
            coherence=coh,
            kind=doc["kind"],
            vendor=doc["vendor"],
            cpu_model=doc["cpu_model"],
            family=doc["family"],
            description=doc.get("description", ""),
            walks=walks,
            sources=dict(sources),
        )
    except CohsimError as exc:
        raise CohsimError(exc.what, where) from None


#: the two arrays of a walk's bands in [walks]
_WALK_ARRAYS = ("from", "scale")


def _numbers(value: Any, key: str, where: str) -> list[float]:
    """`value` as a non-empty list of finite, non-negative numbers, else a clear error."""
    if not isinstance(value, list) or not value:
        raise CohsimError(f"{key} must be a non-empty array of numbers", where)
    for v in value:
        _check_value(where, key, v, (int, float))
    return [float(v) for v in value]


def _walks(table: Any, sources: dict[str, Any], where: str) -> Walks:
    """The optional [walks] table as Walks: for each walk given, `<walk>_from` (the bands'
    start lengths) and `<walk>_scale` (their scales), arrays of numbers of one length; its
    source is required, as for every number."""
    if table is None:
        return Walks()
    if not isinstance(table, dict):
        raise CohsimError("walks must be a table", where)
    keys = {f"{w}_{part}" for w in _WALKS for part in _WALK_ARRAYS}
    for key in table:
        if key not in keys:
            raise CohsimError(
                f"unknown key walks.{key} (expected one of {', '.join(sorted(keys))})", where
            )
    if "walks" not in sources and not any(k.startswith("walks.") for k in sources):
        raise CohsimError('walks has no source: add sources."walks"', where)
    bands: dict[str, tuple[tuple[float, float], ...]] = {}
    for w in _WALKS:
        if f"{w}_from" not in table and f"{w}_scale" not in table:
            continue
        starts, scales = (
            _numbers(table.get(f"{w}_{p}"), f"walks.{w}_{p}", where) for p in _WALK_ARRAYS
        )
        if len(starts) != len(scales):
            raise CohsimError(f"walks.{w}_from and walks.{w}_scale differ in length", where)
        bands[w] = tuple(zip(starts, scales, strict=True))
    try:
        return Walks(**bands)
    except CohsimError as exc:
        raise CohsimError(exc.what, where) from None


def load_machine(path: str | Path) -> Machine:
    """Read one machine TOML file."""
    path = Path(path)
    doc = read_toml(path)
    return machine_from_dict(doc, str(path))


_PARSED: dict[tuple[str, int, int], Machine] = {}


def _read_cached(path: Path) -> Machine:
    """`load_machine(path)`, parsed once per process while the file is unchanged."""
    try:
        st = path.stat()
    except OSError:
        return load_machine(path)  # its own clear error
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _PARSED:
        _PARSED[key] = load_machine(path)
    return _PARSED[key]


#: each machine folder's TOML files, by the folder and its modification time (adding,
#: removing or renaming a file changes it; an edit is `_PARSED`'s), so that a second
#: `Catalog()` lists nothing again (a prediction makes a few)
_LISTED: dict[tuple[str, int], tuple[Path, ...]] = {}


def _listed(folder: Path) -> tuple[Path, ...]:
    """The folder's `*.toml` files, sorted, listed once per process while it is unchanged."""
    try:
        key = (str(folder), folder.stat().st_mtime_ns)
    except OSError:
        return tuple(sorted(folder.glob("*.toml")))  # (none: an empty catalog, as before)
    if key not in _LISTED:
        _LISTED[key] = tuple(sorted(folder.glob("*.toml")))
    return _LISTED[key]


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return repr(value)
    return str(value)


def machine_to_toml(m: Machine) -> str:
    """The machine as TOML text that `load_machine` reads back to an equal Machine."""
    lines = [f"schema = {SCHEMA}"]
    for key in ("name", "kind", "vendor", "cpu_model", "family", "description"):
        lines.append(f"{key} = {_toml_value(getattr(m, key))}")
    parts: dict[str, Topology | Microarch | Coherence] = {
        "topology": m.topology,
        "microarch": m.microarch,
        "coherence": m.coherence,
    }
    for table, obj in parts.items():
        lines += ["", f"[{table}]"]
        defaults = {f.name: f.default for f in fields(obj)}
        for key, (_, required) in _TABLES[table].items():
            value = getattr(obj, key)
            if required or value != defaults[key]:  # an optional key at its default is left out
                lines.append(f"{key} = {_toml_value(value)}")
    if m.walks:
        lines += ["", "[walks]"]
        for w in _WALKS:
            bands = getattr(m.walks, w)
            if bands:
                lines.append(f"{w}_from = [{', '.join(_toml_value(a) for a, _ in bands)}]")
                lines.append(f"{w}_scale = [{', '.join(_toml_value(b) for _, b in bands)}]")
    lines += ["", "[sources]"]
    for key, text in m.sources.items():
        lines.append(f"{_toml_value(key)} = {_toml_value(text)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Archetype:
    """Which catalog machine represents an interconnect kind, and why."""

    kind: str  #: "mesh", "chiplet" or "cmn"
    instance: str  #: catalog name of the representative
    why: str  #: one line for people


class Catalog:
    """All machine files under a catalog directory (by default the shipped `models/`).

    Files are indexed by name when the catalog is made and read when first asked for: a
    prediction about one instance parses one file, not the whole catalog (86 files, about
    0.07 s). A parsed file is kept for the process, keyed by its path, size and modification
    time, so a second `Catalog()` costs a directory listing.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else catalog_dir()
        self._paths: dict[str, Path] = {}
        for sub in ("instances", "servers"):
            for path in _listed(self.root / sub):
                if path.stem in self._paths:
                    raise CohsimError(
                        f"machine {path.stem!r} is also defined in {self._paths[path.stem]}",
                        str(path),
                    )
                self._paths[path.stem] = path

    def _load(self, name: str) -> Machine:
        path = self._paths[name]
        m = _read_cached(path)
        if m.name != name:
            raise CohsimError(f"name {m.name!r} does not match the file name", str(path))
        return m

    def names(self) -> list[str]:
        return list(self._paths)

    def machines(self) -> list[Machine]:
        return [self._load(name) for name in self._paths]

    def path(self, name: str) -> Path:
        return self._paths[self.get(name).name]

    def get(self, name: str) -> Machine:
        """The machine called `name`, or a catalog/TOML path; unknown names suggest neighbours."""
        if name in self._paths:
            return self._load(name)
        if name.endswith(".toml"):
            return load_machine(name)
        close = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.5)
        if not close:
            close = [n for n in self.names() if n.split(".")[0] == name.split(".")[0]][:3]
        hint = (
            f"; did you mean {', '.join(close)}?"
            if close
            else "; `cohsim machines` lists the catalog"
        )
        raise CohsimError(f"unknown instance {name!r}{hint}")

    def archetype(self, kind: str) -> Archetype:
        """The representative of an interconnect kind (models/archetypes/KIND.toml)."""
        if kind not in ARCHETYPES:
            raise CohsimError(
                f"unknown architecture {kind!r}; choose one of {', '.join(ARCHETYPES)}"
            )
        path = self.root / "archetypes" / f"{kind}.toml"
        doc = read_toml(path)
        spec: dict[str, tuple[tuple[type, ...], bool]] = {
            "schema": ((int,), True),
            "archetype": ((str,), True),
            "instance": ((str,), True),
            "why": ((str,), True),
        }
        _check_keys(str(path), "", doc, spec)
        if doc["archetype"] != kind:
            raise CohsimError(f"archetype is {doc['archetype']!r}, expected {kind!r}", str(path))
        machine = self.get(doc["instance"])
        if machine.topology.interconnect != kind:
            raise CohsimError(
                f"{machine.name} is a {machine.topology.interconnect} machine, not {kind}",
                str(path),
            )
        return Archetype(kind=kind, instance=doc["instance"], why=doc["why"])


def summary_row(m: Machine) -> dict[str, Any]:
    """The `cohsim machines` row of a machine."""
    t = m.topology
    return {
        "name": m.name,
        "kind": m.kind,
        "vendor": m.vendor,
        "cpu_model": m.cpu_model,
        "uarch": m.microarch.uarch,
        "family": m.family,
        "interconnect": t.interconnect,
        "sockets": t.sockets,
        "numa_nodes": t.numa_nodes,
        "cores": t.cores,
        "threads_per_core": t.threads_per_core,
        "vcpus": t.vcpus,
        "llc_domains": t.llc_domains,
        "source": m.sources.get("topology", ""),
    }
