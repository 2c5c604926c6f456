"""The origin servers as processes: nginx and Caddy run in the server namespace, with their logs."""
