"""Requests to a machine sent together: answers read ahead, and housekeeping sent in the background."""

from __future__ import annotations

import threading
from typing import Any

from git_balanced.machines.reach import batched


def test_read_ahead_answers_each_request_once_from_one_message() -> None:
    sent: list[list[dict[str, Any]]] = []

    def send(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent.append(requests)
        return [{"data": r["job"] * 2} for r in requests]

    ahead = batched.ReadAhead()
    ahead.ask([(("a", "ka"), {"job": "a"}), (("b", "kb"), {"job": "b"})], send)
    assert ahead.take(("b", "kb"), 5) == {"data": "bb"}
    assert ahead.take(("a", "ka"), 5) == {"data": "aa"}
    assert len(sent) == 1  # both in one message
    assert ahead.take(("a", "ka"), 5) is None  # taken once: a second read goes over the network


def test_read_ahead_gives_nothing_for_a_failed_message_or_a_forgotten_job() -> None:
    def fail(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise OSError("the machine went away")

    ahead = batched.ReadAhead()
    ahead.ask([(("a", "k"), {"job": "a"})], fail)
    assert ahead.take(("a", "k"), 5) is None
    ahead.ask([(("b", "k"), {"job": "b"})], lambda rs: [{"ok": True} for _ in rs])
    ahead.forget(["b"])  # it starts again: what was read ahead is stale
    assert ahead.take(("b", "k"), 5) is None


def test_coalesced_sends_what_queues_meanwhile_in_one_message_and_waits_in_order() -> None:
    first_on_its_way, let_go = threading.Event(), threading.Event()
    sent: list[list[str]] = []

    def send(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent.append([r["job"] for r in requests])
        if len(sent) == 1:
            first_on_its_way.set()
            assert let_go.wait(5)
        return [{} for _ in requests]

    later = batched.Coalesced()
    later.add({"job": "a"}, send)
    assert first_on_its_way.wait(5)
    for job in ("b", "c", "d"):
        later.add({"job": job}, send)
    later.wait(["x"])  # another job's request does not wait for these
    assert sent == [["a"]]
    waiter = threading.Thread(target=later.wait, args=(["c"],))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # the same job's request waits for its cleanup
    let_go.set()
    later.wait()
    waiter.join(5)
    assert not waiter.is_alive()
    assert sent == [["a"], ["b", "c", "d"]]
