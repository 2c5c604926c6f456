"""Experiment specs: the YAML's model, and the pure plan of a run made from it."""
