"""The results store: the schema every reader relies on (report, Grafana, exports), and
flat exports of a run."""
