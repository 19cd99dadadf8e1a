"""A scripted model server on 127.0.0.1 that speaks the wire formats of the three coding-agent CLIs.

Claude Code talks Anthropic Messages (`POST /v1/messages`, SSE), Codex talks OpenAI Responses
(`POST /v1/responses`, SSE), Pi talks OpenAI Chat Completions (`POST /v1/chat/completions`, SSE).
A test queues turns; each request that offers tools takes the next turn, answered in the caller's own
tool names and argument shapes. Requests without tools (titles, summaries) get a short text and take no
turn. Every request is recorded for assertions.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Usage:
    input: int = 1200
    output: int = 80
    cached: int = 0


@dataclass(frozen=True)
class Turn:
    """One scripted answer: a tool call, a final text, or a failure."""

    kind: str  # "write" | "shell" | "tool" | "text" | "limit" | "error" | "auth" | "hang"
    path: str = ""
    content: str = ""
    command: str = ""
    text: str = ""
    reset_at: float = 0.0
    reset_in: float = 0.0  # a limit's reset this many seconds after the request it answers (when not 0)
    status: int = 500
    seconds: float = 0.0
    used_percent: float = 100.0
    times: int | None = 1  # failures: how many requests it answers; None sticks to the end
    usage: Usage = field(default_factory=Usage)


def write_file(path: str, content: str, usage: Usage | None = None) -> Turn:
    """A tool call that writes `content` to `path` (give an absolute path: Claude's Write requires it)."""
    return Turn("write", path=path, content=content, usage=usage or Usage())


def run_shell(command: str, usage: Usage | None = None) -> Turn:
    """A tool call that runs a shell command."""
    return Turn("shell", command=command, usage=usage or Usage())


def call_tool(name: str, args: dict[str, Any], usage: Usage | None = None) -> Turn:
    """A call of the tool `name` with `args`: the offered tool of that name, or the one whose name ends in
    `__NAME` (an MCP server's tool, such as `mcp__balanced__plan`)."""
    return Turn("tool", command=name, content=json.dumps(args), usage=usage or Usage())


def say(text: str, usage: Usage | None = None) -> Turn:
    """A final answer that ends the agent's turn."""
    return Turn("text", text=text, usage=usage or Usage())


def usage_limit(reset_at: float, used_percent: float = 100.0, times: int | None = None) -> Turn:
    """A 429 saying the plan's usage window is spent until `reset_at` (epoch seconds)."""
    return Turn("limit", reset_at=reset_at, status=429, used_percent=used_percent, times=times)


def usage_limit_in(seconds: float, used_percent: float = 100.0, times: int | None = None) -> Turn:
    """A 429 saying the plan's usage window is spent for `seconds` from the request it answers, however long
    the agent took to send it (the server's `resets` has each reset it said)."""
    return Turn("limit", reset_in=seconds, status=429, used_percent=used_percent, times=times)


def server_error(status: int = 500, times: int | None = None) -> Turn:
    """An HTTP error with the provider's error body."""
    return Turn("error", status=status, times=times)


def unauthorized(times: int | None = None) -> Turn:
    """A 401: the key is not accepted."""
    return Turn("auth", status=401, times=times)


def hang(seconds: float = 3600.0, times: int | None = None) -> Turn:
    """Accept the request and answer nothing for `seconds` (or until the server stops)."""
    return Turn("hang", seconds=seconds, times=times)


def write_plan(content: str, usage: Usage | None = None) -> Turn:
    """A Write of `content` to the plan file that Claude Code's plan mode names in the request."""
    return Turn("plan", content=content, usage=usage or Usage())


FAILURES = ("limit", "error", "auth", "hang")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    main: bool  # took a scripted turn
    route: str = ""  # the route whose turn it took (a subagent's, say), if any


class ModelServer:
    """Start with `with ModelServer([turns]) as server:`; `server.url` is the base URL (no /v1)."""

    def __init__(self, turns: list[Turn] | None = None, *, final: str = "Done.",
                 plan_used_percent: float | None = None, extra_usage: bool = False) -> None:
        self._turns: deque[Turn] = deque(turns or [])
        # When set, successful answers carry the usage-window headers of a plan nearing its limit.
        self.plan_used_percent = plan_used_percent
        # When set, successful answers say the plan's window is spent and the account pays for extra usage.
        self.extra_usage = extra_usage
        self._final = final
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.requests: list[Request] = []
        self.resets: list[int] = []  # the reset (epoch seconds) of each usage limit answered, in order
        self._httpd: ThreadingHTTPServer | None = None
        self._routes: dict[str, tuple[deque[Turn], int]] = {}
        self._taken = 0  # how many turns of the main script were taken
        self._taken_changed = threading.Condition(self._lock)

    # -- script ------------------------------------------------------------------------------------
    def add(self, *turns: Turn) -> None:
        """Queue more turns."""
        with self._lock:
            self._turns.extend(turns)

    def remaining(self) -> int:
        """How many scripted turns have not been taken yet."""
        with self._lock:
            return len(self._turns)

    def main_requests(self) -> list[Request]:
        """The recorded requests that took a scripted turn."""
        return [r for r in self.requests if r.main]

    def route(self, marker: str, turns: list[Turn], *, after: int = 0) -> None:
        """Requests whose first message holds `marker` (a subagent's, started with a prompt holding it) take
        `turns` instead of the main script, once `after` of the main script's turns were taken (then a moment
        more, so the main agent has read the answer of the last); past its turns a route says "Done."."""
        with self._lock:
            self._routes[marker] = (deque(turns), after)

    def _routed(self, body: dict) -> tuple[str, Turn] | None:
        """The route of a request and its next turn, waiting for its moment; None for the main script."""
        messages = body.get("messages") or body.get("input") or []
        first = json.dumps(messages[0]) if messages else ""
        marker = next((m for m in self._routes if m in first), None)
        if marker is None:
            return None
        turns, after = self._routes[marker]
        with self._taken_changed:
            if not self._taken_changed.wait_for(lambda: self._taken >= after, timeout=60):
                raise AssertionError(f"route {marker!r} waited for {after} main turns; {self._taken} were taken")
        if after:
            time.sleep(0.5)
        with self._lock:
            return marker, turns.popleft() if turns else say(self._final)

    def _take(self) -> Turn:
        with self._lock:
            self._taken += 1
            self._taken_changed.notify_all()
            if not self._turns:
                return say(self._final)
            turn = self._turns[0]
            if turn.kind in FAILURES and (turn.times is None or turn.times > 1):
                # A failure answers `times` requests; one without a count sticks to the end.
                if turn.times is not None:
                    self._turns[0] = Turn(**{**turn.__dict__, "times": turn.times - 1})
                return turn
            return self._turns.popleft()

    def peek(self) -> Turn | None:
        """The next scripted turn, left in place."""
        with self._lock:
            return self._turns[0] if self._turns else None

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    # -- lifecycle ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ModelServer:
        server = self

        class Bound(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Bound)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # releases hanging requests
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    def wait_stopping(self, seconds: float) -> None:
        """Sleep up to `seconds`, returning early when the server stops (a hang's wait)."""
        self._stopping.wait(seconds)

    def record(self, handler: BaseHTTPRequestHandler, body: Any, main: bool, route: str = "") -> None:
        with self._lock:
            self.requests.append(Request(handler.command, handler.path, dict(handler.headers), body, main, route))


# -- the wire ------------------------------------------------------------------------------------------

def _patch(path: str, content: str) -> str:
    """Codex's apply_patch grammar for adding a whole file."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def _plan_file(body: dict) -> str:
    """The plan file Claude Code's plan mode tells the model to write (`…/plans/<slug>.md`)."""
    found = re.findall(r"create your plan at (/[^\s\\\"]+\.md)|plan file (?:exists )?at (/[^\s\\\"]+\.md)",
                       json.dumps(body))
    paths = [a or b for a, b in found]
    assert paths, "no plan file is named in the request: is the agent in plan mode?"
    return paths[-1]


def _tool_names(body: dict) -> set[str]:
    return {t.get("name") or (t.get("function") or {}).get("name") or "" for t in body.get("tools") or []}


def _offered(body: dict, name: str) -> str:
    """The name under which the caller offers the tool `name` (MCP tools come prefixed with their server)."""
    names = _tool_names(body)
    return name if name in names else next((n for n in sorted(names) if n.endswith(f"__{name}")), name)


def _must_search(body: dict, name: str) -> bool:
    """Whether the tool `name` is deferred behind the caller's `tool_search` and was not found yet."""
    tools = body.get("tools") or []
    if not any(t.get("type") == "tool_search" for t in tools) or _offered(body, name) != name:
        return False
    if name in _tool_names(body):
        return False
    return _searched_namespace(body, name) is None


def _searched_namespace(body: dict, name: str) -> str | None:
    """The namespace (`mcp__balanced`) in which a `tool_search_output` of the request found the tool `name`."""
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            for space in item.get("tools") or []:
                if any(t.get("name") == name for t in space.get("tools") or []):
                    return str(space.get("name"))
    return None


EXTRA_USAGE_RESET = 3 * 3600  # seconds from now: when the spent window of a plan on extra usage resets


def _extra_usage_headers(wire: str) -> dict[str, str]:
    """A served answer's headers for a plan whose 5-hour window is spent, its extra usage (paid) paying."""
    reset = str(int(time.time()) + EXTRA_USAGE_RESET)
    if wire == "anthropic":
        return {"anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": reset,
                "anthropic-ratelimit-unified-representative-claim": "five_hour",
                "anthropic-ratelimit-unified-5h-status": "rejected",
                "anthropic-ratelimit-unified-5h-utilization": "1.00",
                "anthropic-ratelimit-unified-5h-reset": reset,
                "anthropic-ratelimit-unified-overage-status": "allowed",
                "anthropic-ratelimit-unified-overage-reset": str(int(time.time()) + 30 * 86400)}
    if wire == "responses":
        return {"x-codex-primary-used-percent": "100.0", "x-codex-primary-window-minutes": "300",
                "x-codex-primary-reset-at": reset, "x-codex-credits-has-credits": "true",
                "x-codex-credits-unlimited": "false", "x-codex-credits-balance": "12.50"}
    return {}


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._read_body()
        self.owner.record(self, None, False)
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [], "models": []})
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"raw": raw.decode(errors="replace")}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.owner.record(self, body, False)
            return self._json(200, {"input_tokens": 1000})
        wire = ("anthropic" if path.endswith("/messages") else "responses" if path.endswith("/responses")
                else "chat" if path.endswith("/chat/completions") else "")
        if not wire:
            self.owner.record(self, body, False)
            return self._json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})
        main = bool(body.get("tools"))
        routed = self.owner._routed(body) if main else None
        if routed is not None:
            self.owner.record(self, body, False, routed[0])
            events = {"anthropic": self._anthropic, "responses": self._responses, "chat": self._chat}[wire]
            return self._sse(events(routed[1], body))
        self.owner.record(self, body, main)
        ahead = self.owner.peek() if main and wire == "responses" else None
        if ahead is not None and ahead.kind == "tool" and _must_search(body, ahead.command):
            # Codex 0.171 hides MCP tools behind `tool_search`: find the tool first, then the turn calls it.
            return self._sse(self._responses(Turn("search", command=ahead.command, usage=ahead.usage), body),
                             self._window_headers(wire))
        turn = self.owner._take() if main else say("Scripted side answer.", Usage(50, 5))
        if turn.kind == "hang":
            self.owner.wait_stopping(turn.seconds)
            self.close_connection = True
            return None
        if turn.kind in FAILURES:
            return self._failure(wire, turn)
        events = {"anthropic": self._anthropic, "responses": self._responses, "chat": self._chat}[wire]
        self._sse(events(turn, body), self._window_headers(wire))

    # -- plumbing ----------------------------------------------------------------------------------
    def _read_body(self) -> bytes:
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _window_headers(self, wire: str) -> dict[str, str]:
        if self.owner.extra_usage:
            return _extra_usage_headers(wire)
        used = self.owner.plan_used_percent
        if used is None:
            return {}
        reset = str(int(time.time()) + 3600)
        if wire == "anthropic":
            return {"anthropic-ratelimit-unified-status": "allowed_warning",
                    "anthropic-ratelimit-unified-reset": reset,
                    "anthropic-ratelimit-unified-representative-claim": "five_hour",
                    "anthropic-ratelimit-unified-5h-status": "allowed_warning",
                    "anthropic-ratelimit-unified-5h-utilization": f"{used / 100:.2f}",
                    "anthropic-ratelimit-unified-5h-reset": reset,
                    "anthropic-ratelimit-unified-5h-surpassed-threshold": "0.75"}
        if wire == "responses":
            return {"x-codex-primary-used-percent": f"{used:.1f}", "x-codex-primary-window-minutes": "300",
                    "x-codex-primary-reset-at": reset}
        return {}

    def _sse(self, events: list[tuple[str | None, dict | str]], headers: dict[str, str] | None = None
             ) -> None:
        out = bytearray()
        for name, data in events:
            if name:
                out += f"event: {name}\n".encode()
            text = data if isinstance(data, str) else json.dumps(data)
            out += f"data: {text}\n\n".encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(out)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(bytes(out))

    def _failure(self, wire: str, turn: Turn) -> None:
        body: dict
        reset = int(time.time() + turn.reset_in) if turn.reset_in else int(turn.reset_at)
        left = max(0, reset - int(time.time()))
        if turn.kind == "limit":
            self.owner.resets.append(reset)
        if turn.kind == "auth":
            if wire == "anthropic":
                body = {"type": "error",
                        "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
            else:
                body = {"error": {"type": "invalid_request_error", "code": "invalid_api_key",
                                  "message": "Incorrect API key provided."}}
            return self._json(401, body)
        if turn.kind == "error":
            kind, text = (("api_error", "Internal server error") if turn.status >= 500
                          else ("invalid_request_error", "Invalid request: the body does not fit the schema"))
            if wire == "anthropic":
                body = {"type": "error", "error": {"type": kind, "message": text}}
            else:
                body = {"error": {"type": kind, "message": text, "code": kind}}
            return self._json(turn.status, body)
        headers: dict[str, str] = {}
        if wire == "anthropic":
            # What Claude Code reads off a refused request of a subscription plan.
            headers = {
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(reset),
                "anthropic-ratelimit-unified-representative-claim": "five_hour",
                "anthropic-ratelimit-unified-5h-status": "rejected",
                "anthropic-ratelimit-unified-5h-utilization": f"{turn.used_percent / 100:.2f}",
                "anthropic-ratelimit-unified-5h-reset": str(reset),
                "anthropic-ratelimit-unified-fallback": "unavailable",
                "retry-after": str(left),
            }
            body = {"type": "error", "error": {
                "type": "rate_limit_error", "message": "This request would exceed your rate limit."}}
        elif wire == "responses":
            headers = {
                "x-codex-primary-used-percent": f"{turn.used_percent:.1f}",
                "x-codex-primary-window-minutes": "300",
                "x-codex-primary-reset-at": str(reset),
                "x-codex-primary-reset-after-seconds": str(left),
                "x-codex-secondary-used-percent": "40.0",
                "x-codex-secondary-window-minutes": "10080",
                "x-codex-secondary-reset-at": str(reset + 5 * 86400),
            }
            body = {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                              "plan_type": "plus", "resets_at": reset, "resets_in_seconds": left}}
        else:
            headers = {"retry-after": str(left)}
            body = {"error": {"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
                              "message": "Rate limit reached: your plan's usage limit resets later."}}
        self._json(429, body, headers)

    # -- Anthropic Messages ------------------------------------------------------------------------
    def _anthropic(self, turn: Turn, body: dict) -> list[tuple[str | None, dict | str]]:
        u = turn.usage
        msg_id = self.owner.next_id("msg")
        start = {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": u.input, "output_tokens": 1, "cache_read_input_tokens": u.cached,
                      "cache_creation_input_tokens": 0}}}
        events: list[tuple[str | None, dict | str]] = [("message_start", start)]
        if turn.kind == "plan":  # the plan file's path is the session's own, known only from its request
            turn = Turn("write", path=_plan_file(body), content=turn.content, usage=turn.usage)
        if turn.kind == "text":
            block: dict = {"type": "text", "text": ""}
            delta: dict = {"type": "text_delta", "text": turn.text}
            stop = "end_turn"
        else:
            name, args = (("Write", {"file_path": turn.path, "content": turn.content}) if turn.kind == "write"
                          else (_offered(body, turn.command), json.loads(turn.content)) if turn.kind == "tool"
                          else ("Bash", {"command": turn.command, "description": "Run a command"}))
            block = {"type": "tool_use", "id": self.owner.next_id("toolu"), "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            stop = "tool_use"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": u.output}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events

    # -- OpenAI Responses (Codex) ------------------------------------------------------------------
    def _responses(self, turn: Turn, body: dict) -> list[tuple[str | None, dict | str]]:
        u = turn.usage
        resp_id = self.owner.next_id("resp")
        names = _tool_names(body)
        if turn.kind == "text":
            item: dict = {"type": "message", "role": "assistant", "id": self.owner.next_id("msg"),
                          "status": "completed",
                          "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
        elif turn.kind == "search":
            item = {"type": "tool_search_call", "id": self.owner.next_id("ts"), "status": "completed",
                    "call_id": self.owner.next_id("call"), "execution": "client",
                    "arguments": {"query": turn.command, "limit": 8}}
        elif turn.kind == "tool":
            item = {"type": "function_call", "id": self.owner.next_id("fc"), "status": "completed",
                    "call_id": self.owner.next_id("call"), "name": _offered(body, turn.command),
                    "arguments": turn.content}
            space = _searched_namespace(body, turn.command)
            if space:  # a tool found by tool_search is called by its name in its namespace
                item["namespace"] = space
        elif turn.kind == "write" and "apply_patch" in names:
            item = {"type": "custom_tool_call", "id": self.owner.next_id("ctc"), "status": "completed",
                    "call_id": self.owner.next_id("call"), "name": "apply_patch",
                    "input": _patch(turn.path, turn.content)}
        else:
            command = turn.command if turn.kind == "shell" else (
                f"cat > {json.dumps(turn.path)} <<'EOF'\n{turn.content}EOF")
            shells = ("exec_command", "shell_command", "shell")
            shell = next((n for n in shells if n in names), "exec_command")
            args = {"cmd": command} if shell == "exec_command" else {"command": command}
            item = {"type": "function_call", "id": self.owner.next_id("fc"), "status": "completed",
                    "call_id": self.owner.next_id("call"), "name": shell, "arguments": json.dumps(args)}
        usage = {"input_tokens": u.input, "input_tokens_details": {"cached_tokens": u.cached},
                 "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": u.input + u.output}
        base = {"id": resp_id, "object": "response", "model": body.get("model", "scripted")}
        return [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                           "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                **base, "status": "completed", "output": [item], "usage": usage}}),
        ]

    # -- OpenAI Chat Completions (Pi) --------------------------------------------------------------
    def _chat(self, turn: Turn, body: dict) -> list[tuple[str | None, dict | str]]:
        u = turn.usage
        base = {"id": self.owner.next_id("chatcmpl"), "object": "chat.completion.chunk",
                "created": int(time.time()), "model": body.get("model", "scripted")}

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        if turn.kind == "text":
            events = [chunk({"role": "assistant", "content": turn.text}), chunk({}, "stop")]
        else:
            name, args = (("write", {"path": turn.path, "content": turn.content}) if turn.kind == "write"
                          else (_offered(body, turn.command), json.loads(turn.content)) if turn.kind == "tool"
                          else ("bash", {"command": turn.command}))
            call = {"index": 0, "id": self.owner.next_id("call"), "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
            events = [chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                      chunk({}, "tool_calls")]
        usage = {"prompt_tokens": u.input, "completion_tokens": u.output, "total_tokens": u.input + u.output,
                 "prompt_tokens_details": {"cached_tokens": u.cached}}
        out: list[tuple[str | None, dict | str]] = [(None, e) for e in events]
        out += [(None, {**base, "choices": [], "usage": usage}), (None, "[DONE]")]
        return out
