"""Realistic text and its later versions, for the seed 001 experiments (compression and
delta encoding). Pure and deterministic: the same seed gives the same bytes.

A compressor's gain depends on what it is given: random base64 padding compresses to
3/4 and a delta of it is all misses, so the text files of the built-in and generated
sites are made of English-like prose (words of a fixed vocabulary drawn with a Zipf-like
frequency, in sentences: gzip -9 keeps about a third, as with real text), CSS-like rules
and JS-like functions with comments. A later version of a file is an `edit` of it: byte
substitutions (letter for letter, digit for digit) in its text only, so that the number
and place of the changed bytes are known exactly and the HTML, CSS and JS stay valid.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

# The commonest English words, most frequent first (rank sets the Zipf weight).
_COMMON = (
    "the of and to a in is that for it as was with be by on not he this are or his from at which but have "
    "an they you were her she there been one all we their has would when if so no will more can out other "
    "into time only some could them its may then these also two than first any new like our over such "
    "about what after most made between used many where through before must well should those under each "
    "very much because same system data file server page document request response network protocol "
    "client cache time delay version change user browser text image table result results test number "
    "size transfer connection packet compression delta encoding header method value section figure "
    "performance measure measured latency bandwidth link model paper work show shows shown case cases "
    "three four per without while both however since even though every within state current during "
    "further another several large small high low long short part order point given example set "
    "difference effect approach information content resource resources proxy origin copy copies "
    "update updates modified original previous simple support supported provide provides based "
    "using use uses would might often usually typically rather reduce reduces reduced increase cost "
    "costs benefit benefits total average mean median base instance computer machine memory processor "
    "software program benchmark benchmarks run runs running compiled compiler integer floating rate "
    "ratio reference specification standard group members report reports published online web"
).split()
_ONSETS = ("b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "pr", "tr",
           "ch", "sh", "th", "gr", "cl", "br", "pl", "sp")
_NUCLEI = ("a", "e", "i", "o", "u", "ea", "ou", "io", "ai")
_CODAS = ("", "", "n", "r", "s", "t", "l", "nt", "st", "rd", "ng", "ck")
_SUFFIXES = ("", "", "", "s", "ed", "ing", "ion", "er", "ly", "ment", "al", "ity")


def _vocabulary(size: int = 1500) -> tuple[str, ...]:
    """The common words, then invented words of one to three syllables (the long tail)."""
    rng = random.Random("pagebench/vocabulary")
    words, seen = list(_COMMON), set(_COMMON)
    while len(words) < size:
        syllables = rng.choice((1, 2, 2, 2, 3, 3))
        word = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS) for _ in range(syllables))
        word += rng.choice(_SUFFIXES)
        if word not in seen and 3 <= len(word) <= 14:
            seen.add(word)
            words.append(word)
    return tuple(words)


WORDS = _vocabulary()
_WEIGHTS = tuple(itertools.accumulate((rank + 2.7) ** -1.1 for rank in range(len(WORDS))))


def _words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(WORDS, cum_weights=_WEIGHTS, k=n)


def _sentence(rng: random.Random) -> str:
    words = _words(rng, rng.randint(6, 22))
    for i in range(2, len(words) - 2):
        if rng.random() < 0.06:
            words[i] += ","
    if rng.random() < 0.08:
        words.insert(rng.randrange(1, len(words)), str(rng.choice((rng.randint(2, 99), rng.randint(1900, 2030)))))
    return words[0].capitalize() + " " + " ".join(words[1:]) + rng.choice("........?")


def prose(seed: str, n: int) -> bytes:
    """n bytes of English-like ASCII text: sentences of Zipf-distributed words. Never
    contains < > & " ' (safe as HTML text, in a comment or a string)."""
    if n <= 0:
        return b""
    rng = random.Random(f"prose/{seed}")
    parts, length = [], 0
    while length <= n:  # the joined text is length - 1 long
        sentence = _sentence(rng)
        parts.append(sentence)
        length += len(sentence) + 1
    text = " ".join(parts)[:n]
    return (text[:-1] + "." if text.endswith(" ") else text).encode()


def paragraphs(seed: str, n: int) -> bytes:
    """Exactly n bytes of HTML paragraphs of prose (`<p>...</p>` lines; n >= 9)."""
    if n < 9:
        raise ValueError(f"paragraphs: {n} bytes is too few for one <p>")
    rng = random.Random(f"paragraphs/{seed}")
    out, left, i = [], n, 0
    while left:
        size = rng.randint(300, 1500)
        if left - (size + 8) < 9:  # the last paragraph takes the rest
            size = left - 8
        out.append(b"<p>" + prose(f"{seed}/{i}", size) + b"</p>\n")
        left -= size + 8
        i += 1
    return b"".join(out)


def _ident(rng: random.Random) -> str:
    """camelCase of two words: never a keyword."""
    a, b = _words(rng, 2)
    return a + b.capitalize()


def _css_rule(rng: random.Random) -> str:
    selector = rng.choice((".", ".", "#", "")) + "-".join(_words(rng, rng.randint(1, 3)))
    if rng.random() < 0.3:
        selector += " " + rng.choice(("a", "p", "li", "span", "img", "h2", "div")) + rng.choice(("", ":hover", ""))
    props = [
        ("margin", lambda: f"{rng.choice((0, 2, 4, 8, 12, 16))}px {rng.choice((0, 4, 8, 'auto'))}"),
        ("padding", lambda: f"{rng.choice((0, 2, 4, 8, 12, 16, 24))}px"),
        ("color", lambda: f"#{rng.choice(('333', '222', '666', 'fff', '0a58ca', '1f2937', 'e5e7eb'))}"),
        ("background", lambda: f"#{rng.choice(('fff', 'f8f9fa', '123', '0d6efd', 'eee'))}"),
        ("display", lambda: rng.choice(("block", "flex", "inline-block", "none", "grid"))),
        ("font-size", lambda: f"{rng.choice((12, 13, 14, 16, 18, 20, 24, 32))}px"),
        ("line-height", lambda: rng.choice(("1.2", "1.4", "1.5", "1.6"))),
        ("border", lambda: f"1px solid #{rng.choice(('ddd', 'ccc', 'e5e7eb'))}"),
        ("border-radius", lambda: f"{rng.choice((2, 4, 6, 8))}px"),
        ("width", lambda: rng.choice(("100%", "50%", "auto", f"{rng.randint(1, 60) * 10}px"))),
        ("text-align", lambda: rng.choice(("left", "center", "right"))),
        ("position", lambda: rng.choice(("relative", "absolute", "static"))),
        ("opacity", lambda: rng.choice(("0", "0.5", "0.8", "1"))),
    ]
    chosen = rng.sample(props, rng.randint(2, 6))
    body = "".join(f"  {name}: {value()};\n" for name, value in chosen)
    return f"{selector} {{\n{body}}}\n"


def _comment(rng: random.Random, seed: str, indent: str = "") -> str:
    text = prose(f"{seed}/{rng.random()}", rng.randint(40, 240)).decode()
    return f"{indent}/* {text} */\n"


def _js_function(rng: random.Random, seed: str) -> str:
    name, args = _ident(rng), [_ident(rng) for _ in range(rng.randint(1, 3))]
    lines = [_comment(rng, seed), f"function {name}_{rng.randint(1, 999)}({', '.join(args)}) {{\n"]
    for _ in range(rng.randint(2, 7)):
        var = _ident(rng)
        kind = rng.random()
        if kind < 0.3:
            lines.append(f"  var {var} = {rng.choice(args)} + {rng.randint(0, 64)};\n")
        elif kind < 0.55:
            lines.append(f"  if ({rng.choice(args)} === null) {{ return {rng.choice(('false', 'null', '0'))}; }}\n")
        elif kind < 0.75:
            lines.append(_comment(rng, seed, "  "))
        else:
            lines.append(f"  var {var} = {rng.choice(args)}.{_ident(rng)}({rng.choice(args)}, {rng.randint(0, 9)});\n")
    lines.append(f"  return {rng.choice(args)};\n}}\n")
    return "".join(lines)


def _code(seed: str, n: int, unit: Callable[[random.Random], str]) -> bytes:
    """Units of code then one comment, exactly n bytes."""
    rng = random.Random(f"code/{seed}")
    out, left = [], n
    while True:
        piece = unit(rng)
        if left - len(piece) < 120:
            break
        out.append(piece)
        left -= len(piece)
    if left < 7:
        return ("".join(out) + "\n" * left).encode()
    out.append("/* " + prose(f"{seed}/tail", left - 7).decode() + " */\n")
    return "".join(out).encode()


def css_text(seed: str, n: int) -> bytes:
    """Exactly n bytes of CSS-like rules (selectors that match nothing) and comments."""
    return _code(seed, n, lambda rng: (_comment(rng, seed) if rng.random() < 0.15 else "") + _css_rule(rng))


def js_text(seed: str, n: int) -> bytes:
    """Exactly n bytes of JS-like function declarations (never called) with comments."""
    return _code(seed, n, lambda rng: _js_function(rng, seed))


# Later versions ------------------------------------------------------------------------------

SPREADS = ("one", "scattered")
#: A scattered edit is runs of about this many bytes, spread evenly over the text.
RUN_BYTES = 4
_TAG = re.compile(rb"<[^>]*>|&[#A-Za-z0-9]+;")
_COMMENT = re.compile(rb"/\*.*?\*/", re.S)
_EDITABLE = re.compile(rb"[A-Za-z0-9]")


@dataclass(frozen=True)
class Edited:
    """A later version of a body: the same length, `positions` (sorted) changed."""

    body: bytes
    positions: tuple[int, ...]

    def runs(self) -> list[tuple[int, int]]:
        """The changed bytes as (first, last) spans of adjacent positions."""
        spans: list[tuple[int, int]] = []
        for p in self.positions:
            if spans and spans[-1][1] == p - 1:
                spans[-1] = (spans[-1][0], p)
            else:
                spans.append((p, p))
        return spans


def editable(body: bytes, code: bool = False) -> list[int]:
    """Where an edit may change a byte: letters and digits of the text, that is outside
    tags and entities (HTML, plain text) or, in CSS and JS (`code`), inside /* comments */
    only, so that no selector, property, keyword, string or URL changes."""
    if code:
        spans = [(m.start() + 2, m.end() - 2) for m in _COMMENT.finditer(body)]
    else:
        spans, last = [], 0
        for m in _TAG.finditer(body):
            spans.append((last, m.start()))
            last = m.end()
        spans.append((last, len(body)))
    return [m.start() for start, end in spans for m in _EDITABLE.finditer(body, start, end)]


def _substitute(byte: int, rng: random.Random) -> int:
    """Another byte of the same class: lower, upper case letter or digit."""
    for first, count in ((ord("a"), 26), (ord("A"), 26), (ord("0"), 10)):
        if first <= byte < first + count:
            return first + (byte - first + rng.randint(1, count - 1)) % count
    raise ValueError(f"edit: byte {byte} is not a letter or digit")


def edit(body: bytes, fraction: float, spread: str, seed: str, code: bool = False) -> Edited:
    """`body` with exactly max(1, round(fraction x len(body))) bytes substituted among its
    `editable` ones: in one contiguous run of them (`one`) or in runs of about RUN_BYTES
    spread evenly over the whole text (`scattered`)."""
    if spread not in SPREADS:
        raise ValueError(f"edit: spread must be one of {', '.join(SPREADS)} (got {spread!r})")
    if not 0 < fraction <= 1:
        raise ValueError(f"edit: fraction must be in (0, 1] (got {fraction})")
    count = max(1, round(fraction * len(body)))
    places = editable(body, code)
    if count > len(places):
        raise ValueError(f"edit: {fraction:g} of {len(body)} bytes is {count} bytes but only {len(places)} "
                         "are editable text")
    rng = random.Random(f"edit/{seed}/{fraction}/{spread}")
    if spread == "one":
        start = rng.randrange(len(places) - count + 1)
        chosen = places[start:start + count]
    else:
        runs, spare = -(-count // RUN_BYTES), len(places) - count
        chosen = []
        for i in range(runs):  # run i lies in its own segment of the places, in order
            first, end = i * count // runs, (i + 1) * count // runs
            segment = places[first + i * spare // runs:end + (i + 1) * spare // runs]
            start = rng.randrange(len(segment) - (end - first) + 1)
            chosen += segment[start:start + end - first]
    out = bytearray(body)
    for p in chosen:
        out[p] = _substitute(out[p], rng)
    return Edited(bytes(out), tuple(chosen))
