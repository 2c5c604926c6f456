"""Test sites as data: the site model, the kinds of site a spec names, recorded pages, the
built-in and generated pages and the media they are made of, and any site's summary."""
