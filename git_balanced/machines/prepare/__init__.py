"""Getting a machine ready: its copy of the repository, the agents installed and signed in there, leftovers."""
