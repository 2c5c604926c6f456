"""Pure values and decisions: what a mode, a profile, a spec, a site, a server plan and a
load are, and every rule about them. Nothing here runs a process, opens a socket or a
file, or reads the clock: each module imports without root, Chromium or a database."""
