"""What the split lab's roles (router, sites) share: a `LocalBed` held while the role
serves, what the role changes in its namespace made on the way in (undone if that fails)
and put back on the way out before the bed goes, and its endpoints, each declared beside
its handler (`@route("POST /link/apply")`), for the control channel."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Self, TypeVar

from pagebench.lab.split.control import Routes
from pagebench.lab.split.local import LocalBed
from pagebench.system.commands import LabError

Method = Callable[[Any, dict[str, Any]], dict[str, Any]]
_ROUTE = "_pagebench_route"
T = TypeVar("T")


def route(name: str) -> Callable[[Method], Method]:
    """Makes a role's method the handler of the route `name` ("POST /link/apply")."""

    def declare(method: Method) -> Method:
        setattr(method, _ROUTE, name)
        return method

    return declare


class Role(ABC):
    """Context manager: the bed, then `set_up`; on exit `tear_down`, then the bed closes
    (its processes stopped, its state directory removed) whatever tearing down raised."""

    bed: LocalBed

    @abstractmethod
    def set_up(self) -> None:
        """What the role changes in its namespace, once its bed is there."""

    @abstractmethod
    def tear_down(self) -> None:
        """What puts the namespace back as the role found it."""

    def __enter__(self) -> Self:
        self.bed.__enter__()
        try:
            self.set_up()
        except BaseException:
            self.bed.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.tear_down()
        finally:
            self.bed.close()

    def routes(self) -> Routes:
        """Its `@route`s, bound: what the control channel serves."""
        declared = inspect.getmembers(type(self), lambda member: hasattr(member, _ROUTE))
        return {getattr(method, _ROUTE): getattr(self, name) for name, method in declared}

    @staticmethod
    def needs(made: T | None, what: str, call: str) -> T:
        """What the endpoint `call` made (`what`), for an endpoint that works on it; until
        `call` is made, a LabError saying to make it first."""
        if made is None:
            raise LabError(f"no {what} yet: {call} first")
        return made
