"""Metrics: a raw browser record becomes a verified load; broken promises are flagged."""

from pagebench.core.measure.metrics import LinkView, ProxyView, ServerView, evaluate, resources
from pagebench.core import encodings
from pagebench.core.modes import H2, HTTP10
from pagebench.core.records import Condition, RawLoad
from pagebench.link.counters import LinkCounters

PAGE = "https://www.s.test/index.html"


def raw_load(n_images=3, protocol="h2", connections=None, disk_cache=False, error=None):
    connections = connections or [1] * (n_images + 1)
    requests = {"doc": {"url": PAGE, "type": "Document", "sent": 10.0, "status": 200, "protocol": protocol,
                        "connection_id": connections[0], "encoded_bytes": 900, "finished": 10.2}}
    resources_rt = []
    for i in range(n_images):
        url = f"https://www.s.test/i{i}.png"
        requests[f"r{i}"] = {"url": url, "type": "Image", "sent": 10.1 + i / 100, "status": 200,
                             "protocol": protocol, "connection_id": 0 if disk_cache else connections[i + 1],
                             "from_disk_cache": disk_cache, "encoded_bytes": 0 if disk_cache else 2700}
        resources_rt.append({"name": url, "startTime": 100.0 + i, "responseStart": 150.0 + i,
                             "responseEnd": 160.0 + i, "nextHopProtocol": protocol, "decodedBodySize": 2544})
    requests["fav"] = {"url": "data:,", "type": "Other", "sent": 10.05}
    page = {"nav": {"responseStart": 151.0, "domContentLoadedEventStart": 200.0, "loadEventStart": 320.0,
                    "startTime": 0, "nextHopProtocol": protocol, "decodedBodySize": 500},
            "paints": {"first-contentful-paint": 250.0}, "lcp": 260.0, "resources": resources_rt}
    return RawLoad(url=PAGE, started_at=0.0, error=error, page=page, requests=requests)


def link(**counters) -> LinkView:
    """What the router counted, as evaluate takes it (from a LinkCounters)."""
    c = LinkCounters(**counters)
    return LinkView(c.tcp_conns, c.udp_flows, c.as_dict())


def cond(mode=H2, cache="cold"):
    return Condition("site", mode, "direct", "cable", cache)


def test_cold_h2_load_metrics():
    result = evaluate(cond(), raw_load(), link(tcp_conns=1), ServerView(1, 4, (200,)))
    assert (result.ttfb_ms, result.dcl_ms, result.load_ms, result.fcp_ms, result.lcp_ms) == (
        151.0, 200.0, 320.0, 250.0, 260.0)
    assert result.requests == 4  # data: URLs are not requests
    assert result.bytes == 900 + 3 * 2700
    assert (result.connections_browser, result.connections_link, result.connections_server) == (1, 1, 1)
    assert not result.flagged and result.ok and result.notes == ()
    assert [r.protocol for r in result.resources] == ["h2"] * 4
    assert result.resources[0].url == PAGE and result.resources[1].start_ms == 100.0


def test_http10_needs_a_connection_per_request():
    good = evaluate(cond(HTTP10), raw_load(protocol="http/1.1", connections=[1, 2, 3, 4]),
                    link(tcp_conns=4), ServerView(4, 4, (200,)))
    assert not good.flagged and good.connections_browser == 4
    bad = evaluate(cond(HTTP10), raw_load(protocol="http/1.1", connections=[1, 1, 2, 2]),
                   link(tcp_conns=2), ServerView(2, 4, (200,)))
    assert bad.flagged and "http1.0 load used 2 connection(s) for 4 request(s)" in bad.flags


def test_a_load_the_servers_saw_over_other_tls_is_flagged():
    clear = Condition("site", HTTP10, "direct", "cable", "cold", "none")
    raw = raw_load(protocol="http/1.1", connections=[1, 2, 3, 4])
    good = evaluate(clear, raw, link(tcp_conns=4), ServerView(4, 4, (200,), tls=frozenset({"none"})))
    assert not good.flagged
    bad = evaluate(clear, raw, link(tcp_conns=4), ServerView(4, 4, (200,), tls=frozenset({"1.3", "none"})))
    assert "the servers logged TLS 1.3, none for a tls none load" in bad.flags


def test_protocol_mismatch_is_flagged():
    result = evaluate(cond(H2), raw_load(protocol="http/1.1"), link(tcp_conns=1), ServerView(1, 4, (200,)))
    assert result.flagged and "4 resource(s) used http/1.1 instead of h2" in result.flags


def test_cold_load_with_cache_hits_is_flagged():
    result = evaluate(cond(), raw_load(disk_cache=True), link(tcp_conns=1), ServerView(1, 1, (200,)))
    assert result.cache_hits == 3 and "cold load had 3 cache hit(s)" in result.flags


def test_a_url_the_page_names_twice_comes_from_the_memory_cache_the_first_filled_in_a_cold_load():
    raw = raw_load()
    raw.requests["again"] = {"url": "https://www.s.test/i0.png", "type": "Image", "sent": 10.5,
                             "memory_cache": True}  # i0 fetched over the network first, in this load
    result = evaluate(cond(), raw, link(tcp_conns=1), ServerView(1, 4, (200,)))
    assert result.cache_hits == 1 and not result.flagged, result.flags
    raw.requests["other"] = {"url": "https://www.s.test/never-fetched.png", "type": "Image", "sent": 10.6,
                             "memory_cache": True}  # from a cache this cold load cannot have
    assert evaluate(cond(), raw, link(tcp_conns=1), ServerView(1, 4, (200,))).flags == (
        "cold load had 1 cache hit(s)",)


def test_warm_load_must_use_the_cache_and_revalidate_the_html():
    good = evaluate(cond(cache="warm"), raw_load(disk_cache=True), link(tcp_conns=1),
                    ServerView(1, 1, (304,)))
    assert not good.flagged and good.cache_hits == 3 and good.bytes == 900
    missed = evaluate(cond(cache="warm"), raw_load(), link(tcp_conns=1), ServerView(1, 4, (304,)))
    assert missed.flagged and missed.flags[0].startswith("warm load fetched 3 cacheable subresource(s)")
    stale = evaluate(cond(cache="warm"), raw_load(disk_cache=True), link(tcp_conns=1),
                     ServerView(1, 1, (200,)))
    assert "warm load did not revalidate the HTML (no 304 at the server)" in stale.flags


def test_a_request_without_response_needs_no_connection_of_its_own_in_http10():
    raw = raw_load(protocol="http/1.1", connections=[1, 2, 3, 4])
    raw.requests["gone"] = {"url": "https://img.unserved.example/b.png", "type": "Image", "sent": 10.3,
                            "failed": "net::ERR_NAME_NOT_RESOLVED"}
    result = evaluate(cond(HTTP10), raw, link(tcp_conns=4), ServerView(4, 4, (200,)))
    assert not result.flagged, result.flags
    raw.requests["gone"] |= {"status": 200, "connection_id": 4}  # answered, on a connection already used
    assert evaluate(cond(HTTP10), raw, link(tcp_conns=4), ServerView(4, 5, (200,))).flags == (
        "http1.0 load used 4 connection(s) for 5 request(s)",)
    raw.requests["gone"] |= {"connection_id": 0}  # answered, its connection not reported (a frame's)
    assert not evaluate(cond(HTTP10), raw, link(tcp_conns=5), ServerView(5, 5, (200,))).flagged


def test_a_warm_load_is_not_flagged_for_a_request_without_response_or_a_scripts_own_fetch():
    raw = raw_load(disk_cache=True)
    raw.requests["gone"] = {"url": "https://img.unserved.example/b.png", "type": "Image", "sent": 10.3,
                            "failed": "net::ERR_NAME_NOT_RESOLVED"}  # a host the lab does not serve
    raw.requests["api"] = {"url": "https://www.s.test/api.json", "type": "Fetch", "sent": 10.4, "status": 200,
                           "protocol": "h2", "connection_id": 1, "encoded_bytes": 90}
    result = evaluate(cond(cache="warm"), raw, link(tcp_conns=1), ServerView(1, 2, (304,)))
    assert not result.flagged, result.flags
    assert [(r.status, r.resource_type) for r in result.resources[-2:]] == [(0, "image"), (200, "fetch")]
    raw.requests["img"] = {"url": "https://www.s.test/late.png", "type": "Image", "sent": 10.5, "status": 200,
                           "protocol": "h2", "connection_id": 1, "encoded_bytes": 90}
    missed = evaluate(cond(cache="warm"), raw, link(tcp_conns=1), ServerView(1, 3, (304,)))
    assert missed.flags == ("warm load fetched 1 cacheable subresource(s) from the network, "
                            "e.g. https://www.s.test/late.png",)


def test_connection_count_differences_are_explained_not_hidden():
    result = evaluate(cond(), raw_load(), link(tcp_conns=2), ServerView(1, 4, (200,)))
    assert not result.flagged
    assert any("carried no request" in note for note in result.notes)
    assert any("reached the server without completing a request" in note for note in result.notes)


def test_navigation_error_is_flagged_and_recorded():
    result = evaluate(cond(), raw_load(error="net::ERR_CONNECTION_REFUSED"), link(), ServerView(0, 0, ()))
    assert not result.ok and result.errors == ("net::ERR_CONNECTION_REFUSED",)
    assert result.flags[0] == "error: net::ERR_CONNECTION_REFUSED"


def test_resources_skip_non_http_urls_and_keep_request_order():
    urls = [r.url for r in resources(raw_load(n_images=2))]
    assert urls == [PAGE, "https://www.s.test/i0.png", "https://www.s.test/i1.png"]


def test_what_the_server_answered_304_is_stored_as_revalidated():
    """Chromium reports the cached 200 of a revalidated response (CDP and Resource Timing
    alike: measured on warm loads), so the server's 304 says which resource it was."""
    result = evaluate(cond(cache="warm"), raw_load(disk_cache=True), link(tcp_conns=1),
                      ServerView(1, 1, (304,), frozenset({"www.s.test/index.html"})))
    assert not result.flagged
    assert [r.revalidated for r in result.resources] == [True, False, False, False]


def test_a_resource_the_server_did_not_answer_304_is_not_revalidated():
    raw = raw_load(disk_cache=True)
    raw.requests["doc"]["status"] = 200
    result = evaluate(cond(cache="warm"), raw, link(tcp_conns=1), ServerView(1, 1, (200,), frozenset()))
    assert not any(r.revalidated for r in result.resources)
    assert "did not revalidate the HTML" in " ".join(result.flags)


def test_a_warm_proxy_pool_opens_nothing_and_the_three_upstream_counts_still_agree():
    """A warm pool's load: no SYN at the router, none opened by the proxy, and nginx logs
    the two connections it reused. Reused is not opened: a disagreement is still flagged."""
    proxied = Condition("site", H2, "proxy", "cable", "cold")
    exchanges = tuple({"host": "www.s.test", "path": path, "protocol": "h2", "connection": 1}
                      for path in ("/index.html", "/i0.png", "/i1.png", "/i2.png"))
    warm = evaluate(proxied, raw_load(), link(tcp_conns=0), ServerView(2, 4, (200,)),
                    ProxyView(0, 4, exchanges, reused=2))
    assert not warm.flagged, warm.flags
    assert (warm.connections_proxy, warm.connections_proxy_reused, warm.connections_link) == (0, 2, 0)
    wrong = evaluate(proxied, raw_load(), link(tcp_conns=1), ServerView(2, 4, (200,)),
                     ProxyView(0, 4, exchanges, reused=2))
    assert wrong.flags == ("upstream connections disagree: proxy 0 (+2 reused from the warm pool), router 1, nginx 2",)
    cold = evaluate(proxied, raw_load(), link(tcp_conns=1), ServerView(1, 4, (200,)), ProxyView(1, 4, exchanges))
    assert not cold.flagged and (cold.connections_proxy, cold.connections_proxy_reused) == (1, 0)


# -- encodings and deltas -----------------------------------------------------------

SITE = "https://www.s.test"


def encoded_load(*files, document=""):
    """A load of SITE/ (its index.html, sent with Content-Encoding `document`) then
    `files`: (path, content-encoding, extra CDP fields), each with its Resource Timing
    entry (encoded body 300 bytes, decoded 1000)."""
    requests, timing = {}, []
    for i, (path, encoding, extra) in enumerate((("/", document, {}),) + files):
        url = SITE + path
        cached = extra.get("from_disk_cache", False)
        requests[f"r{i}"] = {"url": url, "type": "Document" if i == 0 else "Other", "sent": 10.0 + i / 100,
                             "status": 200, "protocol": "h2", "connection_id": 0 if cached else 1,
                             "encoded_bytes": 0 if cached else 400, "content_encoding": encoding, **extra}
        if i:
            timing.append({"name": url, "startTime": 100.0 + i, "nextHopProtocol": "h2",
                           "encodedBodySize": 300, "decodedBodySize": 1000})
    page = {"nav": {"responseStart": 151.0, "loadEventStart": 320.0, "nextHopProtocol": "h2",
                    "encodedBodySize": 500, "decodedBodySize": 2000}, "resources": timing}
    return RawLoad(url=SITE + "/", started_at=0.0, error=None, page=page, requests=requests)


def encoded(encoding, cache="cold", version=1):
    return Condition("site", H2, "direct", "cable", cache, encoding=encodings.parse(encoding), version=version)


def judge(condition, raw, not_modified=(), document=200, expect_delta=frozenset(), versioned=True):
    return evaluate(condition, raw, link(tcp_conns=1),
                    ServerView(1, len(raw.requests), (document,), frozenset(not_modified)), expect_delta=expect_delta,
                    versioned=versioned)


def test_resources_carry_their_encoding_and_dictionary_use():
    raw = encoded_load(("/a.css", "br", {}), ("/b.js", "DCZ", {"dictionary_offered": True}),
                       ("/c.png", "", {"from_disk_cache": True}), ("/gone.js", "", {"status": 0}))
    raw.page["resources"].pop()  # a failed request has no Resource Timing entry
    doc, css, js, png, gone = resources(raw)
    assert (doc.encoded_bytes, doc.body_bytes, doc.content_encoding) == (500, 2000, "")
    assert (css.encoded_bytes, css.body_bytes, css.content_encoding) == (300, 1000, "br")
    assert not css.dictionary_offered and not css.dictionary_used
    assert (js.content_encoding, js.dictionary_offered, js.dictionary_used) == ("dcz", True, True)
    assert png.from_cache and png.encoded_bytes is None  # no network response
    assert gone.encoded_bytes is None


def test_a_text_resource_sent_without_the_conditions_encoding_is_flagged():
    files = (("/a.css", "gzip", {}), ("/b.js", "gzip", {}), ("/c.png", "", {}))
    assert judge(encoded("gzip"), encoded_load(*files, document="gzip")).flags == ()
    assert judge(encoded("gzip"), encoded_load(*files)).flags == (  # "/" is index.html: text
        "1 text resource(s) arrived with Content-Encoding none instead of gzip (encoding gzip), "
        "e.g. https://www.s.test/",)
    raw = encoded_load(("/a.css", "gzip", {}), ("/b.js", "br", {}), ("/c.png", "", {}), document="gzip")
    assert judge(encoded("gzip"), raw).flags == (
        "1 text resource(s) arrived with Content-Encoding br instead of gzip (encoding gzip), "
        "e.g. https://www.s.test/b.js",)
    assert judge(encoded("br"), raw).flags == (
        "2 text resource(s) arrived with Content-Encoding gzip instead of br (encoding br), "
        "e.g. https://www.s.test/",)


def test_identity_sends_text_as_stored_and_images_never_carry_an_encoding():
    plain = encoded_load(("/a.css", "", {}), ("/c.png", "", {}), ("/f.woff2", "", {}))
    assert judge(encoded("identity"), plain).flags == ()
    zipped = encoded_load(("/a.css", "", {}), ("/c.png", "gzip", {}), ("/f.woff2", "zstd", {}))
    assert judge(encoded("identity"), zipped).flags == (
        "2 image/font resource(s) arrived with Content-Encoding gzip (they are sent as stored), "
        "e.g. https://www.s.test/c.png",)
    wrong = judge(encoded("identity"), encoded_load(("/a.css", "zstd", {})))
    assert wrong.flags == ("1 text resource(s) arrived with Content-Encoding zstd instead of none "
                           "(encoding identity), e.g. https://www.s.test/a.css",)


def test_an_app_sites_compression_is_its_own():
    """An app compresses (or not) as it does itself: no encoding promise of the lab's."""
    raw = encoded_load(("/a.css", "zstd", {}), ("/c.png", "gzip", {}), document="br")
    assert judge(encoded("identity"), raw).flags != ()
    served = ServerView(1, len(raw.requests), (200,), frozenset())
    assert evaluate(encoded("identity"), raw, link(tcp_conns=1), served, app=True).flags == ()


def test_only_what_the_server_sent_is_checked_for_its_encoding():
    """A cached copy or a revalidated one (304: Chromium reports the cached response)
    was not sent in this load; an error is flagged as an error."""
    raw = encoded_load(("/a.css", "", {"from_disk_cache": True}), ("/b.js", "", {}), ("/x.js", "", {"status": 404}),
                       document="zstd")
    result = judge(encoded("zstd", "warm"), raw, not_modified={"www.s.test/", "www.s.test/b.js"}, document=304)
    assert result.flags == ("error: https://www.s.test/x.js: HTTP 404",
                            "warm load fetched 1 cacheable subresource(s) from the network, e.g. https://www.s.test/x.js")
    # A site without versions sends its static files fresh for a day: a 304 is a miss.
    fixed = judge(encoded("zstd", "warm"), raw, not_modified={"www.s.test/", "www.s.test/b.js"}, document=304,
                  versioned=False)
    assert fixed.flags[1] == ("warm load fetched 2 cacheable subresource(s) from the network, "
                              "e.g. https://www.s.test/b.js")


def test_dcz_answers_zstd_where_no_dictionary_is_offered():
    raw = encoded_load(("/a.css", "zstd", {}), ("/b.js", "dcz", {"dictionary_offered": True}), ("/c.png", "", {}),
                       document="zstd")
    assert judge(encoded("dcz"), raw).flags == ()
    raw.requests["r1"]["content_encoding"] = "br"
    assert judge(encoded("dcz"), raw).flags == (
        "1 text resource(s) arrived with Content-Encoding br instead of dcz or zstd (encoding dcz), "
        "e.g. https://www.s.test/a.css",)


def test_a_warm_load_of_a_later_version_gets_each_changed_file_as_a_delta():
    """Version 2 after a profile primed with version 1: unchanged files are 304s (sent
    `no-cache`, revalidated: not a miss), changed ones (the HTML too) arrive as dcz."""
    raw = encoded_load(("/a.css", "dcz", {"dictionary_offered": True}), ("/b.js", "", {}),
                       ("/c.png", "", {"from_disk_cache": True}))
    raw.requests["r0"].update(content_encoding="dcz", dictionary_offered=True)
    changed = frozenset({"www.s.test/index.html", "www.s.test/a.css"})
    good = judge(encoded("dcz", "warm", 2), raw, not_modified={"www.s.test/b.js"}, expect_delta=changed)
    assert good.flags == ()
    assert [(r.dictionary_offered, r.dictionary_used, r.revalidated) for r in good.resources] == [
        (True, True, False), (True, True, False), (False, False, True), (False, False, False)]
    # Without the list the same load is flagged: the HTML was not revalidated and a.css fetched.
    assert judge(encoded("dcz", "warm", 2), raw, not_modified={"www.s.test/b.js"}).flags == (
        "warm load fetched 1 cacheable subresource(s) from the network, e.g. https://www.s.test/a.css",
        "warm load did not revalidate the HTML (no 304 at the server)")


def test_a_changed_file_that_arrived_whole_is_flagged_with_why():
    raw = encoded_load(("/a.css", "zstd", {}), ("/b.js", "zstd", {"dictionary_offered": True}),
                       ("/c.js", "", {}), ("/d.js", "", {"from_disk_cache": True}), ("/e.js", "", {}))
    changed = frozenset({"www.s.test/" + name for name in ("a.css", "b.js", "c.js", "d.js", "e.js", "never.js")})
    result = judge(encoded("dcz", "warm", 3), raw, not_modified={"www.s.test/c.js", "www.s.test/"},
                   document=304, expect_delta=changed)
    assert result.flags == (
        "www.s.test/a.css changed in version 3 and arrived whole, not as a delta: no dictionary offered",
        "www.s.test/b.js changed in version 3 and arrived whole, not as a delta: dictionary offered, answered zstd",
        "www.s.test/c.js changed in version 3 but the server answered 304: the browser kept the old one",
        "www.s.test/d.js changed in version 3 but was served from the cache without asking the server",
        "www.s.test/e.js changed in version 3 and arrived whole, not as a delta: no dictionary offered",
        "1 text resource(s) arrived with Content-Encoding none instead of dcz or zstd (encoding dcz), "
        "e.g. https://www.s.test/e.js",
    )


def test_other_encodings_get_changed_files_whole_but_never_stale():
    raw = encoded_load(("/a.css", "br", {}), ("/b.js", "br", {}), document="br")
    changed = frozenset({"www.s.test/a.css", "www.s.test/b.js"})
    result = judge(encoded("br", "warm", 2), raw, not_modified={"www.s.test/", "www.s.test/b.js"},
                   document=304, expect_delta=changed)
    assert result.flags == ("www.s.test/b.js changed in version 2 but the server answered 304: "
                            "the browser kept the old one",)
