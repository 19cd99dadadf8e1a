"""A usage limit whose reset counts from the request it answers (`usage_limit_in`), spoken to over real HTTP."""

from __future__ import annotations

import time

from tests.support.model_server import ModelServer, say, usage_limit_in
from tests.support.test_model_server import post


def test_a_limit_resets_seconds_after_each_request_it_answers_and_the_server_keeps_each_reset() -> None:
    with ModelServer([usage_limit_in(30, times=2), say("back")]) as server:
        before = time.time()
        status, headers, _ = post(server, "anthropic")
        assert status == 429
        status, _, body = post(server, "responses")
        after = time.time()
        assert status == 429
        assert len(server.resets) == 2
        assert all(int(before) + 30 <= r <= int(after) + 30 for r in server.resets), (before, server.resets, after)
        assert headers["anthropic-ratelimit-unified-reset"] == str(server.resets[0])
        assert body[0]["error"]["resets_at"] == server.resets[1]
        assert post(server, "chat")[0] == 200, "then the script goes on"
