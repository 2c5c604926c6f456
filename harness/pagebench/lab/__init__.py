"""The lab on this machine: the bed the run's commands run in (natively three network
namespaces, `netns`; in a split lab a role's own namespace, `split.local`), the TLS
authority, the site files, nginx and Caddy, the browser, and the lab built for a run
(`build`)."""
