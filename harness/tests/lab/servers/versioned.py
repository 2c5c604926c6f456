"""A two-version site in the agreed layout, written by hand, and what both servers must
answer for each of its encodings (nginx in `test_nginx`, Caddy in `test_caddy`; the edge
proxy's strategies carry it in `tests/edge/test_upstream.py`): curl from the client
namespace, bodies as sent."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pagebench.core import encodings
from pagebench.core.encodings import BR, DCZ, GZIP, ZSTD
from pagebench.core.modes import Mode
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.sites.model import Site, SiteManifest
from pagebench.lab.netns import NamespaceBed

BASE_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z: every file of version 1 (the agreed layout)
DAY = 86_400
ENCODINGS = encodings.ENCODINGS


def _text(seed: str, lines: int) -> bytes:
    return "".join(f".{seed}-{i} {{ margin: {i % 7}px; color: #{i * 2654435761 % 0xFFFFFF:06x}; }}\n"
                   for i in range(lines)).encode()


V1 = {
    "www.enc.test/index.html": b"<!doctype html><title>v1</title>" + _text("page", 40),
    "www.enc.test/css/a.css": _text("a", 200),
    "www.enc.test/js/b.js": _text("b", 150),
    "www.enc.test/img/c.png": bytes(range(256)) * 12,
    "o2.enc.test/css/o.css": _text("o", 80),
}
#: Version 2: the page and a.css changed; b.js, the image and o.css as in version 1.
V2 = {**V1, "www.enc.test/index.html": V1["www.enc.test/index.html"].replace(b"v1", b"v2") + _text("new", 3),
      "www.enc.test/css/a.css": V1["www.enc.test/css/a.css"].replace(b"margin: 3px", b"margin: 4px")}


def write_versioned_site(root: Path) -> Site:
    """The layout `core/sites.py` and the content writer agree on: v1 at <root>/<host>/,
    v2 at <root>/v2/<host>/; sidecars beside every text file; deltas of changed text files
    against v1 in v2; mtimes fixed (changed files of v2: BASE_MTIME + 2 days)."""
    for version, files in ((1, V1), (2, V2)):
        base = root if version == 1 else root / f"v{version}"
        for key, body in files.items():
            path = base / key
            path.parent.mkdir(parents=True, exist_ok=True)
            changed = body != V1[key]
            mtime = BASE_MTIME + (version * DAY if changed else 0)
            made = {path: body}
            if encodings.is_text(key):
                made.update({Path(f"{path}{e.suffix}"): e.compress(body) for e in encodings.SIDECARS})
                if changed:
                    made[Path(f"{path}.{encodings.dictionary_id(V1[key])}.dcz")] = \
                        encodings.dcz_encode(V1[key], body)
            for made_path, made_body in made.items():
                made_path.write_bytes(made_body)
                os.utime(made_path, (mtime, mtime))
    for directory in [root, *root.rglob("*")]:
        if directory.is_dir():
            os.chmod(directory, 0o755)
    manifest = SiteManifest(
        name="enc", entry="https://www.enc.test/", origins=("www.enc.test", "o2.enc.test"), versions=2,
        dictionaries={key: encodings.available_dictionary(body) for key, body in V1.items()
                      if encodings.is_text(key)},
        changed={2: sorted(key for key in V1 if V2[key] != V1[key])})
    return Site(manifest, root)


@dataclass
class Got:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes


def fetch(bed: NamespaceBed, binding, path: str, ca: Path, headers: dict[str, str] | None = None,
          http: str = "--http2") -> Got:
    """One GET by curl from the client namespace, the body as sent (never decoded)."""
    with tempfile.TemporaryDirectory(prefix="pagebench-curl-") as tmp:
        argv = ["curl", "-sS", "--max-time", "20", http, "--resolve", f"{binding.origin}:443:{binding.ip}",
                "--cacert", str(ca), "-D", f"{tmp}/h", "-o", f"{tmp}/b", f"https://{binding.origin}{path}"]
        for name, value in (headers or {}).items():
            argv += ["-H", f"{name}: {value}"]
        result = subprocess.run(bed.exec_argv(bed.layout.client, argv), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        lines = Path(f"{tmp}/h").read_text().splitlines()
        body = Path(f"{tmp}/b").read_bytes() if Path(f"{tmp}/b").exists() else b""
    got: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            got[name.strip().lower()] = ", ".join(filter(None, [got.get(name.strip().lower()), value.strip()]))
    return Got(int(lines[0].split()[1]), got, body)


CHROMIUM_AE = "gzip, deflate, br, zstd, dcb, dcz"
TEXT = {"/css/a.css": "text/css", "/js/b.js": "text/javascript", "/": "text/html"}


def check_encodings(bed: NamespaceBed, server_plan: ServerPlan, mode: Mode, ca: Path, http: str) -> None:
    """What both servers must do for each encoding (nginx here, Caddy in test_caddy)."""
    site = server_plan.sites[0]
    for encoding in ENCODINGS:
        www = server_plan.address(mode, "1.3", "www.enc.test", encoding=encoding)
        token = encoding.plain.token
        for path, mime in TEXT.items():
            body = V1["www.enc.test" + (path if path != "/" else "/index.html")]
            got = fetch(bed, www, path, ca, {"Accept-Encoding": CHROMIUM_AE}, http)
            assert got.status == 200, (encoding, path)
            assert got.headers.get("content-encoding", "") == token, (encoding, path, got.headers)
            assert got.headers.get("content-type") == mime, (encoding, path, got.headers)
            assert encodings.decode(token, got.body) == body, (encoding, path)
            assert got.headers["cache-control"] == "no-cache", (encoding, path)  # versioned: text revalidated
            if token:
                assert got.headers["vary"] == "Accept-Encoding", (encoding, path)
                assert int(got.headers["content-length"]) == len(got.body) < len(body)
            plain = fetch(bed, www, path, ca, {"Accept-Encoding": "identity"}, http)
            assert (plain.status, plain.body, plain.headers["content-type"]) == (200, body, mime), (encoding, path)
            assert "content-encoding" not in plain.headers, (encoding, path)
            if encoding in (GZIP, BR):  # a coding the request does not name is never sent
                other = fetch(bed, www, path, ca, {"Accept-Encoding": "zstd"}, http)
                assert "content-encoding" not in other.headers and other.body == body, (encoding, path)
                refused = fetch(bed, www, path, ca, {"Accept-Encoding": f"{token};q=0, identity"}, http)
                assert "content-encoding" not in refused.headers and refused.body == body, (encoding, path)
        image = fetch(bed, www, "/img/c.png", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
        assert (image.status, image.body, image.headers["content-type"]) == (200, V1["www.enc.test/img/c.png"],
                                                                              "image/png"), encoding
        assert "content-encoding" not in image.headers and image.headers["cache-control"] == "max-age=86400"
        assert image.headers["timing-allow-origin"] == "*" and image.headers["etag"]
        v2 = server_plan.address(mode, "1.3", "www.enc.test", encoding=encoding, version=2)
        for path in ("/css/a.css", "/js/b.js"):
            first = fetch(bed, www, path, ca, {"Accept-Encoding": CHROMIUM_AE}, http)
            again = fetch(bed, v2, path, ca, {"Accept-Encoding": CHROMIUM_AE, "If-None-Match": first.headers["etag"]},
                          http)
            changed = f"www.enc.test{path}" in site.manifest.changed[2]
            assert again.status == (200 if changed else 304), (encoding, path, again.headers)
            if changed:
                assert encodings.decode(token, again.body) == V2[f"www.enc.test{path}"]
                assert again.headers["etag"] != first.headers["etag"]
            else:
                assert again.headers["etag"] == first.headers["etag"] and not again.body
                assert again.headers["cache-control"] == "no-cache"


def check_deltas(bed: NamespaceBed, server_plan: ServerPlan, mode: Mode, ca: Path, http: str) -> None:
    """dcz: the delta for the dictionary offered, zstd for another; dictionaries and Link."""
    v1 = server_plan.address(mode, "1.3", "www.enc.test", encoding=DCZ)
    v2 = server_plan.address(mode, "1.3", "www.enc.test", encoding=DCZ, version=2)
    for path, key in (("/css/a.css", "www.enc.test/css/a.css"), ("/", "www.enc.test/index.html")):
        offered = {"Accept-Encoding": CHROMIUM_AE, "Available-Dictionary": encodings.available_dictionary(V1[key])}
        delta = fetch(bed, v2, path, ca, offered, http)
        assert (delta.status, delta.headers["content-encoding"]) == (200, "dcz"), (path, delta.headers)
        assert delta.headers["vary"] == "Accept-Encoding, Available-Dictionary"
        assert delta.headers["content-type"] == TEXT[path] and delta.headers["cache-control"] == "no-cache"
        assert encodings.decode("dcz", delta.body, V1[key]) == V2[key]
        assert len(delta.body) < len(encodings.ZSTD.compress(V2[key]))
        again = fetch(bed, v2, path, ca, {**offered, "If-None-Match": delta.headers["etag"]}, http)
        assert again.status == 304, path
        wrong = fetch(bed, v2, path, ca, {"Accept-Encoding": CHROMIUM_AE,
                                          "Available-Dictionary": encodings.available_dictionary(b"other")}, http)
        assert wrong.headers["content-encoding"] == "zstd" and encodings.decode("zstd", wrong.body) == V2[key]
        lower = fetch(bed, v2, path, ca, {**offered, "Available-Dictionary": offered["Available-Dictionary"].lower()},
                      http)
        assert lower.headers["content-encoding"] == "zstd", path  # sf-binary is case-sensitive
        no_dcz = fetch(bed, v2, path, ca, {**offered, "Accept-Encoding": "gzip, br, zstd"}, http)
        assert no_dcz.headers["content-encoding"] == "zstd", path
    # an unchanged file has no delta: zstd, and its v1 ETag still matches
    unchanged = fetch(bed, v2, "/js/b.js", ca, {"Accept-Encoding": CHROMIUM_AE, "Available-Dictionary":
                                               encodings.available_dictionary(V1["www.enc.test/js/b.js"])}, http)
    assert unchanged.headers["content-encoding"] == "zstd"
    for binding in (v1, v2):
        dictionary = fetch(bed, binding, "/css/a.css.pbdict", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
        assert dictionary.status == 200 and dictionary.body == V1["www.enc.test/css/a.css"]  # v1, as stored
        assert dictionary.headers["use-as-dictionary"] == 'match="/css/a.css"'
        assert dictionary.headers["cache-control"] == "max-age=86400"
        assert dictionary.headers["access-control-allow-origin"] == "*" == dictionary.headers["timing-allow-origin"]
        assert "content-encoding" not in dictionary.headers
        assert fetch(bed, binding, "/img/c.png.pbdict", ca, http=http).status == 404
    page = fetch(bed, v1, "/", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
    links = [link.strip() for link in page.headers["link"].split(",")]
    assert sorted(links) == sorted(f"<https://{key.split('/', 1)[0]}/{key.split('/', 1)[1]}.pbdict>; "
                                   "rel=compression-dictionary" for key in V1 if encodings.is_text(key))
    assert "link" not in fetch(bed, v2, "/", ca, http=http).headers  # version 1's page only
    assert "link" not in fetch(bed, v1, "/css/a.css", ca, http=http).headers
    zstd_v1 = server_plan.address(mode, "1.3", "www.enc.test", encoding=ZSTD)
    assert "link" not in fetch(bed, zstd_v1, "/", ca, http=http).headers
    assert fetch(bed, zstd_v1, "/css/a.css.pbdict", ca, http=http).status == 404
    o2 = server_plan.address(mode, "1.3", "o2.enc.test", encoding=DCZ)
    assert fetch(bed, o2, "/css/o.css.pbdict", ca, http=http).headers["use-as-dictionary"] == 'match="/css/o.css"'
