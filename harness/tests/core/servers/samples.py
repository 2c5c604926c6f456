"""What the server-configuration tests share: a certificate, small sites (one of two
versions with dictionaries), and readers of rendered configurations: nginx's server
blocks and top-level lines, and Caddy's routes run for one path."""

from __future__ import annotations

import re
from pathlib import Path

from pagebench.core import encodings
from pagebench.core.certs import Leaf
from pagebench.core.modes import H2, HTTP10, KEEPALIVE
from pagebench.core.sites.model import Site, SiteManifest

LEAF = Leaf(Path("/data/tls/leaf-1.pem"), Path("/data/tls/leaf.key"), Path("/data/tls/leaf-1-chain.pem"), "SPKI=")
ALL_MODES = [HTTP10, KEEPALIVE, H2]


def site(name: str, origins: list[str], headers: dict | None = None) -> Site:
    manifest = SiteManifest(name=name, entry=f"https://{origins[0]}/", origins=tuple(origins), headers=headers or {})
    return Site(manifest, Path("/data/sites") / name)


A = site("a", ["www.a.test", "img.a.test"])
B = site("b", ["www.b.test"])

V1_CSS, V1_PAGE = b"body { color: red }", b"<!doctype html><title>v1</title>"
DICTIONARIES = {"www.v.test/css/a.css": encodings.available_dictionary(V1_CSS),
                "www.v.test/index.html": encodings.available_dictionary(V1_PAGE),
                "img.v.test/x.js": encodings.available_dictionary(b"x")}
#: Two versions, dictionaries on both origins.
V = Site(SiteManifest(name="v", entry="https://www.v.test/", origins=("www.v.test", "img.v.test"), versions=2,
                      dictionaries=DICTIONARIES, changed={2: ["www.v.test/css/a.css"]}), Path("/data/sites/v"))


def servers(conf: str) -> dict[str, list[str]]:
    """nginx server blocks keyed by their first listen address, as lists of stripped lines."""
    blocks, current = {}, None
    for line in conf.splitlines():
        text = line.strip()
        if text == "server {":
            current = []
        elif current is not None and line.startswith("    }"):
            listen = next(x for x in current if x.startswith("listen "))
            blocks[listen.split()[1].split(":")[0]] = current
            current = None
        elif current is not None:
            current.append(text)
    return blocks


def top_lines(conf: str) -> set[str]:
    return {line.strip() for line in conf.splitlines()}


def headers_for(routes: list[dict], path: str) -> dict[str, str]:
    """Run Caddy routes for one request path: every matching route's headers handler sets
    its headers in order; within a group only the first matching route runs."""
    result: dict[str, str] = {}
    groups_done: set[str] = set()
    for route in routes:
        if route.get("group") in groups_done:
            continue
        matchers = route.get("match")
        if matchers and not any(re.search(m["path_regexp"]["pattern"], path) for m in matchers):
            continue
        if "group" in route:
            groups_done.add(route["group"])
        for handler in route["handle"]:
            if handler["handler"] == "headers":
                result.update({name: values[0] for name, values in handler["response"]["set"].items()})
    return result


def handlers(server: dict, name: str) -> list[dict]:
    """Every handler of one kind in a Caddy server's routes, in order."""
    return [h for route in server["routes"] for h in route["handle"] if h["handler"] == name]
