"""git/discover.py tells a config that moves the working tree (or is bare, or includes other files) line by line,
without importing re: what it says is what its pattern, MOVES_TREE, says of the same text."""

from __future__ import annotations

import random
import re

from git_balanced.git.discover import MOVES_TREE, moves_tree

PATTERN = re.compile(MOVES_TREE, re.IGNORECASE | re.MULTILINE)
CONFIGS = ["[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = true\n",
           "[core]\n\tbare = true\n", "[core]\n  Bare=Yes\n", "[core]\n\tbare = off\n", "[core]\n\tbare =\n",
           "[core]\n\tworktree = /elsewhere\n", "[core]\n\tWorkTree\t= x\n", "[core]\n\tworktrees = x\n",
           '[include]\n\tpath = other\n', '[ includeIf "gitdir:~/"]\n', '[remote "include"]\n', "\t[INCLUDE]\n",
           "# bare = true\n", "[user]\n\tname = Jörg\n\tbare = true\n", "[user]\n\tname = Jörg\n", "bare = 1\r\n",
           "bare = 0\n", "bare = _x\n", "bare = -1\n", "bare = \"true\"\n", "  bare = nope\n", ""]
PIECES = ["", " ", "\t", "\r", "\n", "[", "]", "include", "includeIf", "INCLUDE", "worktree", "WorkTree", "bare",
          "BARE", "=", "false", "False", "no", "off", "0", "1", "true", "_x", "-", "core", ".", '"', "é", "K", "ſ", "ı"]


def test_moves_tree_says_what_its_pattern_says() -> None:
    for text in CONFIGS:
        assert moves_tree(text) == (PATTERN.search(text) is not None), text
    rng = random.Random(28)
    for _ in range(10_000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))
        assert moves_tree(text) == (PATTERN.search(text) is not None), repr(text)
