"""docs/reproductions.md is generated from its template and a committed export: a real
(short) reproduction's export regenerates its committed page exactly, an edit on either
side is caught, and a placeholder that names nothing is one line naming the template."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pagebench.analysis.reproduce import doc
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY, SEEDS
from pagebench.analysis.reproduce.doc import TemplateError
from pagebench.analysis.reproduce.export import Export
from pagebench.analysis.reproduce.scenarios import CLAIM_IMAGES, ERA, TODAY
from pagebench.core.modes import HTTP10, PIPELINING
from tests.analysis.reproduce.loads import data, fetched

#: A real `pagebench reproduce 004 --quick --export` (see fixtures/README.md) and the page
#: its template gives, committed as they were generated.
FIXTURE = Path(__file__).parent / "fixtures" / "quick-004.md"
#: The real page: checked once its export is committed (after a full reproduction).
DOCS = Path(__file__).resolve().parents[4] / "docs" / "reproductions.md"


def _export() -> Export:
    site = f"seed000-small-n{CLAIM_IMAGES}"
    loads = {(ERA, ""): [fetched(HTTP10, ms - 20, ms, site=site) for ms in (1000, 1010, 990)]
             + [fetched(PIPELINING, ms - 20, ms, site=site) for ms in (400, 405, 395)],
             (TODAY, ""): [fetched(HTTP10, ms - 20, ms, site=site) for ms in (1000, 1010, 990)]
             + [fetched(PIPELINING, ms - 20, ms, site=site) for ms in (700, 705, 695)]}
    return Export(("000",), False, {"000-latency": data(loads)}, {},
                  {"measured": "2026-11-26 16:21-16:25 UTC", "command": "pagebench reproduce 000"},
                  {("000", ERA): "cleartext | 1994 TCP", ("000", TODAY): "TLS 1.3"})


def test_placeholders_are_filled_from_the_export():
    template = ("# x\n\n{{facts}}\n\n{{variants}}\n\n{{ table }}\n\nEra {{claim:000-6-small-cut-load:era}} "
                "({{verdict:000-6-small-cut-load:era}}), today {{claim:000-6-small-cut-load:today}}.\n\n{{figures}}\n")
    made = doc.render(template, _export(), "answer")
    text = made.markdown
    assert "- measured: 2026-11-26 16:21-16:25 UTC\n- command: pagebench reproduce 000\n" in text
    assert "| seed | era | today |\n|---|---|---|\n| 000 | cleartext \\| 1994 TCP | TLS 1.3 |" in text
    assert "Era 60 % [" in text and "(reproduced), today 30 % [" in text
    row = CLAIM_BY_KEY["000-6-small-cut-load"]
    assert f"| {row.claim} | {row.paper} |" in text and "{{" not in text
    assert "fig-6-1.svg" in made.figures and "![Like the seed's figure 6-1" in text
    assert "](answer/fig-6-1.svg)" in text


@pytest.mark.parametrize(("template", "needle"), [
    ("a\n\n{{tabel}}\n", "x.md.in line 3: unknown placeholder {{tabel}}; known: facts, variants, table, figures"),
    ("{{claim:000-6-small-cut:1994}}", "x.md.in line 1: {{claim:000-6-small-cut:1994}}: no row for claim "
                                       "'000-6-small-cut' in variant '1994' (the export holds seeds 000)"),
    ("\n{{verdict:004-window:era}}", "x.md.in line 2: {{verdict:004-window:era}}: no row for claim '004-window'"),
])
def test_a_placeholder_that_names_nothing_is_one_line(template, needle):
    with pytest.raises(TemplateError) as error:
        doc.render(template, _export(), "answer", "x.md.in")
    assert str(error.value).startswith(needle)


def test_the_committed_fixture_is_what_its_real_export_generates():
    generated = doc.generate(FIXTURE)
    assert doc.differences(FIXTURE, generated) == []
    assert generated.figures  # the export draws the seed's figure


def test_an_edit_of_the_page_or_a_figure_or_a_stale_figure_is_caught(tmp_path):
    page = tmp_path / FIXTURE.name
    for path in (FIXTURE, *doc.paths(FIXTURE)[:2]):
        shutil.copy(path, tmp_path / path.name)
    shutil.copytree(doc.paths(FIXTURE)[2], doc.paths(page)[2])
    generated = doc.generate(page)
    assert doc.differences(page, generated) == []
    text = page.read_text()
    page.write_text(text.replace(" | reproduced |", " | differs |", 1))
    [found] = doc.differences(page, generated)
    assert found.startswith(f"{page}: line ") and "reproduced" in found
    page.write_text(text)
    figure = next(doc.paths(page)[2].glob("*.svg"))
    figure.write_text(figure.read_text() + " ")
    (doc.paths(page)[2] / "old.svg").write_text("<svg/>")
    assert doc.differences(page, generated) == [f"{figure}: differs",
                                                f"{doc.paths(page)[2] / 'old.svg'}: not drawn from the export (stale)"]
    written, removed = doc.write(page, generated)
    assert written[0] == page and removed == [doc.paths(page)[2] / "old.svg"]
    assert doc.differences(page, generated) == []


def test_every_placeholder_of_the_real_template_names_a_claim_and_variant_of_the_catalogue():
    template, _, figures_dir = doc.paths(DOCS)
    made = doc.render(template.read_text(), Export(SEEDS, False, {}, {}), figures_dir.name, str(template))
    assert "{{" not in made.markdown and "| no data |" in made.markdown  # nothing measured: every row, no data


@pytest.mark.skipif(not doc.paths(DOCS)[1].exists(), reason="docs/reproductions-export.json.xz is not committed yet: "
                    "the page is checked once a full reproduction's export is (docs/reproductions.md, top)")
def test_docs_reproductions_md_is_what_its_export_generates():
    assert doc.paths(DOCS)[1].stat().st_size <= 2_000_000  # issue 26: the committed export is at most 2 MB
    assert doc.differences(DOCS, doc.generate(DOCS)) == [], (
        "regenerate it: pagebench reproduce --from docs/reproductions-export.json.xz --markdown docs/reproductions.md")
