"""HAR files (HTTP Archive) as sites of the lab: read, rewritten for the lab's hosts, imported, described."""
