"""The routes to a machine: SSH transport and config, runner sessions, hosts, and the Reach that holds them."""
