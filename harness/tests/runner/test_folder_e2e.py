"""Integration, through the CLI: a folder site (`{name, path, origins}`: a static build with
index.html, no site.yaml) loaded for real by Chromium in every kind of mode (HTTP/1.0,
keep-alive, h2, h3 from nginx and Caddy; pipelining through the edge proxy), cold and
warm, compressed as the spec says, judged by what reached the browser. Its paths are the
spec file's, the run started elsewhere; the folder is never written. Also a static build
no one here made: swagger-ui-dist from the npm registry (`npm pack`), with the host its
page fetches its API description from mapped to a folder."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from pagebench.core.encodings import BR, GZIP
from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE, PIPELINING
from pagebench.core.sites import kinds
from pagebench.core.sites.media import png
from pagebench.results.store import Store
from tests.helpers import good_loads, needs_root, pagebench, run_id_of, write_spec

pytestmark = needs_root

PROFILE = {"name": "t20", "rtt_ms": 20, "down_mbit": 50, "up_mbit": 20}
UNSERVED = "https://img.unserved.example/x.png"
#: npm normalises every file's mtime in a package to this (1985-10-26T08:15:00Z).
NPM_MTIME = 499162500
SWAGGER = "swagger-ui-dist@5.17.14"


def _build(root: Path) -> Path:
    """A team's static build: a page, CSS, a script, an image; a script from a CDN host
    (mapped to a folder), an image from a host the lab does not serve, a navigation link."""
    (root / "css").mkdir(parents=True)
    (root / "js").mkdir()
    (root / "img").mkdir()
    (root / "index.html").write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>docs</title>'
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="css/site.css">'
        '<script src="https://cdn.example.com/lib.js"></script></head><body>'
        + "<p>Some documentation text, as a generator writes it.</p>\n" * 200
        + f'<img src="img/logo.png"><img src="{UNSERVED}"><a href="https://github.com/acme/docs">source</a>'
        '<script src="js/app.js"></script></body></html>')
    (root / "css" / "site.css").write_text("".join(f".c{i} {{ margin: {i}px; color: #{i:06x}; }}\n" for i in range(900)))
    (root / "js" / "app.js").write_text("".join(f"function f{i}(x) {{ return x * {i} + {i}; }}\n" for i in range(900)))
    (root / "img" / "logo.png").write_bytes(png(6000, 64, 64, "logo"))
    for number, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        os.utime(path, (1_760_000_000 + number, 1_760_000_000 + number))
    return root


def _snapshot(*roots: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
            for root in roots for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("folder")
    build, cdn = _build(tmp / "build"), tmp / "cdn"
    cdn.mkdir()
    (cdn / "lib.js").write_text("window.lib = " + repr(list(range(2000))) + ";\n")
    before = _snapshot(build, cdn)
    site = {"name": "docs", "path": "../build", "origins": {"cdn.example.com": "../cdn"}}
    db = f"sqlite:///{tmp}/runs.sqlite"
    (tmp / "direct").mkdir()
    direct = write_spec(tmp / "direct", name="folder", sites=[site], modes=["http1.0", "keepalive", "h2", "h3"],
                        profiles=[PROFILE], cache=["cold", "warm"], encoding=["br"], repetitions=1, warmup=0,
                        timeouts={"link_check": False})
    first = pagebench("run", str(direct), "--db", db)  # the harness directory is the working directory
    (tmp / "proxy").mkdir()
    proxied = write_spec(tmp / "proxy", name="folder-proxy", sites=[site], modes=["pipelining"], topology="proxy",
                         profiles=[PROFILE], cache=["cold", "warm"], encoding=["gzip"], repetitions=1, warmup=0,
                         timeouts={"link_check": False})
    second = pagebench("run", str(proxied), "--db", db)
    return {"store": Store(db), "direct": run_id_of(first), "proxied": run_id_of(second), "stderr": first.stderr,
            "build": build, "cdn": cdn, "before": before, "db": db}


def _paths(build: Path) -> dict[str, int]:
    """URL -> bytes of each file the page fetches from the lab's two origins (the page names
    its CDN by the lab's name in the served copy: `.test` more)."""
    return {"https://docs.test/": (build / "index.html").stat().st_size + len(".test"),
            "https://docs.test/css/site.css": (build / "css" / "site.css").stat().st_size,
            "https://docs.test/js/app.js": (build / "js" / "app.js").stat().st_size,
            "https://docs.test/img/logo.png": 6000,
            "https://cdn.example.com.test/lib.js": (build.parent / "cdn" / "lib.js").stat().st_size}


def test_a_cold_load_gets_every_file_of_the_folder_compressed_as_the_spec_says(runs):
    store, paths = runs["store"], _paths(runs["build"])
    for run, mode, encoding in [(runs["direct"], m, BR) for m in (HTTP10, KEEPALIVE, H2, H3)] + [
            (runs["proxied"], PIPELINING, GZIP)]:
        [load] = good_loads(store, run, mode=mode, cache="cold")
        got = {row.resource.url: row.resource for row in store.resources(load.id)}
        assert set(got) == {*paths, UNSERVED}, (mode, sorted(got))
        for url, size in paths.items():
            r = got[url]
            assert r.status == 200 and not r.from_cache and r.body_bytes == size, (mode, url, r)
            if url.endswith(".png"):
                assert r.content_encoding == "", (mode, url)
            else:
                assert r.content_encoding == encoding.token and r.encoded_bytes < size / 2, (mode, url, r)
        # The host the lab does not serve: no response at all, and the page loaded without it.
        assert got[UNSERVED].status == 0 and got[UNSERVED].body_bytes == 0, (mode, got[UNSERVED])
        assert load.requests == len(paths) + 1 and load.cache_hits == 0


def test_a_warm_load_revalidates_the_page_and_takes_the_rest_from_the_cache(runs):
    store, paths = runs["store"], _paths(runs["build"])
    for run, mode in [(runs["direct"], m) for m in (HTTP10, KEEPALIVE, H2, H3)] + [(runs["proxied"], PIPELINING)]:
        [load] = good_loads(store, run, mode=mode, cache="warm")
        got = {row.resource.url: row.resource for row in store.resources(load.id)}
        assert got["https://docs.test/"].revalidated, mode  # 304: ETag/Last-Modified of the build's file
        cached = [url for url in paths if url != "https://docs.test/"]
        assert all(got[url].from_cache for url in cached), (mode, {u: got[u].from_cache for u in cached})
        assert load.cache_hits == len(cached)


def test_the_run_says_what_is_not_served_what_kind_the_site_is_and_leaves_the_folder_as_it_was(runs):
    assert ("note: site docs: img.unserved.example: not served (1 URL(s), fetched by the page, first in "
            "index.html): requests to it fail at once (the lab has no internet)") in runs["stderr"].splitlines()
    assert "cdn.example.com" not in runs["stderr"]  # mapped: served, nothing to say
    experiment = runs["store"].experiment(runs["direct"])
    assert experiment.spec["sites"] == [{"name": "docs", "path": str(runs["build"]),
                                         "origins": {"cdn.example.com": str(runs["cdn"])}}]
    meta = experiment.meta["sites"]["docs"]
    assert (meta["kind"], meta["summary"], meta["path"]) == ("folder", kinds.FOLDER.summary, str(runs["build"]))
    report = pagebench("report", runs["direct"], "--db", runs["db"])
    assert report.returncode == 0, report.stderr
    assert f"site docs: folder ({kinds.FOLDER.summary}), from {runs['build']}" in " ".join(report.stdout.split())
    assert _snapshot(runs["build"], runs["cdn"]) == runs["before"]


def _swagger(tmp: Path) -> Path:
    """swagger-ui-dist as npm ships it: its package folder is the static build."""
    packed = subprocess.run(["npm", "pack", SWAGGER, "--pack-destination", str(tmp)], capture_output=True,
                            text=True, timeout=300, cwd=tmp)
    assert packed.returncode == 0, packed.stderr[-2000:]
    with tarfile.open(tmp / packed.stdout.strip().splitlines()[-1]) as archive:
        archive.extractall(tmp)  # npm pack: regular files under package/
    return tmp / "package"


def test_a_static_build_from_the_npm_registry_loads_as_a_folder_site(tmp_path: Path):
    package = _swagger(tmp_path)
    assert (package / "index.html").is_file() and not (package / "site.yaml").exists()
    api = tmp_path / "petstore" / "v2"
    api.mkdir(parents=True)
    (api / "swagger.json").write_text('{"swagger": "2.0", "info": {"title": "lab", "version": "1"}, "paths": {}}')
    before = _snapshot(package)
    site = {"name": "swagger", "path": "package", "origins": {"petstore.swagger.io": "petstore"}}
    spec = write_spec(tmp_path, name="swagger", sites=[site], modes=["h2"], profiles=[PROFILE],
                      cache=["cold", "warm"], encoding=["br"], repetitions=1, warmup=0, timeouts={"link_check": False})
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    result = pagebench("run", str(spec), "--db", db)
    run = run_id_of(result)
    assert "host(s) only its scripts name are not served" in result.stderr
    store = Store(db)
    bundle = (package / "swagger-ui-bundle.js").stat().st_size
    [cold] = good_loads(store, run, cache="cold")
    got = {row.resource.url: row.resource for row in store.resources(cold.id)}
    r = got["https://swagger.test/swagger-ui-bundle.js"]
    assert r.status == 200 and r.content_encoding == "br" and r.body_bytes == bundle and r.encoded_bytes < bundle / 3
    # The page's own script asked the mapped host (rewritten in the served copy) for its API, never
    # the original. It asks after the load event, so the load may end before the answer is in
    # (status 0: no response yet); an answer that is in is the lab's.
    api = got["https://petstore.swagger.io.test/v2/swagger.json"]
    assert api.status in (0, 200) and not [url for url in got if "//petstore.swagger.io/" in url]
    [warm] = good_loads(store, run, cache="warm")
    got = {row.resource.url: row.resource for row in store.resources(warm.id)}
    assert got["https://swagger.test/"].revalidated and got["https://swagger.test/swagger-ui-bundle.js"].from_cache
    assert _snapshot(package) == before
    assert (package / "index.html").stat().st_mtime == NPM_MTIME  # a real build's mtimes, as shipped


def test_a_baseline_build_is_loaded_in_the_same_run_on_the_same_hosts_and_compared(tmp_path: Path):
    """`run --baseline`: the baseline's folder (another checkout: its stylesheet larger) as
    the twin docs.baseline, on the same hosts as the change's, each load of either side in
    one order; the budgets checked on the change's only, and `compare RUN` pairs them."""
    change, main = tmp_path / "change", tmp_path / "main"
    for checkout in (change, main):
        _build(checkout / "build")
        (checkout / "cdn").mkdir()
        (checkout / "cdn" / "lib.js").write_text("window.lib = 1;\n")
    (main / "build" / "css" / "site.css").write_text("".join(f".b{i} {{ margin: {i}px; }}\n" for i in range(3000)))
    site = {"name": "docs", "path": "build", "origins": {"cdn.example.com": "cdn"}}
    common = dict(sites=[site], modes=["h2"], profiles=[PROFILE], cache=["cold"], repetitions=2, warmup=0,
                  timeouts={"link_check": False}, budgets=[{"metric": "load_ms", "max": 60000}])
    spec, base_spec = write_spec(change, name="docs", **common), write_spec(main, name="docs", **common)
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    result = pagebench("run", str(spec), "--baseline", str(base_spec), "--db", db)
    run = run_id_of(result)
    assert result.stdout.count("budget ok:") == 1 and "docs.baseline" not in result.stdout
    assert result.stdout.strip().splitlines()[-1] == f"run {run} complete: pagebench compare {run}"
    store = Store(db)
    experiment = store.experiment(run)
    assert experiment.meta["baseline"] == {"docs.baseline": "docs"}
    assert experiment.spec["sites"][1] == {"name": "docs.baseline", "path": str(main / "build"), "host": "docs.test",
                                           "origins": {"cdn.example.com": str(main / "cdn")}}
    sizes = {}
    for name, checkout in (("docs", change), ("docs.baseline", main)):
        loads = good_loads(store, run, site=name)
        assert len(loads) == 2
        for load in loads:
            got = {row.resource.url: row.resource for row in store.resources(load.id)}
            assert got["https://cdn.example.com.test/lib.js"].status == 200
            sizes[name] = got["https://docs.test/css/site.css"].body_bytes
        assert sizes[name] == (checkout / "build" / "css" / "site.css").stat().st_size
    assert sizes["docs.baseline"] > 2 * sizes["docs"]
    verdict = pagebench("compare", run, "--db", db, "--markdown")
    assert verdict.returncode == 0, verdict.stderr  # 2 loads a side: can't tell, never a regression
    assert "docs h2 direct" in verdict.stdout and "can't tell" in verdict.stdout
    solo = pagebench("run", str(spec), "--db", db)
    lone = pagebench("compare", run_id_of(solo), "--db", db)
    assert lone.returncode == 2 and lone.stderr.strip().splitlines()[-1] == (
        f"error: run {run_id_of(solo)}: measured without --baseline: give a baseline run and a candidate run")
