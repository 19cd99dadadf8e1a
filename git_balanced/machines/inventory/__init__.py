"""Which machines there are: the ones you added, ticks and readiness per repository, and the placement rule."""
