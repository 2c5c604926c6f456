"""The seeds' claims as data, and `pagebench reproduce`'s verdicts and figures from stored runs."""
