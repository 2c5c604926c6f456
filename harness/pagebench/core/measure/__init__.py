"""What one load measured: the browser's record checked against the link and the servers, and the analytic lower bound."""
