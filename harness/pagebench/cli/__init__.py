"""The `pagebench` command line: parsing and printing only."""
