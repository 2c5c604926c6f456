"""nginx's content encodings and versions (pure): identity of one version renders as
before encodings existed; negotiated and versioned bindings get their roots, files,
headers and dictionaries; the maps name a sidecar's original type and its coding."""

from __future__ import annotations

import re
from pathlib import Path

from pagebench.core import encodings
from pagebench.core.encodings import BR, DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.core.servers import nginxconf
from pagebench.core.servers.plan import plan
from tests.core.servers.samples import ALL_MODES, DICTIONARIES, LEAF, V1_CSS, A, V, servers, top_lines

RUN = Path("/run/pagebench/pbx/nginx")


def test_identity_bindings_of_one_version_render_as_before():
    conf = nginxconf.render(plan([A], ALL_MODES, ["1.3"], LEAF, encodings=[IDENTITY]), RUN)
    assert "$pb_" not in conf and "try_files" not in conf and "default_type \"\"" not in conf
    assert conf == nginxconf.render(plan([A], ALL_MODES, ["1.3"], LEAF), RUN)


def test_negotiated_and_versioned_bindings_render_their_roots_files_and_headers():
    p = plan([V], [H2], ["1.3"], LEAF, encodings=[IDENTITY, BR, DCZ])
    conf = nginxconf.render(p, RUN)
    blocks = servers(conf)
    binding = {(b.encoding.name, b.version, b.origin): b for b in p.bindings}
    identity2 = blocks[binding["identity", 2, "www.v.test"].ip]
    assert "root /data/sites/v/v2/www.v.test;" in identity2 and not any("try_files" in x for x in identity2)
    assert 'add_header Cache-Control "$pb_versioned_cache_control" always;' in identity2
    br = blocks[binding["br", 1, "www.v.test"].ip]
    assert "root /data/sites/v/www.v.test;" in br
    assert "try_files $uri$pb_accepts_br $uri $uri/ =404;" in br and 'default_type "";' in br
    assert 'add_header Content-Encoding "$pb_content_encoding";' in br  # not `always`: errors keep nginx's
    dcz1, dcz2 = blocks[binding["dcz", 1, "www.v.test"].ip], blocks[binding["dcz", 2, "www.v.test"].ip]
    assert "try_files $uri$pb_dcz_first $uri$pb_dcz_then $uri $uri/ =404;" in dcz2
    assert "location = /index.html {" in dcz1 and "location = /index.html {" not in dcz2  # Link on v1 only
    assert any(x.startswith("add_header Link \"<https://www.v.test/css/a.css.pbdict>;") for x in dcz1)
    for block in (dcz1, dcz2):  # version 1's bodies are the dictionaries
        start = block.index("location = /css/a.css.pbdict {")
        assert block[start + 1:start + 3] == ["root /data/sites/v/www.v.test;", "try_files /css/a.css =404;"]
        assert "add_header Use-As-Dictionary 'match=\"/css/a.css\"' always;" in block
    assert "location = /x.js.pbdict {" in blocks[binding["dcz", 2, "img.v.test"].ip]
    # the dictionary a header names: case-sensitive (sf-binary base64), only when dcz is accepted
    value = DICTIONARIES["www.v.test/css/a.css"]
    line = f'"~^1{re.escape(value)}$" ".{encodings.dictionary_id(V1_CSS)}.dcz";'
    assert line in top_lines(conf)


def test_sidecar_maps_name_the_original_type_and_the_coding():
    conf = nginxconf.render(plan([V], [H2], ["1.3"], LEAF, encodings=[GZIP]), RUN)

    def mapped(variable: str, uri: str) -> str | None:
        block = conf[conf.index(f"map $uri {variable} {{"):]
        block = block[:block.index("\n    }")]
        default = None
        for line in block.splitlines()[1:]:
            key, value = (x.strip('"') for x in re.fullmatch(r'("[^"]*"|\S+) ("[^"]*"|\S+);', line.strip()).groups())
            if key == "default":
                default = value
            elif re.search(key[2:], uri, re.IGNORECASE if key.startswith("~*") else 0):
                return value
        return default

    assert mapped("$pb_content_type", "/css/a.css.gz") == "text/css"
    assert mapped("$pb_content_type", "/index.html.1234567890abcdef.dcz") == "text/html"
    assert mapped("$pb_content_type", "/css/a.css") == ""  # types gives it
    assert mapped("$pb_content_type", "/a.bin") == "application/octet-stream"
    assert mapped("$pb_content_encoding", "/js/x.js.br") == "br"
    assert mapped("$pb_content_encoding", "/img/x.png") is None
    assert mapped("$pb_vary", "/js/x.js") == "Accept-Encoding" and mapped("$pb_vary", "/img/x.png") is None
    assert mapped("$pb_vary", "/js/x.js.0123456789abcdef.dcz") == "Accept-Encoding, Available-Dictionary"
    assert mapped("$pb_versioned_cache_control", "/js/x.js.zst") == "no-cache"
    assert mapped("$pb_versioned_cache_control", "/img/x.png") == "max-age=86400"
    assert mapped("$pb_encoded_cache_control", "/js/x.js.zst") == "max-age=86400"
    assert mapped("$pb_encoded_cache_control", "/index.html.gz") == "no-cache"
