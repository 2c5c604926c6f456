"""The frame the HTML pages share: a whole document, sections, figures and legends, cells
escaped."""

from __future__ import annotations

from pagebench.analysis.report.page import CSS, DASH, cell, chip, document, figure, legend, number, section


def test_a_document_is_whole_with_its_css_and_says_its_viewport_when_asked():
    page = document("a <b> run", ["<p>one</p>", "<p>two</p>"])
    assert page.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport"')
    assert "<title>a &lt;b&gt; run</title>" in page and f"<style>{CSS}</style>" in page
    assert page.endswith("<body><main><p>one</p><p>two</p></main></body></html>\n")
    assert '<meta charset="utf-8"><title>' in document("t", [], viewport=False)


def test_sections_figures_and_legends():
    assert section("A & B", "<p/>", "ab") == '<section id="ab"><h2>A &amp; B</h2><p/></section>'
    drawn = figure("rtt", "<svg/>", "caption", legend([(chip("#fff", 0.5), "x")]), condition='h2 "3g"')
    assert drawn == ('<figure class="chart" data-chart="rtt" data-condition="h2 &quot;3g&quot;"><svg/>'
                     '<ul class="legend"><li><span class="chip" style="background:#fff;opacity:0.5"></span>x</li>'
                     "</ul><figcaption>caption</figcaption></figure>")


def test_cells_are_escaped_and_missing_values_a_dash():
    assert cell("<td>") == "&lt;td&gt;" and cell(None) == DASH == number(None)
    assert number(300.41239) == "300.412"
