"""docs/reproductions.md, generated: a committed template (`DOC.in`) filled from an export
(`export`), so every number the page states comes from the runs it reports, and a test
can regenerate the page and fail when it differs from the committed one.

For a doc `X.md`: its template is `X.md.in`, its export `X-export.json.xz`, its figures
`X/<name>.svg`. The template is Markdown with placeholders:

- `{{facts}}`: the runs' facts as a list (`verdicts.facts`);
- `{{variants}}`: the table of what each variant is, per seed, as run;
- `{{table}}`: the answer, one row per claim and variant (`verdicts.markdown`);
- `{{figures}}`: the seeds' figures, each an image (`X/<name>.svg`) and its caption;
- `{{claim:KEY:VARIANT}}`: a claim's measured value as the table shows it ("52 % [45, 64]");
- `{{verdict:KEY:VARIANT}}`: its verdict ("differs").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pagebench.analysis.reproduce import verdicts
from pagebench.analysis.reproduce.claims import claims_of
from pagebench.analysis.reproduce.export import Export, ExportError, read
from pagebench.core.errors import PagebenchError

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
KNOWN = "facts, variants, table, figures, claim:KEY:VARIANT, verdict:KEY:VARIANT"


class TemplateError(PagebenchError):
    """A template placeholder that names nothing this export holds."""


@dataclass(frozen=True)
class Doc:
    """A generated doc: its Markdown and its figures' SVGs by file name."""

    markdown: str
    figures: dict[str, str]


def paths(doc: Path) -> tuple[Path, Path, Path]:
    """A doc's template, export and figure directory (see the module's docstring)."""
    return doc.with_name(doc.name + ".in"), doc.with_name(f"{doc.stem}-export.json.xz"), doc.with_name(doc.stem)


def render(template: str, export: Export, figures_dir: str, where: str = "template") -> Doc:
    """The doc from its template and an export; `figures_dir` is the figures' directory as
    the doc links it. A placeholder that names nothing (an unknown one, a claim or
    variant the export has no row for) is a TemplateError naming `where` and its line."""
    rows = verdicts.evaluate(claims_of(export.seeds), export.data, export.levels)
    by_key = {(row.claim.key, row.variant): row for row in rows}
    drawn = verdicts.figures(export.data)
    whole = {
        "facts": "\n".join(f"- {key}: {value}" for key, value in export.facts.items()),
        "variants": _variants(export),
        "table": verdicts.markdown(rows).rstrip("\n"),
        "figures": "\n\n".join(f"![{f.caption}]({figures_dir}/{f.name}.svg)\n\n*{f.caption}*" for f in drawn),
    }

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in whole:
            return whole[name]
        kind, _, rest = name.partition(":")
        key, _, variant = rest.rpartition(":")
        line = template.count("\n", 0, match.start()) + 1
        if kind not in ("claim", "verdict") or not key:
            raise TemplateError(f"{where} line {line}: unknown placeholder {{{{{name}}}}}; known: {KNOWN}")
        row = by_key.get((key, variant))
        if row is None:
            raise TemplateError(f"{where} line {line}: {{{{{name}}}}}: no row for claim {key!r} in variant "
                                f"{variant!r} (the export holds seeds {', '.join(export.seeds)})")
        return row.value() if kind == "claim" else row.verdict

    return Doc(PLACEHOLDER.sub(fill, template), {f"{f.name}.svg": f.svg for f in drawn})


def _variants(export: Export) -> str:
    """What each variant is, per seed, as the runs had it: a Markdown table."""
    seeds = [seed for seed in export.seeds if any(s == seed for s, _ in export.variants)]
    names = list(dict.fromkeys(variant for _, variant in export.variants))
    lines = ["| seed | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    lines += ["| " + " | ".join([seed] + [export.variants.get((seed, v), "—").replace("|", "\\|") for v in names])
              + " |" for seed in seeds]
    return "\n".join(lines)


def generate(doc: Path, source: Path | None = None) -> Doc:
    """The doc `doc` as its template and an export (`source`, else the doc's own) make it."""
    template, own, figures_dir = paths(doc)
    try:
        text = template.read_text(encoding="utf-8")
    except OSError as error:
        raise ExportError(f"{template}: {error.strerror or error} (the template of {doc})") from None
    return render(text, read(source or own), figures_dir.name, str(template))


def write(doc: Path, generated: Doc) -> tuple[list[Path], list[Path]]:
    """Write the doc and its figures (the directory made if needed), and remove the SVGs
    there that the export no longer draws (the directory is the doc's, generated): the
    paths written, and those removed."""
    figures_dir = paths(doc)[2]
    doc.write_text(generated.markdown, encoding="utf-8")
    if generated.figures:
        figures_dir.mkdir(exist_ok=True)
    for name, svg in generated.figures.items():
        (figures_dir / name).write_text(svg, encoding="utf-8")
    stale = sorted(p for p in figures_dir.glob("*.svg") if p.name not in generated.figures)
    for path in stale:
        path.unlink()
    return [doc, *(figures_dir / name for name in generated.figures)], stale


def differences(doc: Path, generated: Doc) -> list[str]:
    """Where the committed doc and its figures differ from `generated`, one line each
    (a figure on disk the export does not draw is stale): empty when they agree."""
    figures_dir = paths(doc)[2]
    found = []
    on_disk = doc.read_text(encoding="utf-8") if doc.exists() else None
    if on_disk != generated.markdown:
        found.append(f"{doc}: " + ("missing" if on_disk is None else _first_difference(on_disk, generated.markdown)))
    for name, svg in generated.figures.items():
        path = figures_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != svg:
            found.append(f"{path}: {'missing' if not path.exists() else 'differs'}")
    stale = sorted(p.name for p in figures_dir.glob("*.svg")) if figures_dir.is_dir() else []
    found += [f"{figures_dir / name}: not drawn from the export (stale)" for name in stale
              if name not in generated.figures]
    return found


def _first_difference(old: str, new: str) -> str:
    for number, (a, b) in enumerate(zip(old.splitlines(), new.splitlines()), 1):
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            start = max(at - 30, 0)
            return f"line {number} differs at column {at + 1}: {a[start:at + 40]!r} -> {b[start:at + 40]!r}"
    return f"{len(old.splitlines())} lines committed, {len(new.splitlines())} generated"
