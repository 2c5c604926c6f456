"""Test sites as data: the site model, recorded pages, and the generators of built-in and generated pages."""
