"""A run as a person reads it: the terminal table and JSON, the single-file HTML report and its charts."""
