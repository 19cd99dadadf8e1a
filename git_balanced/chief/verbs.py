"""The chief's verbs, each declared once as the lead's are (kit/verbs.py): `git balanced mcp --chief` makes its
tools from these, and Pi's extension for the chief the same tools. None allows, lands, ships or starts a worker.
"""

from __future__ import annotations

from git_balanced.chief import tools
from git_balanced.kit.verbs import Arg, Verb

_PROJECT = Arg("project", str, "The project's name, as `projects` lists it.")
_QUESTION = Arg("question", str, "The question's id (q…), as your inbox shows it.")

CHIEF_VERBS: tuple[Verb, ...] = (
    Verb("projects", "Every project: its leads, workers by state, what waits on the person, spend.",
         "Each project the person registered: its leads (`leads`: the headless one, who started it, and an agent "
         "session at the keyboard, seen how long ago), its workers by state, "
         "what waits on the person under Now (each row's number), and each plan's spend against its budget.",
         does=tools.projects, read_only=True, idempotent=True, open_world=True),
    Verb("start_lead", "Start a headless lead in a project, told its task.",
         "Start a headless lead in the project (on its machine), its first turn the task; the board and Now say "
         "the chief started it. It plans and runs the workers; you never do.",
         does=tools.start_lead, open_world=True,
         args=(_PROJECT, Arg("task", str, "What the lead gets done."),
               Arg("agent", str, "The lead's agent: claude, codex or pi.", default="claude"),
               Arg("budget", float | None, "USD for its plan.", default=None, above=0))),
    Verb("tell_lead", "Tell a project's lead a line.",
         "A line into the project's lead's inbox; its next turn reads `Your chief says: TEXT`.",
         does=tools.tell_lead, open_world=True, args=(_PROJECT, Arg("text", str, "What the lead reads."))),
    Verb("answer", "Answer a question a lead passed on to you.",
         "Answer, from what the person told you, a worker's question its lead passed on to you; the worker reads "
         "`Your chief says: TEXT`. Only words: you never allow a command.",
         does=tools.answer, idempotent=True, open_world=True,
         args=(_PROJECT, _QUESTION, Arg("text", str, "The answer the worker reads."))),
    Verb("pass_on", "Hand a question passed on to you to the person.",
         "Hand a question a lead passed on to you to the person, when it is not yours to answer: it shows under "
         "their Now.", does=tools.pass_on, idempotent=True, open_world=True, args=(_PROJECT, _QUESTION)),
    Verb("note", "Put a line under a row of a project's Now.",
         "A line under a row of the project's Now (a review, a question), for the person: `Chief: ship this one "
         "first: shop-ios builds on it`.", does=tools.note, open_world=True,
         args=(_PROJECT, Arg("row", str, "The row's number or id, as `projects` shows it under now."),
               Arg("text", str, "The line the person reads under it."))),
    Verb("how_are_they_doing", "One summary over every lead.",
         "One summary over every project's lead, in plain words, for a person who asks how they are doing.",
         does=tools.how_are_they_doing, read_only=True, idempotent=True, open_world=True),
)
