"""Later versions of a generated site, for the seed 001 experiments (delta encoding and
revalidation): version k edits a fraction of the bytes of the same chosen text files of
version 1, every other file byte-identical.

The edits are `text.edit`'s (byte substitutions in text only), so the number and place of
the changed bytes are known exactly; the manifest lists, per later version, the files that
changed and, for every text file of version 1, the dictionary a delta is made against.
"""

from __future__ import annotations

import random

from pagebench.core import encodings
from pagebench.core.sites.model import GeneratedSite, SiteError, SiteManifest
from pagebench.core.sites.text import edit, editable

MAX_VERSIONS = 20
_EDITED = (".html", ".htm", ".css", ".js", ".mjs", ".txt")


def _is_code(path: str) -> bool:
    return path.endswith((".css", ".js", ".mjs"))


def with_versions(site: GeneratedSite, fractions: tuple[float, ...], spread: str = "scattered",
                  changed: float = 0.5, where: str = "versions") -> GeneratedSite:
    """`site` with versions 2..N: version k edits `fractions[k - 2]` of the bytes of the
    same chosen text files of version 1 (`text.edit`): the entry HTML, then others in a
    fixed shuffled order until `changed` of the text files (HTML, CSS, JS) are chosen;
    every other file stays byte-identical. Files with too little text to take the largest
    edit are passed over (the HTML must take it: one-line error naming `where`)."""
    if not fractions:
        return site
    entry = site.manifest.origins[0] + "/" + (site.entry.split("/", 3)[3] or "index.html")
    texts = sorted(p for p in site.files if p.endswith(_EDITED))
    if entry not in texts:
        raise SiteError(f"{where}: the entry {entry} is not an HTML file of the site")
    order = [p for p in texts if p != entry]
    random.Random(f"{site.name}/changed").shuffle(order)
    wanted, chosen = max(1, round(changed * len(texts))), []
    for path in [entry, *order]:
        body, need = site.files[path], max(1, round(max(fractions) * len(site.files[path])))
        if len(chosen) < wanted and len(editable(body, _is_code(path))) >= need:
            chosen.append(path)
        elif path == entry:
            have = len(editable(body, False))
            raise SiteError(f"{where}: {max(fractions):g} of {entry} ({len(body)} bytes) is {need} bytes but it "
                            f"has {have} bytes of text to edit (make the page larger: html_bytes)")
    later = []
    for number, fraction in enumerate(fractions, 2):
        files = dict(site.files)
        for path in chosen:
            files[path] = edit(site.files[path], fraction, spread, f"{site.name}/{path}/v{number}",
                                        _is_code(path)).body
        later.append(files)
    manifest = site.manifest.model_copy(update={
        "versions": 1 + len(later),
        "dictionaries": {p: encodings.available_dictionary(b) for p, b in sorted(site.files.items())
                         if encodings.is_text(p)},
        "changed": {number: sorted(chosen) for number in range(2, 2 + len(later))},
    })
    return GeneratedSite(SiteManifest.model_validate(manifest.model_dump()), site.files, site.levels, tuple(later))
