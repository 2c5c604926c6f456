"""Every spec in `experiments/` is one pagebench can run: it parses, and its profiles and
devices are in the built-in tables (a typo there would show only when someone runs it)."""

from __future__ import annotations

import pytest

from pagebench.core.spec.model import parse, resolve_devices, resolve_profiles
from pagebench.yamlfiles import builtin_devices, builtin_profiles, spec_document
from tests.helpers import REPO

SPECS = sorted((REPO / "experiments").glob("*.yaml"))


def test_there_are_specs():
    assert {"demo.yaml", "ci.yaml", "visual.yaml"} <= {path.name for path in SPECS}


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_each_spec_parses_with_the_built_in_tables(path):
    spec = parse(spec_document(path), path.name)
    resolve_profiles(spec, builtin_profiles(), path.name)
    resolve_devices(spec, builtin_devices(), path.name)
