"""The scripted model server, spoken to over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request

import pytest

from tests.support.model_server import (
    ModelServer,
    Usage,
    hang,
    run_shell,
    say,
    server_error,
    unauthorized,
    usage_limit,
    write_file,
)

TOOLS = {"anthropic": [{"name": "Write"}, {"name": "Bash"}],
         "responses": [{"type": "function", "name": "exec_command"},
                       {"type": "custom", "name": "apply_patch"}],
         "chat": [{"type": "function", "function": {"name": "write"}}]}
PATHS = {"anthropic": "/v1/messages?beta=true", "responses": "/v1/responses", "chat": "/v1/chat/completions"}


def post(server: ModelServer, wire: str, tools: bool = True, timeout: float = 10) -> tuple[int, dict, list]:
    """POST one request of `wire`; returns (status, headers, SSE data objects or the JSON error body)."""
    body = {"model": "m", "stream": True, **({"tools": TOOLS[wire]} if tools else {})}
    req = urllib.request.Request(server.url + PATHS[wire], data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode()
            data = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
            return resp.status, dict(resp.headers), [d if d == "[DONE]" else json.loads(d) for d in data]
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), [json.loads(err.read())]


def test_anthropic_tool_call_then_text() -> None:
    with ModelServer([write_file("/t/a.txt", "hi\n", Usage(10, 2)), say("done")]) as server:
        status, _, events = post(server, "anthropic")
        assert status == 200
        kinds = [e["type"] for e in events]
        assert kinds == ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
                         "message_delta", "message_stop"]
        assert events[1]["content_block"]["name"] == "Write"
        assert json.loads(events[2]["delta"]["partial_json"]) == {"file_path": "/t/a.txt", "content": "hi\n"}
        assert events[4]["delta"]["stop_reason"] == "tool_use" and events[4]["usage"]["output_tokens"] == 2
        assert events[0]["message"]["usage"]["input_tokens"] == 10
        _, _, events = post(server, "anthropic")
        assert events[2]["delta"] == {"type": "text_delta", "text": "done"}
        assert server.remaining() == 0


def test_responses_write_is_an_apply_patch_and_shell_an_exec_command() -> None:
    with ModelServer([write_file("/t/a.txt", "one\ntwo\n"), run_shell("ls"), say("ok")]) as server:
        _, _, events = post(server, "responses")
        item = events[-1]["response"]["output"][0]
        assert events[-1]["type"] == "response.completed"
        assert item["type"] == "custom_tool_call" and item["name"] == "apply_patch"
        assert item["input"] == "*** Begin Patch\n*** Add File: /t/a.txt\n+one\n+two\n*** End Patch\n"
        _, _, events = post(server, "responses")
        call = events[-1]["response"]["output"][0]
        assert call["name"] == "exec_command" and json.loads(call["arguments"]) == {"cmd": "ls"}
        _, _, events = post(server, "responses")
        assert events[-1]["response"]["output"][0]["content"][0]["text"] == "ok"
        assert events[-1]["response"]["usage"]["input_tokens"] == 1200


def test_chat_tool_call_usage_and_done() -> None:
    with ModelServer([write_file("/t/a.txt", "x"), say("fine")]) as server:
        _, _, events = post(server, "chat")
        call = events[0]["choices"][0]["delta"]["tool_calls"][0]["function"]
        assert call["name"] == "write"
        assert json.loads(call["arguments"]) == {"path": "/t/a.txt", "content": "x"}
        assert events[1]["choices"][0]["finish_reason"] == "tool_calls"
        assert events[2]["usage"]["prompt_tokens"] == 1200 and events[-1] == "[DONE]"


def test_side_requests_take_no_turn_and_everything_is_recorded() -> None:
    with ModelServer([say("main answer")]) as server:
        _, _, events = post(server, "anthropic", tools=False)
        assert events[2]["delta"]["text"] == "Scripted side answer."
        assert server.remaining() == 1
        post(server, "anthropic")
        assert [r.main for r in server.requests] == [False, True]
        assert server.main_requests()[0].body["tools"] == TOOLS["anthropic"]
        assert server.requests[0].path == "/v1/messages?beta=true"


def test_an_empty_queue_answers_the_final_text() -> None:
    with ModelServer([], final="All done.") as server:
        _, _, events = post(server, "chat")
        assert events[0]["choices"][0]["delta"]["content"] == "All done."


def test_usage_limit_headers_and_bodies_per_wire() -> None:
    reset = int(time.time()) + 3600
    with ModelServer([usage_limit(reset, used_percent=100.0)]) as server:
        status, headers, body = post(server, "anthropic")
        assert status == 429
        assert headers["anthropic-ratelimit-unified-status"] == "rejected"
        assert headers["anthropic-ratelimit-unified-reset"] == str(reset)
        assert headers["anthropic-ratelimit-unified-representative-claim"] == "five_hour"
        assert body[0]["error"]["type"] == "rate_limit_error"
        status, headers, body = post(server, "responses")
        assert status == 429 and headers["x-codex-primary-used-percent"] == "100.0"
        assert body[0]["error"]["type"] == "usage_limit_reached" and body[0]["error"]["resets_at"] == reset
        status, _, body = post(server, "chat")
        assert status == 429 and body[0]["error"]["code"] == "rate_limit_exceeded"
        assert server.remaining() == 1, "a limit sticks until the script says otherwise"


def test_failures_answer_as_many_times_as_told() -> None:
    with ModelServer([server_error(503, times=2), unauthorized(times=1), say("back")]) as server:
        assert post(server, "chat")[0] == 503
        assert post(server, "anthropic")[0] == 503
        status, _, body = post(server, "anthropic")
        assert status == 401 and body[0]["error"]["type"] == "authentication_error"
        assert post(server, "chat")[2][0]["choices"][0]["delta"]["content"] == "back"


def test_count_tokens_and_unknown_routes() -> None:
    with ModelServer() as server:
        req = urllib.request.Request(server.url + "/v1/messages/count_tokens", data=b"{}", method="POST")
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.loads(resp.read()) == {"input_tokens": 1000}
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(server.url + "/v1/nothing", timeout=5)
        assert err.value.code == 404


def test_a_hang_answers_nothing_until_the_server_stops() -> None:
    with ModelServer([hang(30)]) as server:
        started = time.monotonic()
        with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
            post(server, "anthropic", timeout=1)
        assert time.monotonic() - started < 5
    # Leaving the block released the hanging handler: the port is closed.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=1)
