"""Plain git hook scripts, for a repository that does not use pre-commit: `git balanced init --hooks git`
installs them. pyproject.toml ships this folder in the wheel as the package `git_balanced.hook_scripts`;
git itself only runs the files named after hooks, so this one is never run as a hook."""
