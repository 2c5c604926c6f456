"""The shop's front-end build: src/ -> static-build/, and the catalogue the API serves.

    python build.py           # writes static-build/ and catalogue.json
    python build.py --check   # exit 1 if the committed files are not what it writes

Deterministic (a seeded generator, no clock), so the committed build is reproducible.
What a team's bundler would produce, in size and shape: one JavaScript bundle of about
200 KB (a generated library of small minified-style modules and a message catalogue,
then src/main.js) that gzip shrinks about 3.5 times, as it does real minified code; a
stylesheet with generated utility classes; one PNG per product (about 8 KB each); and
content-hashed names under /assets/, so the app can cache them for a year. The build
also carries a snapshot of the API's answer (api/products), so that the folder alone is
a working site (the static variant's spec, pagebench-static.yaml)."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import struct
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
OUT = HERE / "static-build"
CATALOGUE = HERE / "catalogue.json"
SEED = 2026
PRODUCTS = 12
#: Modules of the generated library, and messages per language of its catalogue.
MODULES = 340
MESSAGES = 160
LANGUAGES = ("en", "de", "fr", "es", "nl")

WORDS = ("oak linen stone copper glass wool cedar clay brass slate maple cotton paper iron ash olive "
         "salt river field harbour winter summer morning evening garden kitchen table chair lamp bowl "
         "cup plate board basket blanket candle mirror shelf stool vase jug tray hook rail crate").split()
#: JavaScript's reserved words a short generated name could spell.
RESERVED = frozenset({"do", "if", "in", "of"})
SYLLABLES = ("ka lo mi re sa tu ven dor pel ashi gri mon tel bra suo nik zer qua fen lio hap rud "
             "ost im vel char den ul tro bek sin").split()
ACTIONS = ("add remove update render format parse merge split resolve validate compute attach detach "
           "mount notify schedule flush observe measure encode decode").split()


def ident(rng: random.Random) -> str:
    """A minifier's short name: one or two letters, sometimes a digit."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$"
    while True:
        name = rng.choice(letters) + rng.choice(letters) * rng.randint(0, 1)
        name += str(rng.randint(0, 9)) if rng.random() < 0.2 else ""
        if name not in RESERVED:
            return name


def params(rng: random.Random) -> list[str]:
    """Three distinct parameter names, none of the shapes' own (x, i)."""
    names: list[str] = []
    while len(names) < 3:
        name = ident(rng)
        if name not in names and name not in ("x", "i"):
            names.append(name)
    return names


def module(rng: random.Random, index: int) -> str:
    """One module of the library: a few functions of the shapes minified code has."""
    key = f"{rng.choice(ACTIONS)}{rng.choice(WORDS).capitalize()}"
    n = rng.randint(2, 64)
    shapes = [
        lambda a, b, c, d: f"function {a}({b},{c}){{var {d}={b}.length,i=0;for(;i<{d};i++)if({b}[i]==={c})return i;return-1}}",
        lambda a, b, c, d: (f"function {a}({b}){{return null=={b}?\"\":String({b}).replace(/[&<>\"]/g,function({c})"
                            f"{{return\"&#\"+{c}.charCodeAt(0)+\";\"}})}}"),
        lambda a, b, c, d: f"function {a}({b},{c}){{if(!({b} instanceof {c}))throw new TypeError(\"Cannot call {key} as a function ({index})\")}}",
        lambda a, b, c, d: f"var {a}=function({b}){{var {c}={{}};return Object.keys({b}).forEach(function({d}){{{c}[{d}]={b}[{d}]*{n}}}),{c}}}",
        lambda a, b, c, d: f"function {a}({b},{c},{d}){{return {b}<{c}?{c}:{b}>{d}?{d}:{b}}}",
        lambda a, b, c, d: f"const {a}=({b},{c})=>{b}.reduce(({d},x)=>{d}+(x[{c}]||0),{n % 7})",
        lambda a, b, c, d: f"function {a}({b}){{return new Promise(function({c}){{setTimeout({c},{b}||{n})}})}}",
        lambda a, b, c, d: (f"var {a}={{name:\"{key}\",version:\"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}\","
                            f"size:{rng.randint(100, 99999)},flags:[{','.join(str(rng.randint(0, 255)) for _ in range(rng.randint(2, 9)))}]}}"),
        lambda a, b, c, d: (f"function {a}({b}){{switch({b}){{case {n}:return\"{rng.choice(WORDS)}\";case {n + 1}:return\"{rng.choice(WORDS)}\";"
                            f"default:return\"{rng.choice(WORDS)}-\"+{b}}}}}"),
        lambda a, b, c, d: f"class {a}{{constructor({b}){{this.{c}={b};this.{d}=[]}}{key}({b}){{return this.{d}.push({b}),this}}}}",
    ]
    chosen = rng.sample(range(len(shapes)), rng.randint(3, 6))
    names = [f"{ident(rng)}{k}" for k in range(len(chosen))]  # distinct within the module
    body = ";".join(shapes[s](name, *params(rng)) for s, name in zip(chosen, names))
    return f"/*{index}*/{index}:function(module,exports,require){{{body};module.exports={{{key}:{names[0]}}}}}"


def sentence(rng: random.Random, words: tuple[str, ...]) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(4, 14))).capitalize() + "."


def javascript(rng: random.Random, main: str) -> str:
    """The bundle: the generated library, a message catalogue, the page's own script."""
    lexicon = {lang: tuple("".join(rng.sample(SYLLABLES, rng.randint(1, 3))) for _ in range(300))
               for lang in LANGUAGES[1:]}
    lexicon["en"] = WORDS
    keys = [f"{rng.choice(WORDS)}.{rng.choice(ACTIONS)}.{i}" for i in range(MESSAGES)]
    messages = {lang: dict(zip(keys, (sentence(rng, lexicon[lang]) for _ in keys))) for lang in LANGUAGES}
    messages["en"].update({"cart.add": "Add to cart", "catalogue.count": "{n} products",
                           "catalogue.error": "Could not load the products"})
    modules = ",\n".join(module(rng, i) for i in range(MODULES))
    return (
        "/*! shop bundle: generated by examples/shop/build.py (pagebench's example app) */\n"
        f"(function(){{var modules={{\n{modules}\n}},cache={{}};"
        "function require(i){if(cache[i])return cache[i].exports;var m=cache[i]={exports:{}};"
        "return modules[i](m,m.exports,require),m.exports}"
        f"var messages={json.dumps(messages, separators=(',', ':'), ensure_ascii=False)};"
        "var lang=(document.documentElement.lang||\"en\").slice(0,2);"
        "window.Shop={require:require,t:function(k){return(messages[lang]||messages.en)[k]||messages.en[k]||k}};"
        "})();\n" + main
    )


def stylesheet(rng: random.Random, own: str) -> str:
    """src/style.css and the utility classes a CSS framework's build would emit."""
    lines = [own]
    for prop, short in (("margin", "m"), ("padding", "p")):
        for side, suffix in (("", ""), ("-top", "t"), ("-right", "r"), ("-bottom", "b"), ("-left", "l")):
            for step in range(13):
                lines.append(f".{short}{suffix}-{step}{{{prop}{side}:{step * 0.25:g}rem}}")
    for name in WORDS:
        red, green, blue = (rng.randint(0, 255) for _ in range(3))
        lines.append(f".text-{name}{{color:#{red:02x}{green:02x}{blue:02x}}}")
        lines.append(f".bg-{name}{{background-color:#{blue:02x}{red:02x}{green:02x}}}")
    return "\n".join(lines) + "\n"


def png(rng: random.Random, width: int = 240, height: int = 180) -> bytes:
    """A product photo's stand-in: a lit gradient with grain, as a truecolour PNG."""
    base = [rng.randint(40, 215) for _ in range(3)]
    rows = []
    for y in range(height):
        row = bytearray([1])  # filter: Sub
        previous = [0, 0, 0]
        for x in range(width):
            light = 60 * (x + y) // (width + height) - 30
            grain = rng.randint(-2, 2)
            pixel = [max(0, min(255, c + light + grain)) for c in base]
            row += bytes((p - q) & 0xFF for p, q in zip(pixel, previous))
            previous = pixel
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
            + chunk(b"IEND", b""))


def hashed(name: str, data: bytes) -> str:
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.{hashlib.sha256(data).hexdigest()[:10]}{dot}{ext}"


def build() -> dict[Path, bytes]:
    """Every file the build writes, by path."""
    rng = random.Random(SEED)
    files: dict[Path, bytes] = {}
    products = []
    for i in range(PRODUCTS):
        name = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)}"
        image = png(rng)
        path = "img/" + hashed(f"product-{i + 1:02}.png", image)
        files[OUT / "assets" / path] = image
        products.append({"id": i + 1, "name": name, "summary": sentence(rng, WORDS),
                         "price_cents": rng.randint(4, 180) * 50 - 1, "image": f"/assets/{path}"})
    js = javascript(rng, (SRC / "main.js").read_text()).encode()
    css = stylesheet(rng, (SRC / "style.css").read_text()).encode()
    names = {"js": hashed("app.js", js), "css": hashed("app.css", css)}
    files[OUT / "assets" / names["js"]] = js
    files[OUT / "assets" / names["css"]] = css
    files[OUT / "index.html"] = (SRC / "index.html").read_text().replace("{js}", names["js"]).replace(
        "{css}", names["css"]).encode()
    catalogue = json.dumps({"products": products}, indent=1).encode() + b"\n"
    files[CATALOGUE] = catalogue
    files[OUT / "api" / "products"] = catalogue
    return files


def main() -> None:
    files = build()
    if sys.argv[1:] == ["--check"]:
        present = {p for p in OUT.rglob("*") if p.is_file()} | {CATALOGUE}
        stale = sorted(str(p.relative_to(HERE)) for p in (present - set(files)) | {
            p for p, data in files.items() if not p.exists() or p.read_bytes() != data})
        if stale:
            sys.exit(f"static-build/ is not what build.py writes: {', '.join(stale)}; run python build.py")
        return
    if sys.argv[1:]:
        sys.exit("usage: python build.py [--check]")
    shutil.rmtree(OUT, ignore_errors=True)
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files)} files: " + ", ".join(f"{p.relative_to(HERE)} {len(d):,} B" for p, d in files.items()
                                                     if p.suffix in (".js", ".css") or p == CATALOGUE))


if __name__ == "__main__":
    main()
