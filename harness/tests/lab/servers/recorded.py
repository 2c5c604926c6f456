"""A recorded site, written as the importer writes one: every kind of exchange a replay
must answer (statuses, redirects, awkward and long targets, cross-origin headers), for
the pure tests of the plan and rendering (`test_replay.py`) and for real nginx and Caddy
(`test_replay_e2e.py`)."""

from __future__ import annotations

import os
from pathlib import Path

from pagebench.core.sites.recording import Exchange, Recording, lab_host
from pagebench.core.sites.model import SiteManifest, manifest_yaml
from pagebench.lab import sites as sitefiles

WWW, CDN = lab_host("www.example.com"), lab_host("cdn.example.com")
LONG = "/pixel.gif?d=" + "ab" * 2600  # longer than an nginx configuration token
ODD = "/odd%20dir/a+b.js?q=a%20b+c&x=1;y=$z&w={v}|\"'\\"
PIPE = "/pipe|x.txt"  # Go re-encodes it: Caddy's map sees /pipe%7Cx.txt


def _text(seed: str, lines: int) -> bytes:
    return "".join(f".{seed}-{i} {{ margin: {i % 7}px; }}\n" for i in range(lines)).encode()


#: (host, target, status, file body or None, content type, headers, location)
EXCHANGES: list[tuple[str, str, int, bytes | None, str | None, dict[str, str], str | None]] = [
    (WWW, "/", 200, b"<!doctype html><title>rec</title>" + _text("page", 60), "text/html; charset=utf-8",
     {"Cache-Control": "no-cache", "Link": "</style.css?v=1>; rel=preload; as=style"}, None),
    (WWW, "/style.css?v=1", 200, _text("style", 120), "text/css",
     {"Cache-Control": "max-age=3600", "X-Recorded": 'a "$b" {c} \\d;', "Alt-Svc": 'h3=":443"'}, None),
    (WWW, "/api/items?page=1", 200, b'{"page": 1, "items": ["a", "b"]}', "application/json", {}, None),
    (WWW, "/api/items?page=2", 200, b'{"page": 2, "items": ["c"]}', "application/json", {}, None),
    (WWW, "/old", 301, None, None, {"Cache-Control": "max-age=60"}, "/api/items?page=1"),
    (WWW, "/gone.png", 404, b"<!doctype html><title>not here</title>", "text/html", {}, None),
    (WWW, "/beacon?e=load", 204, None, None, {"X-Beacon": "1"}, None),
    (WWW, "/legacy.txt", 203, b"non-authoritative\n", "text/plain", {}, None),
    (WWW, "/Case.txt", 200, b"upper\n", "text/plain", {}, None),
    (WWW, "/case.txt", 200, b"lower\n", "text/plain", {}, None),
    (WWW, ODD, 200, b"var odd = 1;\n", "text/javascript", {}, None),
    (WWW, PIPE, 200, b"pipe\n", "text/plain", {}, None),
    (WWW, LONG, 200, b"GIF89a\x01\x00\x01\x00", "image/gif", {"Cache-Control": "no-store"}, None),
    (WWW, "/blob", 200, b"\x00\x01untyped", None, {}, None),
    (CDN, "/logo.png", 200, bytes(range(256)) * 4, "image/png", {"Cache-Control": "max-age=86400"}, None),
    (CDN, "/font.woff2", 200, b"wOF2" + bytes(200), "font/woff2",
     {"Access-Control-Allow-Origin": f"https://{WWW}", "Vary": "Origin", "Timing-Allow-Origin": f"https://{WWW}"},
     None),
]
#: Server think time (ms) of two exchanges: a 200 (`/Case.txt`, the same size as
#: `/case.txt`, which answers at once) and a status with a body (the 404's error-page path).
THINK = {(WWW, "/Case.txt"): 150.0, (WWW, "/gone.png"): 50.0}
EXTENSIONS = {"text/html; charset=utf-8": "html", "text/html": "html", "text/css": "css", "application/json": "json",
              "text/plain": "txt", "text/javascript": "js", "image/gif": "gif", "image/png": "png",
              "font/woff2": "woff2"}


def write_recorded_site(root: Path, name: str = "rec") -> sitefiles.Site:
    """A site directory in the agreed layout: site.yaml, recording.json, each body once
    under <host>/_replay/ (extension from its type), then the sidecars as for any site."""
    exchanges = []
    for number, (host, target, status, body, mime, headers, location) in enumerate(EXCHANGES, 1):
        file = None
        if body is not None:
            file = f"_replay/{number:04d}.{EXTENSIONS[mime] if mime else 'bin'}"
            (root / host / "_replay").mkdir(parents=True, exist_ok=True)
            (root / host / file).write_bytes(body)
        exchanges.append(Exchange(host=host, target=target, status=status, file=file, content_type=mime,
                                  headers=headers, location=location, level=0 if number == 1 else 1,
                                  original=f"https://{host.removesuffix('.test')}{target}",
                                  think_ms=THINK.get((host, target))))
    recording = Recording(source="test", hosts={"www.example.com": WWW, "cdn.example.com": CDN},
                          exchanges=tuple(exchanges))
    (root / "recording.json").write_text(recording.model_dump_json(indent=1))
    manifest = SiteManifest(name=name, entry=f"https://{WWW}/", origins=(WWW, CDN), recording="recording.json")
    (root / "site.yaml").write_text(manifest_yaml(manifest))
    for directory in [root, *root.rglob("*")]:
        os.chmod(directory, 0o755 if directory.is_dir() else 0o644)
    return sitefiles.write_sidecars(sitefiles.load_site(root))


def exchange(target: str, host: str = WWW) -> tuple:
    return next(row for row in EXCHANGES if row[0] == host and row[1] == target)
