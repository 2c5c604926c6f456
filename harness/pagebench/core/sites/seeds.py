"""The seeds' pages, rebuilt as the papers describe them (requests = files fetched by one
cold load, bytes = response bodies):

- `seed000-small-n{N}`, `seed000-large-n{N}`, N = 1..40 (Padmanabhan & Mogul 1994,
  figures 6-1/6-2): one origin `www.seed000.test`; `/` (HTML) with N inline PNGs of
  exactly 2544 (small, 64x48) or 45566 (large, 320x240) bytes, each distinct
  (`/img/small-01.png` ...). N + 1 requests.
- `seed001-a` .. `seed001-d` (Mogul, Douglis, Feldmann & Krishnamurthy 1997, table
  6-3): one origin `www.seed001.test`, one HTML page `/` and nothing else, of exactly
  17,545 (A), 6,017 (B), 374,144 (C) and 97,125 (D) bytes, compressing as the seed's did
  (gzip -9 within 15 % of its 6,177, 2,033, 39,200 and 10,223 bytes): A and B are
  w3.org-like prose pages with link lists, C and D SPEC CPU95 results (per system, tables
  of run times and ratios, a configuration table). Versions 2, 3, 4 edit 0.1 %, 1 % and
  10 % of the page's bytes, scattered (`with_versions`); 1 request.
- `seed002` (the 2013 SPDY testbed report, Appendix A): the report's page rebuilt
  over two origins. `www.seed002.test`: `/` (HTML), `/img/soe.gif` (6250 B),
  `/img/a_flores.jpg` (1,184,000 B), `/img/mypic_afs.jpg` (1,046,000 B) and the "Picture
  by Nikon!" photo `/img/nikon.jpg` (sized so the page totals 9,400,000 B);
  `images.seed002.test` stands in for Google's `/images/srpr/logo11w.png` (14,022 B,
  538x190). 6 requests, 9.4 MB: the report measured 9.32-9.79 MB per load on the wire.
  Photo sizes are a reconstruction: the report gives the HTML and per-load totals only.
"""

from __future__ import annotations

import random

from pagebench.core.sites.media import gif, jpeg, png
from pagebench.core.sites.model import GeneratedSite, SiteError
from pagebench.core.sites.pages import html_page, manifest
from pagebench.core.sites.text import WORDS, prose
from pagebench.core.sites.versions import with_versions


# seed000: Padmanabhan & Mogul 1994 ---------------------------------------------------

SEED000_SIZES = {"small": (2544, 64, 48), "large": (45566, 320, 240)}
SEED000_MAX = 40


def seed000(kind: str, n: int) -> GeneratedSite:
    """Padmanabhan & Mogul's test page: N images of the small or large size."""
    if kind not in SEED000_SIZES or not 1 <= n <= SEED000_MAX:
        raise SiteError(f"seed000: kind must be small or large and n 1..{SEED000_MAX} (got {kind}, {n})")
    size, width, height = SEED000_SIZES[kind]
    host = "www.seed000.test"
    files = {}
    tags = []
    for i in range(1, n + 1):
        path = f"/img/{kind}-{i:02d}.png"
        files[host + path] = png(size, width, height, f"seed000/{kind}/{i}")
        tags.append(f'<img src="{path}" width="{width}" height="{height}" alt="image {i}">')
    files[host + "/index.html"] = html_page(
        f"seed000: {n} inline images of {size} bytes",
        [],
        ["<h1>Improving HTTP Latency: test document</h1>",
         f"<p>{n} inline images of {size} bytes each (Padmanabhan &amp; Mogul 1994, "
         f"figure 6-{1 if kind == 'small' else 2}).</p>", *tags],
    )
    return GeneratedSite(manifest(f"seed000-{kind}-n{n}", [host]), files)


# seed002: the 2013 SPDY testbed report ----------------------------------------------

SEED002_TOTAL = 9_400_000


def seed002() -> GeneratedSite:
    """The 2013 SPDY testbed report's two-origin photo page (9.4 MB)."""
    www, google = "www.seed002.test", "images.seed002.test"
    logo = f"//{google}/images/srpr/logo11w.png"
    html = html_page("SPDY Server", [], [
        '<img src="img/soe.gif" width="200" height="80" alt="UNM School of Engineering">', "<hr>",
        "<center>", "<h1>SPDY Server</h1>", "Welcome to our ECE540 SPDY test server!",
        f'Link to <a href="//{www}/">HTTP server</a>', "</center>",
        "Enable TCP Connection to Google <br>", f'<img src="{logo}" width="300" alt="Google">', "<hr>",
        "<h3>Introduction</h3>", "<p>" + SEED002_INTRO + "</p>",
        "<h3>Objective</h3>", "<p>" + SEED002_OBJECTIVE + "</p>",
        "<h3>Group Members</h3>",
        '<img src="img/a_flores.jpg" width="300" alt="Alejandro Flores"><br>', "<b>Alejandro Flores</b><br>",
        "Email alejflor@unm.edu<br>Degree seeking: MS in CompE, CompNet&amp;Sys<br>Advisor: TBD<br>",
        "<p>" + SEED002_BIO1 + "</p>",
        "Mustafa Al Mashhadani<br>Email malmashhadani@unm.edu<br>Degree seeking: MS in CompE, "
        "CompNet&amp;Sys<br>Advisor: Dr. W. Shu<br>",
        '<img src="img/mypic_afs.jpg" width="300" alt="Husain Al Yusuf"><br>', "Husain Al Yusuf<br>",
        "Email halyusuf@unm.edu<br>Degree seeking: MS in CompE, CompNet&amp;Sys<br>Advisor: Dr. W. Shu<br>",
        "<h3>Load Test</h3>", "<center>", '<img src="img/nikon.jpg" width="600" alt="Load test photo"><br>',
        "Picture by Nikon!", "</center><br><br>", "<hr>", "<center>Server Powered by Ubuntu</center>",
    ])
    files = {
        f"{www}/index.html": html,
        f"{www}/img/soe.gif": gif(6250, "seed002/soe"),
        f"{google}/images/srpr/logo11w.png": png(14022, 538, 190, "seed002/logo11w"),
        f"{www}/img/a_flores.jpg": jpeg(1_184_000, 2048, 1536, "seed002/a_flores"),
        f"{www}/img/mypic_afs.jpg": jpeg(1_046_000, 2048, 1536, "seed002/mypic_afs"),
    }
    files[f"{www}/img/nikon.jpg"] = jpeg(SEED002_TOTAL - sum(map(len, files.values())), 3008, 2000,
                                         "seed002/nikon")
    return GeneratedSite(manifest("seed002", [www, google]), files)


SEED002_INTRO = (
    "WEB applications are dominating the business industry with all its varieties. Customer satisfaction "
    "while surfing any organization's website is one of the most important factors that companies are "
    "looking after. As webpages starts to become more advance technologists for web surfing have failed "
    'to adapt and meet business requirements. In 2012, Google launched a new protocol called "SPDY" as an '
    "upgrade to HTTP 1.1. In this paper we propose to explore this new protocol and compare its "
    "performance with existing technologies.")
SEED002_OBJECTIVE = (
    'The objective of this study is to measure the performance of using "SPDY" and comparing it to the '
    "previous HTTP1.1 protocol. Our focal point will be on the web page downloading time, which is in "
    "another words the throughput achieved with SPDY in contrast with HTTP1.1. Another interesting feature "
    "of SPDY that will be examine in our study is the SPDY's TCP connections behavior in comparison with HTTP1.1.")
SEED002_BIO1 = (
    "I am originally from El Paso, TX. I graduated from New Mexico State University in 2005 with a "
    "Bachelor's Degree in Computer Engineering Technology. Since then, I have been working for both UNM "
    "and NMSU in the area of network design, server administration and application development.")


# seed001: Mogul et al. 1997 ----------------------------------------------------------

#: The seed's files A-D (table 6-3): HTML bytes and their gzip -9 size.
SEED001_FILES = {"a": (17_545, 6_177), "b": (6_017, 2_033), "c": (374_144, 39_200), "d": (97_125, 10_223)}
#: Versions 2-4 edit 0.1 %, 1 % and 10 % of the page's bytes, scattered.
SEED001_EDITS = (0.001, 0.01, 0.1)
SPEC_INT95 = (("099.go", 4600), ("124.m88ksim", 1900), ("126.gcc", 1700), ("129.compress", 1800),
              ("130.li", 1900), ("132.ijpeg", 2400), ("134.perl", 1900), ("147.vortex", 2700))
SPEC_FP95 = (("101.tomcatv", 3700), ("102.swim", 8600), ("103.su2cor", 1400), ("104.hydro2d", 2400),
             ("107.mgrid", 2500), ("110.applu", 2200), ("125.turb3d", 4100), ("141.apsi", 2100),
             ("145.fpppp", 9600), ("146.wave5", 3000))
SPEC_SYSTEMS = (  # vendor, model family, CPU, operating system, compiler
    ("Digital Equipment Corp.", "AlphaStation", "Alpha 21164", "Digital UNIX V4.0", "DEC C V5.2"),
    ("Hewlett-Packard Company", "HP 9000 Model", "PA-8000", "HP-UX 10.20", "HP C/ANSI C A.10.32"),
    ("IBM Corporation", "RS/6000 Model", "PowerPC 604e", "AIX 4.2", "IBM C Set++ 3.1"),
    ("Silicon Graphics", "Origin200", "MIPS R10000", "IRIX64 6.4", "MIPSpro 7.1"),
    ("Sun Microsystems", "Ultra Enterprise", "UltraSPARC", "Solaris 2.5.1", "SunPro C 4.2"),
    ("Intel Corporation", "Alder System", "Pentium Pro", "UnixWare 2.1", "Intel Reference C 2.3"),
)


def _w3_link(rng: random.Random) -> str:
    words, kinds = WORDS, ("draft", "note", "report", "HTML", "PostScript")
    return (f'<li><a href="/Protocols/HTTP/{rng.choice(words[:60])}/{rng.choice(words[:200])}.html">'
            f'{rng.choice(words[:200]).capitalize()} {rng.choice(words[:200])}</a> '
            f'<em>(<a href="/Protocols/HTTP/{rng.choice(words[:60])}/">{rng.choice(kinds)}</a>)</em></li>')


def _w3_body(letter: str, size: int) -> list[str]:
    """A w3.org-like page of about `size` bytes: a navigation list, sections of prose with
    links (A and B)."""
    rng = random.Random(f"seed001/{letter}")
    spread = (500, 1400) if letter == "a" else (100, 300)  # paragraph sizes: A has longer ones
    lines = ['<p><a href="/"><img src="data:," alt="W3C" width="72" height="48"></a> '
             '<a href="/Protocols/">Protocols</a> | <a href="/Consortium/">Consortium</a></p>',
             f"<h1>{prose(f'seed001/{letter}/h1', 40).decode().rstrip('.')}</h1>"]
    total, i = sum(len(line) + 1 for line in lines), 0
    while True:
        words = WORDS
        section = [f'<h2><a name="s{i}">{i + 1}. {rng.choice(words).capitalize()} {rng.choice(words)}</a></h2>']
        section += ["<p>" + prose(f"seed001/{letter}/{i}/{j}", rng.randint(*spread)).decode() + "</p>"
                    for j in range(rng.randint(1, 2))]
        section += ["<ul>", *(_w3_link(rng) for _ in range(rng.randint(3, 10))), "</ul>"]
        total += sum(len(line) + 1 for line in section)
        if total > size - 350:  # html_page's frame, the rest in paragraphs
            return lines
        lines += section
        i += 1


def _spec_body(letter: str, size: int) -> list[str]:
    """SPEC CPU95 results pages of about `size` bytes: per system, a heading, the integer
    and floating-point tables of run times and ratios, and its configuration (C and D)."""
    rng = random.Random(f"seed001/{letter}")
    lines = ["<h1>SPEC CPU95 Results</h1>", "<p>" + prose(f"seed001/{letter}/intro", 400).decode() + "</p>"]
    total, n = sum(len(line) + 1 for line in lines), 0
    while True:
        vendor, family, cpu, system, compiler = rng.choice(SPEC_SYSTEMS)
        mhz = rng.choice((133, 150, 166, 180, 200, 233, 250, 266, 300, 333, 400, 500))
        speed = mhz / 40 * rng.uniform(0.7, 1.3)
        model = f"{family} {rng.randint(2, 9)}{rng.randint(0, 99):02d} ({mhz} MHz)"
        block = [f'<hr><h2><a name="r{n}">{vendor} {model}</a></h2>']
        for kind, rows in (("int", SPEC_INT95), ("fp", SPEC_FP95)):
            block += ['<table border="1" cellpadding="3">',
                      "<tr><th>Benchmark</th><th>Reference Time</th><th>Base Run Time</th><th>Base Ratio</th>"
                      "<th>Run Time</th><th>Ratio</th></tr>"]
            for bench, ref in rows:
                base = speed * rng.uniform(0.8, 1.2)
                peak = base * rng.uniform(1.0, 1.15)
                block.append(f'<tr><td>{bench}</td><td align="right">{ref}</td><td align="right">{ref / base:.0f}</td>'
                             f'<td align="right">{base:.2f}</td><td align="right">{ref / peak:.0f}</td>'
                             f'<td align="right">{peak:.2f}</td></tr>')
            block += [f'<tr><td colspan="3">SPEC{kind}_base95</td><td align="right">{speed:.2f}</td>'
                      f'<td colspan="2">&nbsp;</td></tr>', "</table>"]
        block += ["<p>Notes: " + prose(f"seed001/{letter}/{n}", rng.randint(100, 300)).decode() + "</p>",
                  '<table border="0" cellpadding="2">',
                  *(f"<tr><td>{key}</td><td>{value}</td></tr>" for key, value in (
                      ("Hardware Vendor:", vendor), ("Model Name:", f"{family} {mhz}"), ("CPU:", f"{mhz} MHz {cpu}"),
                      ("Number of CPUs:", "1"), ("Primary Cache:", "8KBI+8KBD on chip"),
                      ("Secondary Cache:", f"{rng.choice((96, 256, 512, 1024, 2048))}KB(I+D)"),
                      ("Memory:", f"{rng.choice((64, 128, 256, 512))}MB"), ("Operating System:", system),
                      ("Compiler:", compiler), ("Tested by:", vendor),
                      ("Test Date:", f"{rng.choice(('Jan', 'Mar', 'May', 'Jul', 'Sep', 'Nov'))}-96"))),
                  "</table>"]
        total += sum(len(line) + 1 for line in block)
        if total > size - 350:
            return lines
        lines += block
        n += 1


def seed001(letter: str) -> GeneratedSite:
    """One of the seed's files A-D, with versions 2-4 edited 0.1 %, 1 % and 10 %."""
    if letter not in SEED001_FILES:
        raise SiteError(f"seed001: file must be one of a, b, c, d (got {letter!r})")
    size, _ = SEED001_FILES[letter]
    host = "www.seed001.test"
    body = (_w3_body if letter in "ab" else _spec_body)(letter, size)
    html = html_page(f"seed001 file {letter.upper()}", [], body, size, f"seed001/{letter}/fill")
    site = GeneratedSite(manifest(f"seed001-{letter}", [host]), {f"{host}/index.html": html})
    return with_versions(site, SEED001_EDITS, "scattered", 1.0, f"seed001-{letter}")

