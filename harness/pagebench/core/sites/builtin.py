"""The built-in sites, as one table: every name a spec may use for one, and the generator
that makes it (the seeds' pages, `seeds.py`, and seed 001's real page history, `history.py`; the
present-day page, `modern.py`; the twins that differ only in how they paint, `paint.py`).

One table, so the list of names (`builtin_sites`), the lookup (`builtin`) and what the
site kinds say about built-in names (`kinds.py`) cannot disagree. Generators are pure and
deterministic: a site is made when asked for, the same bytes every time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from pagebench.core.sites import history
from pagebench.core.sites.model import GeneratedSite, SiteError
from pagebench.core.sites.modern import modern
from pagebench.core.sites.paint import VARIANTS, paint
from pagebench.core.sites.seeds import SEED000_MAX, SEED000_SIZES, SEED001_FILES, seed000, seed001, seed002

#: name -> the generator of that built-in site.
CATALOGUE: Mapping[str, Callable[[], GeneratedSite]] = {
    **{f"seed000-{kind}-n{n}": partial(seed000, kind, n) for kind in SEED000_SIZES
       for n in range(1, SEED000_MAX + 1)},
    **{f"seed001-{letter}": partial(seed001, letter) for letter in SEED001_FILES},
    **{name: partial(history.pair, *history.pair_of(name)) for name in history.pair_names()},
    "seed002": seed002,
    "modern": modern,
    **{f"paint-{variant}": partial(paint, variant) for variant in VARIANTS},
}
#: How the built-in names read in a message listing what a spec may name.
HINT = (f"built-in: seed000-{{small,large}}-n1..{SEED000_MAX}, seed001-{{a,b,c,d}}, "
        f"{history.PREFIX}<page>-2..{history.INSTANCES}, seed002, modern, paint-{{progressive,at-end}}")


def builtin_sites() -> tuple[str, ...]:
    """Every built-in site name."""
    return tuple(CATALOGUE)


def builtin(name: str) -> GeneratedSite:
    """Generate a built-in site by name (pure)."""
    make = CATALOGUE.get(name)
    if make is None:
        raise SiteError(f"unknown site {name!r}; {HINT}")
    return make()
