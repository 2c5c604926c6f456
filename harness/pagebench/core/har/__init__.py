"""HAR files (HTTP Archive) as sites of the lab: parsed, their hosts and headers rewritten for the lab, imported."""
