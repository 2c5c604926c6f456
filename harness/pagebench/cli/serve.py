"""`pagebench serve ...`: one role of a split lab (the compose lab's router and sites
containers), driven by the harness over its control channel."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any, Optional

import typer

from pagebench.cli.common import command, err, fail, out

serve_app = typer.Typer(no_args_is_help=True, help=(
    "Run one role of a split lab (the compose lab's router and sites containers); "
    "`pagebench run --router URL --sites URL` is the harness."))
ListenOpt = Annotated[str, typer.Option(envvar="PAGEBENCH_LISTEN", help=(
    "Control channel address, ADDR:PORT, on the lab's own control network."))]


def _serve(role: str, make: Callable[[], AbstractContextManager[Any]], listen: str) -> None:
    """Serve a role until SIGTERM/SIGINT; whatever it set up is undone on the way out."""
    from pagebench.lab.split.control import parse_listen, serve_until_stopped
    from pagebench.system.signals import Interrupted, signals_raise

    try:
        parse_listen(listen)
    except ValueError as error:
        raise fail(str(error)) from None
    try:
        with signals_raise(), make() as service:
            serve_until_stopped(listen, service.routes(), lambda text: out.print(f"{role}: {text}", highlight=False))
    except OSError as error:
        raise fail(f"--listen {listen}: {error.strerror or error}", 1) from None
    except (Interrupted, KeyboardInterrupt):
        err.print(f"{role}: stopped; what it set up is undone", highlight=False)


@command(serve_app, "router")
def serve_router(
    listen: ListenOpt,
    client_if: Annotated[Optional[str], typer.Option(
        help="Interface toward the client (default: the one holding 198.18.0.1).")] = None,
    server_if: Annotated[Optional[str], typer.Option(
        help="Interface toward the sites (default: the one holding 198.18.1.1).")] = None,
) -> None:
    """The router role: own the emulated link of this network namespace, as the harness asks."""
    from pagebench.lab.split.router import RouterService

    _serve("router", lambda: RouterService(client_if, server_if), listen)


@command(serve_app, "sites")
def serve_sites(
    listen: ListenOpt,
    interface: Annotated[Optional[str], typer.Option(
        help="Interface the server addresses go on (default: the one with an address in 198.18.1.0/24).")] = None,
) -> None:
    """The sites role: serve the test sites the harness asks for, from this network namespace."""
    from pagebench.lab.split.sites import SitesService

    _serve("sites", lambda: SitesService(interface), listen)
