"""State kept inside the repository: event chains on refs, notes, the fold and its cache."""
