"""The results store: the schema every reader relies on (report, Grafana, exports), its
migrations, and the typed rows its reads return."""
