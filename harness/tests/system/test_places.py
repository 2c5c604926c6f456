"""Where pagebench's things are on this machine: here, the one reader of `PAGEBENCH_TAG`
(`run_prefix`), which the core's pure `new_prefix` is given."""

from __future__ import annotations

import pytest

from pagebench.core.layout import NAMESPACE_PATTERN
from pagebench.system.places import TAG_ENV, run_prefix


def test_a_run_prefix_carries_the_groups_tag_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(TAG_ENV, "t9z")
    tagged = {run_prefix() for _ in range(20)}
    assert len(tagged) == 20 and all(p.startswith("pbt9z") and len(p) == len("pbt9z") + 6 for p in tagged)
    monkeypatch.delenv(TAG_ENV)
    untagged = run_prefix()
    assert NAMESPACE_PATTERN.match(f"{untagged}-router") and len(untagged) == len("pb") + 6


def test_a_bad_tag_names_the_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(TAG_ENV, "Tests")
    with pytest.raises(ValueError) as error:
        run_prefix()
    assert str(error.value) == f"{TAG_ENV}: tag 'Tests': at most 6 lower-case letters or digits"
