"""The `pagebench` command: its groups put together. Each module of this package holds
the commands of one group and only parses and prints; the work lives elsewhere."""

from __future__ import annotations

import typer

from pagebench.cli.lab import lab_app
from pagebench.cli.link import link_app
from pagebench.cli.results import results_app
from pagebench.cli.run import run_app
from pagebench.cli.serve import serve_app
from pagebench.cli.site import site_app

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Page-load benchmarking over an emulated link.")
app.add_typer(link_app, name="link")
app.add_typer(lab_app)  # cleanup, doctor, shell
app.add_typer(run_app)  # run, reproduce
app.add_typer(results_app)  # report, compare, export
app.add_typer(serve_app, name="serve")
app.add_typer(site_app, name="site")


def main() -> None:
    app()
