"""`generate:` in a spec: a parametric page, named from its parameters, for experiments
that vary one thing at a time (images, their size, origins, blocking CSS and JS, a later
wave, HTML size, versions).

`generate: {images, image_bytes, origins, css, js, late, html_bytes}` (`GenParams`): a
page on `www.gen.test` (origin 1) with `images` PNGs of `image_bytes` spread round-robin
over `origins` origins (`www.gen.test`, `o2.gen.test`, ...); `css` stylesheets (10,000 B)
and `js` sync scripts (20,000 B) in the head on origin 1; `late` more images inserted by
`/late.js` (continuing the round-robin); HTML padded to `html_bytes` when given.
`versions: [0.01, 0.1]` adds versions 2, 3, ... (at most 19 more) editing that fraction
of the bytes of the chosen text files (`edit: one` in one run, or `scattered`, the
default; `changed: 0.5` of the HTML, CSS and JS files, the HTML always; the rest
byte-identical). Named from its parameters:
`gen-i20-b2544-o1[-c1][-j1][-l5][-h30000][-v0.01_0.1[-eone][-x0.25]]` (a long list of
versions as `-v<count>x<hash>`).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pagebench.core.sites.media import png, text_file
from pagebench.core.sites.model import GeneratedSite, one_line
from pagebench.core.sites.pages import html_page, insert_images, manifest, on_ready
from pagebench.core.sites.versions import MAX_VERSIONS, with_versions

GEN_CSS_BYTES = 10_000
GEN_JS_BYTES = 20_000
GEN_IMAGE_SIZE = (100, 75)
GEN_MAX_BYTES = 1_000_000_000


class GenParams(BaseModel):
    """`generate:` in an experiment spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    images: int = Field(10, ge=0, le=1000)
    image_bytes: int = Field(2544, ge=200, le=50_000_000)
    origins: int = Field(1, ge=1, le=200)
    css: int = Field(0, ge=0, le=50)
    js: int = Field(0, ge=0, le=50)
    late: int = Field(0, ge=0, le=1000)
    html_bytes: int = Field(0, ge=0, le=50_000_000)
    #: Later versions: the fraction of its bytes each edits (in the chosen text files).
    versions: tuple[Annotated[float, Field(gt=0, le=0.5)], ...] = Field((), max_length=MAX_VERSIONS - 1)
    edit: Literal["one", "scattered"] = "scattered"
    #: The fraction of the text files each later version edits (the HTML always).
    changed: float = Field(0.5, gt=0, le=1)

    @model_validator(mode="after")
    def _bounded(self) -> GenParams:
        if (self.images + self.late) * self.image_bytes > GEN_MAX_BYTES:
            raise ValueError(f"(images + late) x image_bytes must be at most {GEN_MAX_BYTES:,} bytes")
        if not self.versions and (self.edit != "scattered" or self.changed != 0.5):
            raise ValueError("edit and changed need versions (the later versions' edit fractions)")
        return self

    @property
    def name(self) -> str:
        name = f"gen-i{self.images}-b{self.image_bytes}-o{self.origins}"
        for key, value in (("c", self.css), ("j", self.js), ("l", self.late), ("h", self.html_bytes)):
            name += f"-{key}{value}" if value else ""
        if self.versions:
            fractions = "_".join(f"{f:g}" for f in self.versions)
            if len(name) + len(fractions) > 60:  # a name is at most 80 characters
                digest = hashlib.sha256(fractions.encode()).hexdigest()[:8]
                fractions = f"{len(self.versions)}x{digest}"
            name += f"-v{fractions}" + ("-eone" if self.edit == "one" else "")
            name += f"-x{self.changed:g}" if self.changed != 0.5 else ""
        return name

    @property
    def hosts(self) -> list[str]:
        return ["www.gen.test"] + [f"o{i}.gen.test" for i in range(2, self.origins + 1)]


def parse_generate(data: Any, where: str = "generate") -> GenParams:
    """`generate:` parameters, or a one-line SiteError naming the field."""
    try:
        return GenParams.model_validate(data)
    except ValidationError as error:
        raise one_line(where, error) from None


def generate(params: GenParams) -> GeneratedSite:
    """The parametric page of `params`."""
    hosts, name = params.hosts, params.name
    width, height = GEN_IMAGE_SIZE
    files: dict[str, bytes] = {}

    def image(i: int) -> str:
        host = hosts[i % len(hosts)]
        path = f"/img/{i + 1:04d}.png"
        files[host + path] = png(params.image_bytes, width, height, f"{name}/{i}")
        return f"//{host}{path}"

    head = []
    for i in range(1, params.css + 1):
        files[f"{hosts[0]}/css/{i:02d}.css"] = text_file(f".c{i} {{ margin: {i}px; }}\n", GEN_CSS_BYTES,
                                                        f"{name}/c{i}", css=True)
        head.append(f'<link rel="stylesheet" href="/css/{i:02d}.css">')
    for i in range(1, params.js + 1):
        files[f"{hosts[0]}/js/{i:02d}.js"] = text_file(f"window.__pb{i} = {i};\n", GEN_JS_BYTES, f"{name}/j{i}")
        head.append(f'<script src="/js/{i:02d}.js"></script>')
    body = [f"<h1>{name}</h1>", '<div id="images">']
    body += [f'<img src="{image(i)}" width="{width}" height="{height}" alt="">' for i in range(params.images)]
    body.append('</div><div id="more"></div>')
    levels = {}
    if params.late:
        urls = [image(i) for i in range(params.images, params.images + params.late)]
        levels = {url.removeprefix("//"): 2 for url in urls}  # inserted by late.js
        code = on_ready(insert_images("more", urls, width, height))
        files[f"{hosts[0]}/late.js"] = f"/* late.js: inserts {params.late} images */\n{code}\n".encode()
        body.append('<script async src="/late.js"></script>')
    files[f"{hosts[0]}/index.html"] = html_page(name, head, body, params.html_bytes, f"{name}/html")
    site = GeneratedSite(manifest(name, hosts), files, levels)
    return with_versions(site, params.versions, params.edit, params.changed, "generate: versions")

