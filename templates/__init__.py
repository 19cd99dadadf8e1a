"""What `git balanced` writes into a repository and fills in: settings for common stacks, a sample plan, the
lead's and the workers' instructions, the agents' hook configs. pyproject.toml ships this folder in the
wheel as the package `git_balanced.templates`; the code reads it through `git_balanced.bundled`."""
