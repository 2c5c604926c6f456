"""The lab split across containers (the compose lab): the router and sites roles, served
over a small control channel, and the harness's side of them."""
