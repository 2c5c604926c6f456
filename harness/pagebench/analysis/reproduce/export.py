"""`pagebench reproduce --export FILE`: what a reproduction's answer needs, in one small
file, so the answer (the table, the figures, docs/reproductions.md) is regenerated with
no store and no lab (`--from FILE`), and a test can check the committed doc against it.

The file is JSON compressed with xz, written deterministically (sorted keys, floats as
Python's shortest round-trip repr; xz stores no time stamp): the same runs give the same
bytes. It holds each scenario's `Data` exactly (its loads in the store's own columns,
stored column by column, which packs best; the resources where the claims need them; the
profiles' fields), the runs it came from, how they were made (`verdicts.facts`) and the
variants as they were run. Evidence (HAR, trace paths) is left out: it stays in the store.
"""

from __future__ import annotations

import json
import lzma
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pagebench.analysis.reproduce.measures import Data
from pagebench.core.devices import DEFAULT_DEVICE
from pagebench.core.errors import PagebenchError
from pagebench.core.records import Resource
from pagebench.results.rows import LoadRow, ResourceRow, load_of, resource_columns, resource_of

FORMAT = "pagebench-reproduce-export"
#: Bump when the layout changes; an export of another version is refused, not misread.
VERSION = 1
#: A load's columns: LoadRow's fields (its condition as the store's names), evidence left out.
CONDITION_COLUMNS = ("site", "mode", "topology", "profile", "cache", "tls", "encoding", "version")
LOAD_COLUMNS = (tuple(f.name for f in fields(LoadRow)
                     if f.name not in ("condition", "har", "trace", "frames", "machine")) + CONDITION_COLUMNS)
#: A resource's columns: its load's id, its position, the Resource's fields.
RESOURCE_COLUMNS = ("load_id", "position", *(f.name for f in fields(Resource)))
#: Columns an older export may lack, read as None (as the store reads a column an older
#: store lacks as its migration's default): the fields that may be None.
NULLABLE = frozenset(f.name for cls in (LoadRow, Resource) for f in fields(cls) if "None" in str(f.type))

NO_EVIDENCE = {"har": None, "trace": None, "frames": None}
#: A reproduction's loads are the default device's (its scenarios name none) and its one
#: machine's (`repetitions: auto` is never sharded): the export keeps neither column, so
#: exports stay what they were before devices and shards.
AS_RUN = {"device": DEFAULT_DEVICE, "machine": None}


class ExportError(PagebenchError):
    """An export that cannot be read: missing, corrupt, or of another format version."""


@dataclass(frozen=True)
class Export:
    """A reproduction's answer as data: which seeds (and whether `--quick`), each
    scenario's loads, which runs they came from ((scenario, variant, label) -> run id), the
    facts of how they were measured, in order, and each (seed, variant)'s note as run."""

    seeds: tuple[str, ...]
    quick: bool
    data: dict[str, Data]
    runs: dict[tuple[str, str, str], str]
    facts: dict[str, str] = field(default_factory=dict)
    variants: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Each scenario's interval level (`repetitions: auto`'s looks judge at 1 - alpha / K).
    levels: dict[str, float] = field(default_factory=dict)


def _columns(rows: Sequence[Mapping[str, Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    return {name: [row[name] for row in rows] for name in names}


def _rows(columns: Mapping[str, list[Any]], names: Sequence[str], what: str) -> list[dict[str, Any]]:
    missing = [name for name in names if name not in columns and name not in NULLABLE]
    if missing:
        raise ValueError(f"{what}: no column {missing[0]!r}")
    present = [name for name in names if name in columns]
    lengths = {len(columns[name]) for name in present}
    if len(lengths) > 1:
        raise ValueError(f"{what}: columns of different lengths")
    absent = {name: None for name in names if name not in columns}
    return [dict(zip(present, values)) | absent for values in zip(*(columns[name] for name in present))]


def _load_cells(load: LoadRow) -> dict[str, Any]:
    if load.condition.device != DEFAULT_DEVICE:
        raise ExportError(f"load {load.seq} of {load.condition.key}: a reproduction's export keeps "
                          f"{DEFAULT_DEVICE} loads only")
    cells = {name: getattr(load, name) for name in LOAD_COLUMNS if name not in CONDITION_COLUMNS}
    cells |= {"flags": list(load.flags), "errors": list(load.errors), "notes": list(load.notes)}
    return cells | load.condition.as_names()


def _resource_cells(row: ResourceRow) -> dict[str, Any]:
    return {"load_id": row.load_id, "position": row.position, **resource_columns(row.resource)}


def to_json(export: Export) -> dict[str, Any]:
    """The export as a JSON document (`from_json` reads it back); a scenario's runs in the
    order `verdicts.gather` read them."""
    scenarios: dict[str, Any] = {}
    for name, data in export.data.items():
        runs = [{"variant": variant, "label": label, "run_id": export.runs.get((name, variant, label), ""),
                 "loads": _columns([_load_cells(load) for load in loads], LOAD_COLUMNS)}
                for (variant, label), loads in data.loads.items()]
        resources = [_resource_cells(row) for load_id in sorted(data.resources) for row in data.resources[load_id]]
        scenarios[name] = {"profiles": data.profiles, "runs": runs,
                           "resources": _columns(resources, RESOURCE_COLUMNS)}
    return {"format": FORMAT, "version": VERSION, "seeds": list(export.seeds), "quick": export.quick,
            "facts": [[key, value] for key, value in export.facts.items()],
            "variants": [[seed, variant, note] for (seed, variant), note in export.variants.items()],
            "levels": export.levels, "scenarios": scenarios}


def from_json(document: Any) -> Export:
    """An export from its JSON document; ValueError (or KeyError, TypeError) if malformed."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    if document.get("version") != VERSION:
        raise ValueError(f"format version {document.get('version')!r}, this pagebench reads version {VERSION}: "
                         "export it again with this pagebench (pagebench reproduce --reuse --export FILE)")
    data, runs = {}, {}
    for name, scenario in document["scenarios"].items():
        loads = {}
        for run in scenario["runs"]:
            key = (run["variant"], run["label"])
            loads[key] = [load_of(row | NO_EVIDENCE | AS_RUN) for row in _rows(run["loads"], LOAD_COLUMNS,
                                                                       f"scenario {name} loads")]
            runs[(name, *key)] = run["run_id"]
        resources: dict[int, list[ResourceRow]] = {}
        for row in _rows(scenario["resources"], RESOURCE_COLUMNS, f"scenario {name} resources"):
            resources.setdefault(row["load_id"], []).append(resource_of(row))
        data[name] = Data(loads, dict(scenario["profiles"]), resources)
    return Export(tuple(document["seeds"]), bool(document["quick"]), data, runs,
                  {str(key): str(value) for key, value in document["facts"]},
                  {(seed, variant): note for seed, variant, note in document["variants"]},
                  {str(name): float(level) for name, level in document.get("levels", {}).items()})


def merge(older: Export, newer: Export) -> Export:
    """`older` with `newer`'s scenarios in place of its own: seeds run again and the rest
    kept, so a doc made from a whole reproduction follows one seed's new runs. Each fact
    the two tell differently reads "older; then for <newer's seeds>: newer"."""
    if older.quick != newer.quick:
        raise ExportError("exports of a --quick and a full reproduction do not merge: their caps differ")
    again = f"then for {', '.join(newer.seeds)}"
    facts = {key: value if newer.facts.get(key, value) == value else f"{value}; {again}: {newer.facts[key]}"
             for key, value in older.facts.items()}
    facts |= {key: f"{again}: {value}" for key, value in newer.facts.items() if key not in older.facts}
    return Export(tuple(dict.fromkeys(older.seeds + newer.seeds)), older.quick, older.data | newer.data,
                  {key: run for key, run in older.runs.items() if key[0] not in newer.data} | newer.runs,
                  facts, older.variants | newer.variants, older.levels | newer.levels)


def encode(export: Export) -> bytes:
    """The export's bytes: sorted, compact JSON, xz-compressed (a fifth smaller than gzip
    -9 on loads and resources)."""
    text = json.dumps(to_json(export), sort_keys=True, separators=(",", ":"))
    return lzma.compress(text.encode(), preset=9)


def write(path: Path, export: Export) -> int:
    """Write the export; its size in bytes."""
    encoded = encode(export)
    path.write_bytes(encoded)
    return len(encoded)


def read(path: Path) -> Export:
    """The export in `path`; an ExportError naming it if it is missing, corrupt or of
    another format version."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ExportError(f"{path}: {error.strerror or error}") from None
    try:
        return from_json(json.loads(lzma.decompress(raw)))
    except (lzma.LZMAError, UnicodeDecodeError) as error:
        raise ExportError(f"{path}: not an xz-compressed export ({error})") from None
    except json.JSONDecodeError as error:
        raise ExportError(f"{path}: corrupt export (its JSON: {error})") from None
    except PagebenchError as error:  # a stored name this pagebench does not know
        raise ExportError(f"{path}: {error}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        reason = f"no field {error}" if isinstance(error, KeyError) else str(error)
        raise ExportError(f"{path}: not a readable export: {reason}") from None
