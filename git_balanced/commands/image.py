"""`git balanced image build`: an image for container machines, from Debian's packages and the pinned agent."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.machines.prepare import image


def build_command(*, agent: str | None, tag: str | None, engine: str, suite: str) -> int:
    """Build the image, import it into the engine and say how a machine uses it."""
    recipe = image.Recipe(tag=tag or image.default_tag(agent), agent=agent, suite=suite, engine=engine)
    seconds = image.build(recipe, lambda line: ui.say(f"image: {line}"))
    ui.say(f"Built {recipe.tag} in {seconds:.0f} s: git, python3" + (f" and {agent}" if agent else "") + ".")
    ui.say(f"Use it: `git balanced machines add box --container {recipe.tag}"
           + (" --engine docker" if engine == "docker" else "") + "`, then `git balanced tick box` and "
           "`git balanced ready box`.")
    return 0
