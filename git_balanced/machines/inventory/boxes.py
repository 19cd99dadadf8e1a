"""Machines that are boxes made per job: a container (podman or docker, on this machine or on an SSH machine's
engine) or a Kubernetes pod. What a box machine is, as the machines file keeps it: its kind, image and limits.

    spec = boxes.spec_of("box")        # None for an SSH machine
    spec.kind, spec.image, spec.network
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.models import MachineName

CONTAINER = "container"
KUBERNETES = "kubernetes"
KINDS = (CONTAINER, KUBERNETES)
ENGINES = ("podman", "docker")
NETWORKS = ("none", "on", "host")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# An image reference: registry/name:tag or @digest; nothing an engine would read as an option.
_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]*")
_LIMIT = re.compile(r"[0-9]+(\.[0-9]+)?[a-zA-Z]{0,2}")
_KUBE_NAME = re.compile(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?")


@dataclass(frozen=True)
class BoxSpec:
    """A box machine: `kind` (container or kubernetes), the `image` each job's box starts from, and for a
    container its `engine` and the SSH machine `on` whose engine runs it (None: this machine). Its `network`:
    `none` (the default), `on` (the engine's own) or `host` (this machine's); `cpus` and `memory` limits;
    `pass_env`, names of variables each box gets from the engine's environment (an API key: its value is never
    written); `engine_args` put after the engine's name and `engine_env` set for it (what a host needs of its
    engine, e.g. `--runtime`); for a pod, its `namespace` and kubectl `context`."""

    kind: str
    image: str
    engine: str = "podman"
    on: str | None = None
    network: str = "none"
    cpus: str | None = None
    memory: str | None = None
    engine_args: tuple[str, ...] = ()
    engine_env: dict[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    namespace: str | None = None
    context: str | None = None

    def entry(self) -> dict[str, Any]:
        """The machines file's entry (without the preference)."""
        data = asdict(self)
        data["engine_args"] = list(self.engine_args)
        data["pass_env"] = list(self.pass_env)
        if self.network == "none":
            del data["network"]
        return {k: v for k, v in data.items() if v not in (None, (), [], {})}

    def words(self) -> str:
        """`container box-image:1 (podman, network off)` for the machines table."""
        where = f" on {self.on}" if self.on else ""
        engine = "kubectl" + (f", namespace {self.namespace}" if self.namespace else "") \
            if self.kind == KUBERNETES else self.engine + where
        limits = "".join(f", {k} {v}" for k, v in (("cpus", self.cpus), ("memory", self.memory)) if v)
        net = "off" if self.network == "none" else self.network
        return f"{self.kind} {self.image} ({engine}, network {net}{limits})"


def check(spec: BoxSpec, where: str = "") -> BoxSpec:
    """The spec, or a BalancedError naming the value that is wrong (`where` says where it was read)."""
    def bad(what: str, value: Any, hint: str) -> BalancedError:
        return BalancedError(f"Refusing {what} {value!r}{where}.", hint=hint)

    if spec.kind not in KINDS:
        raise bad("the kind", spec.kind, f"a box is one of {', '.join(KINDS)}.")
    if not isinstance(spec.image, str) or not _IMAGE.fullmatch(spec.image):
        raise bad("the image", spec.image, "give an image name such as balanced-box:latest "
                                           "(`git balanced image build` makes one).")
    if spec.engine not in ENGINES:
        raise bad("--engine", spec.engine, f"use one of {', '.join(ENGINES)}.")
    if spec.on is not None:
        MachineName.of(spec.on)
    if spec.network not in NETWORKS:
        raise bad("--network", spec.network, f"use one of {', '.join(NETWORKS)} (none: no network, the default).")
    for name in spec.pass_env:
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise bad("--pass-env", name, "give the name of an environment variable, e.g. ANTHROPIC_API_KEY.")
    for name, value in (("--cpus", spec.cpus), ("--memory", spec.memory)):
        if value is not None and not _LIMIT.fullmatch(str(value)):
            raise bad(name, value, f"give {name} a number, e.g. --cpus 2 or --memory 2g.")
    for name, value in (("--namespace", spec.namespace), ("--context", spec.context)):
        if value is not None and not (_KUBE_NAME.fullmatch(value) or name == "--context" and _IMAGE.fullmatch(value)):
            raise bad(name, value, f"give {name} a Kubernetes name (lower-case letters, digits, '-', '.').")
    if not all(isinstance(a, str) for a in spec.engine_args) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in spec.engine_env.items()):
        raise bad("engine_args or engine_env", spec.engine_args, "engine_args is a list of words, engine_env a "
                                                                 "table of strings.")
    return spec


def spec_from(entry: dict[str, Any], machine: str, where: str = "") -> BoxSpec | None:
    """The box a machines file entry describes, checked; None for an SSH machine's entry."""
    kind = entry.get("kind")
    if kind is None:
        return None
    try:
        spec = BoxSpec(kind=str(kind), image=entry.get("image", ""), engine=str(entry.get("engine", "podman")),
                       on=entry.get("on"), network=str(entry.get("network", "none")),
                       cpus=_text(entry.get("cpus")), memory=_text(entry.get("memory")),
                       engine_args=tuple(entry.get("engine_args") or ()),
                       engine_env=dict(entry.get("engine_env") or {}),
                       pass_env=tuple(entry.get("pass_env") or ()),
                       namespace=entry.get("namespace"), context=entry.get("context"))
    except (TypeError, ValueError):
        raise BalancedError(f"Machine {machine}{where} is not a box this version reads: {entry!r}.",
                            hint=f"`git balanced machines rm {machine}`, then add it again.") from None
    return check(spec, f" of machine {machine}{where}")


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
