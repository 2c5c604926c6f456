"""Every error pagebench defines derives from the one base, so the command line catches
one class; only the stop a signal asks for is not one (it must unwind every `with`)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pagebench
from pagebench.core.errors import PagebenchError
from pagebench.system.signals import Interrupted


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a pagebench module, by its full name."""
    found = {}
    for module in pkgutil.walk_packages(pagebench.__path__, "pagebench."):
        if module.name.endswith("__main__"):  # importing it runs the command
            continue
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.name:
                found[f"{module.name}.{name}"] = value
    return found


def test_every_error_class_derives_from_the_base():
    found = defined_exceptions()
    assert len(found) >= 17, sorted(found)  # the walk did find them
    strays = [name for name, cls in found.items() if not issubclass(cls, PagebenchError) and cls is not Interrupted]
    assert strays == []


def test_a_stop_by_signal_is_not_an_error():
    assert issubclass(Interrupted, BaseException) and not issubclass(Interrupted, Exception)


def test_no_kind_has_an_exit_code_of_its_own():
    """Every error exits 2 (`cli.common.reported`): 1 is kept for a check's no."""
    found = defined_exceptions()
    assert not [name for name, cls in found.items() if "exit_code" in vars(cls)]
    assert all(cls.hint is None for cls in found.values() if issubclass(cls, PagebenchError))
