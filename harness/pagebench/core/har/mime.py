"""A recorded body's kind from its Content-Type: the extension its file is stored under.

The lab's servers pick the MIME type and whether a file has precompressed sidecars by its
extension, so a body imported from a HAR is named by what its Content-Type says (or, with
none, by Chrome's resource type); the measurements count resources by the same rule.
"""

from __future__ import annotations

import re

_EXTENSIONS = (  # (pattern of a MIME type, extension)
    (r"text/html|application/xhtml\+xml", "html"), (r"text/css", "css"),
    (r"(text|application)/(x-)?(java|ecma)script|text/jscript|application/x-javascript", "js"),
    (r"application/([a-z0-9.+-]*\+)?json|text/json", "json"), (r"image/svg\+xml", "svg"),
    (r"text/plain", "txt"), (r"(application|text)/([a-z0-9.+-]*\+)?xml", "xml"), (r"image/png", "png"),
    (r"image/jpe?g|image/pjpeg", "jpg"), (r"image/gif", "gif"), (r"image/webp", "webp"), (r"image/avif", "avif"),
    (r"image/(x-icon|vnd\.microsoft\.icon)", "ico"), (r"font/woff2|application/font-woff2", "woff2"),
    (r"font/woff|application/(x-)?font-woff", "woff"),
    (r"font/(ttf|sfnt)|application/(x-)?font-(ttf|truetype|sfnt)", "ttf"),
    (r"font/otf|application/(x-)?font-(otf|opentype)", "otf"), (r"video/mp4", "mp4"), (r"video/webm", "webm"),
)
_BY_RESOURCE_TYPE = {"document": "html", "stylesheet": "css", "script": "js"}


def extension(mime: str, resource_type: str | None = None) -> str:
    """The body file's extension for a Content-Type (`bin` when unknown), so the servers'
    MIME and text (sidecar) rules apply to it."""
    essence = mime.split(";", 1)[0].strip().lower()
    for pattern, ext in _EXTENSIONS:
        if re.fullmatch(pattern, essence):
            return ext
    if not essence and resource_type in _BY_RESOURCE_TYPE:
        return _BY_RESOURCE_TYPE[resource_type]
    return "bin"
