"""An interleaved baseline: the baseline's own sites (the default branch's checkout of an
app or a static build) measured in the same run as the change's, each load of either in
the run's one seeded order, so that whatever drifts on the host between runs (a shared
VM's steal, a noisy neighbour) hits both sides alike. Two runs measured minutes apart
differ by more than the within-run spread (docs/benchmarks.md: the A/A of separate runs);
the loads of one run do not.

    pagebench run examples/shop/pagebench.yaml --baseline ../main/examples/shop/pagebench.yaml
    pagebench compare RUN            # the baseline's sites against the change's, in one run

Each of the spec's own sites (a folder or an app, by `name`) is paired with the baseline
spec's site of the same name and kind, which joins the run as its twin `<name>.baseline`:
the baseline's entry as it is (its command, folder and hosts; its paths from the baseline
spec's directory; an app's `dir`, by default that directory), renamed, served on the
hosts it would be served on (the lab tells the twins apart by address, as it does any two
sites that share a host). Every other setting (modes, profiles, loads) is the spec's.
Sites of other kinds are the same on both sides and are not paired: the run says so.

Pure: entries in, entries out; the run stores them as its spec, so a resume or a split
lab's sites role finds the same sites, and the pairs in its meta (`baseline`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.sites import kinds
from pagebench.core.spec.model import SpecError

#: What a baseline twin's name ends with.
SUFFIX = ".baseline"
#: The kinds a team's own change can alter: their entries are paired by `name`.
PAIRED = (kinds.APP, kinds.FOLDER)


@dataclass(frozen=True)
class Twinned:
    """The spec's sites with the baseline's twins after them, which twin stands for which
    of the spec's sites, and what the run says about the rest."""

    sites: list[Any]
    pairs: dict[str, str]  # twin name -> the spec's site name
    notes: list[str]


def _kind(entry: Any) -> kinds.SiteKind | None:
    if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
        return next((kind for kind in PAIRED if kind.key in entry), None)
    return None


def _twin(entry: Mapping[str, Any], kind: kinds.SiteKind, base_dir: Path) -> dict[str, Any]:
    """The baseline's entry as its twin: renamed, its hosts and working directory kept."""
    name = entry["name"]
    twin = {**entry, "name": name + SUFFIX}
    if kind is kinds.APP:
        twin.setdefault("origins", [f"{name}.test"])
        if isinstance(entry.get("app"), Mapping) and entry["app"].get("command") is not None:
            twin.setdefault("dir", str(base_dir))
    else:
        twin.setdefault("host", f"{name}.test")
    return twin


def twinned(sites: Sequence[Any], base_sites: Any, base_dir: Path, where: str) -> Twinned:
    """`sites` (the spec's, anchored) with the twins of `base_sites` (the baseline spec's,
    anchored at `base_dir`, its directory); `where` names the baseline spec in errors."""
    if not isinstance(base_sites, list):
        raise SpecError(f"{where}: sites: must be a list (the baseline spec's sites, paired by name)")
    names = {entry["name"] for entry in sites if isinstance(entry, Mapping) and isinstance(entry.get("name"), str)}
    base = {entry["name"]: (entry, kind) for entry in base_sites if (kind := _kind(entry)) is not None}
    out, pairs, notes = list(sites), {}, []
    for index, entry in enumerate(sites):
        kind = _kind(entry)
        if kind is None:
            notes.append(f"baseline: sites[{index}] ({entry if isinstance(entry, str) else 'not named'}) is "
                         "not a folder or an app: the same on both sides, measured once and not compared")
            continue
        name = entry["name"]
        found = base.get(name)
        if found is None or found[1] is not kind:
            article = "an" if found is not None and found[1].name[0] in "aeiou" else "a"
            what = "no site of that name" if found is None else f"site {name} is {article} {found[1].name} site there"
            notes.append(f"baseline: site {name}: {what} in {where}: measured without a baseline (not compared)")
            continue
        twin = _twin(kinds.anchored(found[0], base_dir), kind, base_dir)
        if twin["name"] in names:
            raise SpecError(f"{where}: site {name}: its baseline twin would be named {twin['name']}, which "
                            "the spec already names: rename that site")
        app, own = twin.get("app"), entry.get("app")
        if (isinstance(app, Mapping) and isinstance(own, Mapping) and app.get("url") is not None
                and app.get("url") == own.get("url")):
            raise SpecError(f"{where}: site {name}: app.url {app['url']} is the spec's own: both sides would load "
                            "one service (run the baseline's app as a service of its own and name it there)")
        out.append(twin)
        pairs[twin["name"]] = name
    if not pairs:
        raise SpecError(f"{where}: no site pairs with the spec's (a folder or app site of the same name "
                        "in both): nothing to compare")
    return Twinned(out, pairs, notes)
