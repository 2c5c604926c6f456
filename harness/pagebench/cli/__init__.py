"""The `pagebench` command line: parsing and printing only, a module per group of
commands (`main` puts them together); the only package that knows Typer."""
