"""The lab's certificates as values: which hostnames the local CA may sign (DNS names
under `.test` only) and where an issued leaf's files are. `lab.tls` issues them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PERMITTED_DOMAIN = "test"
_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class Leaf:
    """An issued leaf certificate's files and the SPKI hash Chromium trusts it by."""

    cert_path: Path  # the leaf alone (what nginx serves)
    key_path: Path
    chain_path: Path  # leaf followed by the CA certificate
    spki_sha256_b64: str  # value for --ignore-certificate-errors-spki-list


def check_hostname(host: str) -> str:
    """A lower-case DNS name under `.test`; anything else is a one-line ValueError."""
    name = host.lower().rstrip(".") if isinstance(host, str) else ""
    labels = name.split(".")
    if len(labels) < 2 or labels[-1] != PERMITTED_DOMAIN or not all(_LABEL.match(part) for part in labels):
        raise ValueError(f"host {host!r}: must be a DNS name ending in .{PERMITTED_DOMAIN} "
                         f"(the local CA signs nothing else)")
    return name


def check_hostnames(hostnames: Iterable[str]) -> tuple[str, ...]:
    """Validated, de-duplicated and sorted (the order does not change the certificate)."""
    if isinstance(hostnames, str):
        hostnames = [hostnames]
    names = tuple(sorted({check_hostname(host) for host in hostnames}))
    if not names:
        raise ValueError("hostnames: at least one is needed")
    return names


