"""The person's Now queue: work the lead puts to you (a review) and its ideas, and your answers to them.

Each row is a chain on `refs/balanced/now/<id>` (put, then one answer), so `git balanced sync` shares rows
and their attachments, which are blobs in the tree of the row's first commit. Answering is compare-and-swap
on the row's ref: of two answers the first counts. The lead hears each answer in its inbox.

What waits on you is numbered in the order it came under Now (a question when it was passed to you, a row
when it was put), counting the answered ones, so a number never moves to another row: `answer --allow 3 4`
names the same two rows whatever was answered before. A command names a row by its number or its id.

`put_to_you` (which runs the check again) is `git_balanced.landing.now.put_to_you`: the check belongs to
the landing, which this layer does not reach; `put` here stores a row whose numbers were measured already.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from git_balanced.channel import inbox
from git_balanced.channel.attachments import entries as attachment_entries
from git_balanced.channel.questions import all_questions, answer, append_if
from git_balanced.errors import BalancedError, UsageError
from git_balanced.git import Repo
from git_balanced.lead import Lead, open_lead
from git_balanced.state import cache
from git_balanced.state.events import MODE_FILE, Event, message, node_id
from git_balanced.state.refs import update_with_retry
from git_balanced.ui import clock

KIND = "now"
PREFIX = f"refs/balanced/{KIND}/"
WAITING = "waiting"
ANSWERS = {"ship": "shipped", "correct": "corrected", "not-now": "not now", "go-ahead": "go ahead"}
MODE_TREE = 0o040000
_ALPHABET = "23456789abcdefghjkmnpqrstvwxyz"  # as question ids: short, no look-alikes


def ref_of(rid: str) -> str:
    return PREFIX + rid


def lead_of(where: Lead | Repo | str | None) -> Lead:
    """A Lead from a Lead, a Repo (its current branch), a folder, or None (the current folder)."""
    if isinstance(where, Lead):
        return where
    if isinstance(where, Repo):
        branch = where.current_branch()
        if branch is None:
            return open_lead(str(where.root))  # refuses with its message
        return Lead(where, branch)
    return open_lead(where)


# -- putting ----------------------------------------------------------------------------------------------
def _attachment_entries(lead: Lead, paths: list[str] | tuple[str, ...]) -> tuple[list[dict[str, Any]], str | None]:
    """Each file as a blob, and the tree `attachments/` holding them; refuses what attachments.entries refuses."""
    found, items = attachment_entries(lead, paths)
    return found, (lead.repo.write_tree(items) if items else None)


def _new_row(lead: Lead, kind: str, subject: str, data: dict[str, Any], attach_tree: str | None) -> str:
    """Write the first commit of a new row (attachments in its tree) under a fresh id; the id."""
    repo = lead.repo
    while True:
        rid = {"review": "r", "fix": "f"}.get(kind, "i") + "".join(secrets.choice(_ALPHABET) for _ in range(5))
        ev = Event(event="put", data={**data, "id": rid}, state=WAITING, lamport=1, node=node_id(repo),
                   time=time.time())

        def build(tip: str | None, ev: Event = ev) -> str | None:
            if tip:
                return None  # taken: draw another id
            entries = [("event.json", MODE_FILE, repo.write_blob(ev.to_json()))]
            if attach_tree:
                entries.append(("attachments", MODE_TREE, attach_tree))
            return repo.write_commit(repo.write_tree(entries), [], message(ev, subject), when=ev.time)

        if update_with_retry(repo, ref_of(rid), build, "balanced: put") is not None:
            return rid


def put(where: Lead | Repo | str | None, summary: str, *, ships: dict[str, Any] | None,
        check: dict[str, Any] | None, attachments: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Store a review row under Now: the lead's summary, what would ship and the check, as measured already."""
    summary = summary.strip()
    if not summary:
        raise UsageError("Putting work to you needs a summary of what was done.",
                         hint="say in a few lines what changed and why.")
    lead = lead_of(where)
    found, tree = _attachment_entries(lead, list(attachments))
    for old in rows(lead):  # a review put again replaces the one still waiting: it is the newer work
        if old["kind"] == "review":
            _answer(lead, old["id"], "replaced", {"replaced_by": "a newer review"}, tell=False)
    head = lead.repo.rev_parse(lead.branch)
    data = {"kind": "review", "lead": lead.branch, "summary": summary, "ships": ships, "check": check,
            "attachments": [{k: a[k] for k in ("name", "blob", "bytes")} for a in found], "commit": head,
            "put_at": time.time()}
    rid = _new_row(lead, "review", f"Put to you: {summary.splitlines()[0][:72]}", data, tree)
    lead.wake_engine()
    return row(lead, rid)


def idea(where: Lead | Repo | str | None, text: str) -> dict[str, Any]:
    """Store an idea of the lead's under Now; `go-ahead ID` tells the lead to do it."""
    text = text.strip()
    if not text:
        raise UsageError("An idea needs some text.", hint="say what you would do, and why.")
    lead = lead_of(where)
    data = {"kind": "idea", "lead": lead.branch, "summary": text, "attachments": [], "put_at": time.time()}
    rid = _new_row(lead, "idea", f"Idea: {text.splitlines()[0][:72]}", data, None)
    return row(lead, rid)


# -- reading ----------------------------------------------------------------------------------------------
def _shape(rid: str, st: dict[str, Any]) -> dict[str, Any]:
    f = st["fields"]
    return {"id": rid, "kind": f.get("kind", "review"), "state": st["state"], "lead": f.get("lead"),
            "summary": f.get("summary", ""), "ships": f.get("ships"), "check": f.get("check"),
            "attachments": list(f.get("attachments") or []), "commit": f.get("commit"),
            "put_at": f.get("put_at") or st["created"], "answer": f.get("answer"), "text": f.get("answer_text"),
            "answered_at": f.get("answered_at"), **({"pr": f["pr"]} if "pr" in f else {})}


def row(where: Lead | Repo | str | None, rid: str) -> dict[str, Any]:
    """One row by id; refuses an unknown id with where to look."""
    lead = lead_of(where)
    st = cache.read_one(lead.repo, KIND, rid) if lead.repo.read_ref(ref_of(rid)) else None
    if st is None:
        raise BalancedError(f"There is no row {rid} under Now.",
                            hint="`git balanced board` numbers what waits on you; name a row by number or id.")
    return _shape(rid, st)


def rows(where: Lead | Repo | str | None, *, waiting: bool = True) -> list[dict[str, Any]]:
    """The lead's rows, oldest first; only those waiting on you unless `waiting` is False."""
    lead = lead_of(where)
    out = [_shape(rid, st) for rid, st in cache.read_all(lead.repo, KIND).items()
           if st["fields"].get("lead") == lead.branch and (not waiting or st["state"] == WAITING)]
    return sorted(out, key=lambda r: (r["put_at"] or 0, r["id"]))


def numbered(lead: Lead) -> list[dict[str, Any]]:
    """What waits on you, each with its number (`n`), in the board's order. A number is a row's for good: every
    question passed to you and every row put under Now is counted, answered or not, in the order they came
    (passed, or put), so answering one shifts no other's."""
    came: list[tuple[float, str, dict[str, Any]]] = []
    for qid, q in all_questions(lead.repo).items():
        f = q["fields"]
        if f.get("lead") == lead.branch and (f.get("passed_at") is not None or q["state"] == "passed"):
            item = {"kind": "question", "id": qid, "ask_kind": f.get("kind"), "waiting": q["state"] == "passed"}
            came.append((float(f.get("passed_at") or q["created"] or 0), qid, item))
    for r in rows(lead, waiting=False):
        came.append((float(r["put_at"] or 0), r["id"], {"kind": r["kind"], "id": r["id"], "row": r,
                                                         "waiting": r["state"] == WAITING}))
    came.sort(key=lambda c: (c[0], c[1]))
    out = []
    for n, (_, _, item) in enumerate(came, 1):
        if item.pop("waiting"):
            out.append({**item, "n": n})
    return out


def resolve(lead: Lead, name: str) -> dict[str, Any]:
    """What a board number or an id names: {"kind", "id", ...}; a question id is taken as it is."""
    name = name.strip()
    if name.isdigit():
        items = numbered(lead)
        n = int(name)
        found = next((i for i in items if i["n"] == n), None)
        if found is None:
            waiting = ", ".join(str(i["n"]) for i in items)
            raise BalancedError(f"Nothing under Now is numbered {n}" + (f" (waiting: {waiting})." if items
                                                                          else ": nothing waits on you."),
                                hint="`git balanced board` shows the numbers; a number answered already is not "
                                     "given to another row.")
        return found
    if lead.repo.read_ref(ref_of(name)):
        r = row(lead, name)
        return {"kind": r["kind"], "id": name, "row": r}
    if lead.repo.read_ref("refs/balanced/questions/" + name):
        return {"kind": "question", "id": name}
    raise BalancedError(f"Nothing under Now is named {name}.",
                        hint="`git balanced board` numbers what waits on you; name it by number or id.")


def pick(lead: Lead, name: str | None, kinds: tuple[str, ...], verb: str) -> dict[str, Any]:
    """The waiting row `name` names, or the only waiting row of these kinds when no name is given."""
    if name:
        item = resolve(lead, name)
        if item["kind"] not in kinds:
            what = {"question": "a worker's question (answer it with `git balanced answer`)",
                    "review": "a review (answer it with ship, correct or not-now)",
                    "idea": "an idea (answer it with go-ahead, correct or not-now)",
                    "fix": "a fix ready to push (answer it with ship or not-now)"}[item["kind"]]
            raise BalancedError(f"{name} is {what}, so `{verb}` does not fit it.",
                                hint="`git balanced board` shows what each row takes.")
        return dict(item["row"])
    waiting = [r for r in rows(lead) if r["kind"] in kinds]
    reviews = [r for r in waiting if r["kind"] == "review"]
    if len(waiting) == 1 or (verb == "correct" and len(reviews) == 1):  # a correction is for the work first
        return reviews[0] if verb == "correct" and reviews else waiting[0]
    if not waiting:
        raise BalancedError(f"Nothing under Now waits for `{verb}`.",
                            hint="`git balanced board` shows what waits on you.")
    form = {"correct": "correct TEXT ID", "not-now": "not-now ID", "ship": "ship ID"}.get(verb, f"{verb} ID")
    raise BalancedError(f"{len(waiting)} rows wait for an answer: " + ", ".join(r["id"] for r in waiting) + ".",
                        hint=f"name one: `git balanced {form}` (ID: its number on the board, or its id).")


def attachment(where: Lead | Repo | str | None, rid: str, name: str) -> bytes:
    """The bytes of one attachment of a row."""
    lead = lead_of(where)
    for a in row(lead, rid)["attachments"]:
        if a["name"] == name:
            return bytes(lead.repo.store[a["blob"].encode()].data)
    raise BalancedError(f"The row {rid} has no attachment {name}.", hint="`git balanced board --json` lists them.")


# -- answering --------------------------------------------------------------------------------------------
def _late(cur: dict[str, Any] | None) -> str | None:
    if cur is None:
        return "it does not exist"
    if cur["state"] == WAITING:
        return None
    f = cur["fields"]
    return f"it was answered already at {clock(float(f.get('answered_at') or 0))}: {f.get('answer')}"


def _answer(lead: Lead, rid: str, answer: str, extra: dict[str, Any], *, tell: bool = True,
            text: str = "") -> dict[str, Any]:
    """Settle a waiting row with an answer; the first answer counts, a later one raises `too late`."""
    data = {"answer": answer, "answer_text": text, "answered_at": time.time(), **extra}
    made, _, why = append_if(lead.repo, ref_of(rid), _late, "answered", f"{rid}: {answer}", data, answer)
    if not made:
        raise BalancedError(f"Too late: {rid} was not changed, as {why}.", hint="the first answer counts.")
    r = row(lead, rid)
    if tell:
        inbox.post(lead.repo, lead.branch, _words(r), kind="now-answer", row=rid, answer=answer, said=text)
        lead.wake_engine()
    return r


def _words(r: dict[str, Any]) -> str:
    """What the lead hears of an answer."""
    what = f"your {'review' if r['kind'] == 'review' else 'idea'} {r['id']} ({r['summary'].splitlines()[0][:60]})"
    said = {
        "shipped": f"The person shipped {what}: {r.get('text') or 'pushed'}.",
        "corrected": f"The person corrected {what}: {r.get('text')} · fix it, then put the work to them again.",
        "not now": f"The person said not now to {what}" + (f": {r['text']}" if r.get("text") else "") + ".",
        "go ahead": f"The person said go ahead to {what}" + (f": {r['text']}" if r.get("text") else "")
                    + " · plan it and start it.",
    }
    return said.get(str(r["answer"]), f"The person answered {what}: {r['answer']}.")


def ship(where: Lead | Repo | str | None, rid: str | None = None, *, pushed: str = "") -> dict[str, Any]:
    """Record that the review was shipped (after the push); the lead hears it."""
    lead = lead_of(where)
    r = pick(lead, rid, ("review",) + FIX_KINDS, "ship")
    return _answer(lead, r["id"], ANSWERS["ship"], {"pushed": pushed}, text=pushed)


def correct(where: Lead | Repo | str | None, text: str, rid: str | None = None) -> dict[str, Any]:
    """Send a waiting row back to the lead with a correction; it puts the work to you again once fixed."""
    text = " ".join(text.split())
    if not text:
        raise UsageError("A correction needs some text.", hint='git balanced correct "Keep the old flag working"')
    lead = lead_of(where)
    r = pick(lead, rid, ("review", "idea"), "correct")
    return _answer(lead, r["id"], ANSWERS["correct"], {}, text=text)


def not_now(where: Lead | Repo | str | None, rid: str | None = None, text: str = "") -> dict[str, Any]:
    """Decline a waiting review or idea for now; the lead hears it."""
    lead = lead_of(where)
    r = pick(lead, rid, ("review", "idea") + FIX_KINDS, "not-now")
    return _answer(lead, r["id"], ANSWERS["not-now"], {}, text=" ".join(text.split()))


def go_ahead(where: Lead | Repo | str | None, rid: str, text: str = "") -> dict[str, Any]:
    """Tell the lead to go ahead with its idea."""
    lead = lead_of(where)
    r = pick(lead, rid, ("idea",), "go-ahead")
    return _answer(lead, r["id"], ANSWERS["go-ahead"], {}, text=" ".join(text.split()))


def shown(r: dict[str, Any], n: int) -> str:
    """A waiting row as the board shows it, its number first: the summary, then what ships, the check, the
    attachments and how to answer, on lines of their own."""
    if r["kind"] in FIX_KINDS:
        return shown_fix(r, n)
    first, *more = (r["summary"] or "").splitlines() or [""]
    pad = " " * (len(str(n)) + 5)  # under the words after `  N ▸ ` on the board
    if r["kind"] == "idea":
        return f"{n} ✦ idea {r['id']}: {first}\n{pad}git balanced go-ahead {n} | correct TEXT {n} | not-now {n}"
    lines = [f"{n} ▸ review {r['id']}: {first}"] + [pad + x for x in more[:3] if x.strip()]
    ships, check = r.get("ships") or {}, r.get("check") or {}
    bits = [f"ships {ships['summary']} to {ships.get('upstream')}" if ships.get("summary")
            else str(ships.get("words") or "")]
    if check.get("command"):  # the check as it was when the work was put to you
        bits.append(f"check {check.get('state')} (`{check['command']}`, {float(check.get('seconds') or 0):.1f}s, "
                    f"{clock(float(r.get('put_at') or 0))})")
    elif check.get("words"):
        bits.append(f"check: {check['words']}")
    lines.append(pad + " · ".join(b for b in bits if b))
    if r["attachments"]:
        files = ", ".join(f"{a['name']} ({_size(int(a['bytes']))})" for a in r["attachments"])
        lines.append(f"{pad}attached: {files}")
    lines.append(f"{pad}git balanced ship {n} | correct TEXT {n} | not-now {n}")
    return "\n".join(lines)


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} kB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MB"


def answer_many(where: Lead | Repo | str | None, names: list[str], decision: str,
                reason: str = "") -> tuple[list[dict[str, Any]], list[str]]:
    """Allow (or deny) several waiting questions at once, each named by id or board number: the answers
    made, and why each of the others was not (a question answered meanwhile is not the others' loss)."""
    if decision not in ("allow", "deny"):
        raise ValueError(decision)
    lead = lead_of(where)
    targets: list[str] = []
    for name in names:  # every name is checked before any answer is given
        item = resolve(lead, name)
        if item["kind"] != "question":
            raise BalancedError(f"{name} is {'a review' if item['kind'] == 'review' else 'an idea'}, not a "
                                "worker's question, so it cannot be allowed or denied.",
                                hint="answer it with ship, correct, not-now or go-ahead.")
        if item["id"] not in targets:
            targets.append(item["id"])
    done, missed = [], []
    for qid in targets:
        try:
            done.append({"qid": qid, **answer(lead.repo, qid, reason, decision)})
        except BalancedError as exc:
            missed.append(f"{qid}: {exc.message}")
    return done, missed


# -- a pull request's fix, ready to push (forge/) ------------------------------------------------------------
FIX_KINDS = ("fix",)


def put_fix(lead: Lead, summary: str, *, pr: int, trouble: str, commit: str, ships: dict[str, Any],
            check: dict[str, Any]) -> dict[str, Any]:
    """Store a `Ready to push` row: the fix its session committed for pull request `pr`, with the diff's summary
    and the check run again; `ship` on it pushes and updates the pull request, `not-now` leaves the commit."""
    data = {"kind": "fix", "lead": lead.branch, "summary": summary, "ships": ships, "check": check,
            "attachments": [], "commit": commit, "pr": pr, "trouble": trouble, "put_at": time.time()}
    rid = _new_row(lead, "fix", f"Ready to push: #{pr} {summary.splitlines()[0][:60]}", data, None)
    return row(lead, rid)


def shown_fix(r: dict[str, Any], n: int) -> str:
    """A `Ready to push` row as the board shows it."""
    pad = " " * (len(str(n)) + 5)
    ships, check = r.get("ships") or {}, r.get("check") or {}
    bits = [f"{ships.get('summary')} on top of the pull request" if ships.get("summary") else "",
            f"check: {check.get('words')}" if check.get("words") else ""]
    return (f"{n} ⇡ Ready to push {r['id']}: {(r['summary'] or '').splitlines()[0] if r['summary'] else ''}\n"
            f"{pad}{' · '.join(b for b in bits if b)}\n{pad}git balanced ship {n} | not-now {n}")
