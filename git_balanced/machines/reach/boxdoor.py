"""The door to boxes (containers, pods): a kind of box is only the commands that create, reach and remove one;
everything else about a box machine (boxhost.py) is shared by every kind.

A command in a box is the kind's `reach` argv (`podman exec -i NAME`, `kubectl exec -i NAME --`) followed by
the command, run here or, for a box on an SSH machine's engine, through that machine's Transport (the one door
to SSH). A Python script travels on stdin as it does over SSH (transport.BOOTSTRAP): `python3 -` in the box.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from typing import Protocol

from git_balanced import proc
from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.boxes import KUBERNETES, BoxSpec
from git_balanced.machines.reach.transport import BOOTSTRAP, MachineUnreachable, Transport
from git_balanced.proc import Result
from git_balanced.untrusted import machine_program

LABEL = "balanced"  # every box made is labelled balanced=1, balanced.repo=<id>, balanced.job=<runner key>
# The box's first process: it reaps what a runner leaves behind, and ends at once when the box is stopped.
REAPER = ("import os,signal,time\nsignal.signal(signal.SIGTERM,lambda *a:os._exit(0))\nwhile True:\n"
          " try:\n  os.waitpid(-1,0)\n except ChildProcessError:\n  time.sleep(1)\n")


@dataclass(frozen=True)
class Found:
    """A box the engine lists: its name, whether it runs, and its labels."""

    name: str
    running: bool
    labels: dict[str, str]


class Kind(Protocol):
    """The commands of one kind of box."""

    def create(self, name: str, labels: dict[str, str]) -> list[str]: ...

    def ready(self, name: str) -> list[str] | None: ...

    def reach(self, name: str) -> list[str]: ...

    def remove(self, names: list[str]) -> list[str]: ...

    def listing(self, labels: dict[str, str]) -> list[str]: ...

    def parse(self, out: str) -> list[Found]: ...

    def once(self, image: str) -> list[str]: ...

    def tools(self) -> list[str]: ...

    def checks(self) -> list[tuple[str, list[str]]]: ...


class Container:
    """A container of podman or docker: `run -d` from the image, `exec -i`, `rm -f`."""

    def __init__(self, spec: BoxSpec) -> None:
        self.spec = spec
        self.engine = [spec.engine, *spec.engine_args]

    def _limits(self) -> list[str]:
        out = [] if self.spec.network == "on" else ["--network", self.spec.network]
        out += [w for name in self.spec.pass_env for w in ("--env", name)]  # the value from the engine's env
        out += ["--cpus", self.spec.cpus] if self.spec.cpus else []
        return out + (["--memory", self.spec.memory] if self.spec.memory else [])

    def create(self, name: str, labels: dict[str, str]) -> list[str]:
        marks = [w for k, v in labels.items() for w in ("--label", f"{k}={v}")]
        return [*self.engine, "run", "-d", "--name", name, *marks, *self._limits(), "--workdir", "/root",
                "--env", "HOME=/root", "--", self.spec.image, "python3", "-c", REAPER]

    def ready(self, name: str) -> list[str] | None:
        return None  # `run -d` answers once the container runs

    def reach(self, name: str) -> list[str]:
        return [*self.engine, "exec", "-i", name]

    def remove(self, names: list[str]) -> list[str]:
        return [*self.engine, "rm", "-f", *names]

    def listing(self, labels: dict[str, str]) -> list[str]:
        filters = [w for k, v in labels.items() for w in ("--filter", f"label={k}={v}")]
        return [*self.engine, "ps", "-a", "--no-trunc", *filters, "--format", "{{json .}}"]

    def parse(self, out: str) -> list[Found]:
        text = out.strip()
        if not text:
            return []
        rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines()]
        found = []
        for r in rows:
            names = r.get("Names")
            name = names[0] if isinstance(names, list) else str(names)
            labels = r.get("Labels") or {}
            if isinstance(labels, str):  # docker: "k=v,k=v"
                labels = dict(kv.partition("=")[::2] for kv in labels.split(",") if kv)
            found.append(Found(name, str(r.get("State", "")).lower() == "running", dict(labels)))
        return found

    def once(self, image: str) -> list[str]:
        return [*self.engine, "run", "--rm", "-i", *self._limits(), "--", image]

    def tools(self) -> list[str]:
        return [self.spec.engine]

    def checks(self) -> list[tuple[str, list[str]]]:
        """(what is wrong when it fails, its command): the engine answers, the image is there."""
        image = ["image", "exists"] if self.spec.engine == "podman" else ["image", "inspect"]
        return [(f"{self.spec.engine} does not answer", [*self.engine, "version"]),
                (f"{self.spec.engine} has no image {self.spec.image}", [*self.engine, *image, self.spec.image])]


class Pod:
    """A bare Kubernetes pod: `kubectl run` with restart never, `wait` until it runs, `exec -i`, `delete`."""

    def __init__(self, spec: BoxSpec) -> None:
        self.spec = spec
        self.kubectl = ["kubectl", *(["--context", spec.context] if spec.context else []),
                        *(["--namespace", spec.namespace] if spec.namespace else [])]

    def create(self, name: str, labels: dict[str, str]) -> list[str]:
        marks = ",".join(f"{k}={v}" for k, v in labels.items())
        limits = {k: v for k, v in (("cpu", self.spec.cpus), ("memory", self.spec.memory)) if v}
        over = {"apiVersion": "v1", "spec": {"containers": [
            {"name": name, "image": self.spec.image, "workingDir": "/root", "stdin": True,
             "command": ["python3", "-c", REAPER], **({"resources": {"limits": limits}} if limits else {})}]}}
        return [*self.kubectl, "run", name, f"--image={self.spec.image}", "--restart=Never", f"--labels={marks}",
                "--env=HOME=/root", f"--overrides={json.dumps(over, sort_keys=True)}", "--command", "--",
                "python3", "-c", REAPER]

    def ready(self, name: str) -> list[str] | None:
        return [*self.kubectl, "wait", "--for=condition=Ready", f"pod/{name}", "--timeout=300s"]

    def reach(self, name: str) -> list[str]:
        return [*self.kubectl, "exec", "-i", name, "--"]

    def remove(self, names: list[str]) -> list[str]:
        return [*self.kubectl, "delete", "pod", "--wait=false", "--ignore-not-found", *names]

    def listing(self, labels: dict[str, str]) -> list[str]:
        return [*self.kubectl, "get", "pods", "-l", ",".join(f"{k}={v}" for k, v in labels.items()), "-o", "json"]

    def parse(self, out: str) -> list[Found]:
        items = json.loads(out or "{}").get("items") or []
        return [Found(i["metadata"]["name"], (i.get("status") or {}).get("phase") == "Running",
                      dict(i["metadata"].get("labels") or {})) for i in items]

    def once(self, image: str) -> list[str]:
        return [*self.kubectl, "run", f"balanced-probe-{os.getpid()}", f"--image={image}", "--restart=Never",
                "--rm", "-i", "--quiet", "--env=HOME=/root", "--command", "--"]

    def tools(self) -> list[str]:
        return ["kubectl"]

    def checks(self) -> list[tuple[str, list[str]]]:
        """(what is wrong when it fails, its command): the cluster answers, and pods may be made there."""
        return [("the cluster does not answer", [*self.kubectl, "version"]),
                ("kubectl may not create pods there", [*self.kubectl, "auth", "can-i", "create", "pods"])]


def kind_of(spec: BoxSpec) -> Kind:
    """The commands of the spec's kind of box."""
    return Pod(spec) if spec.kind == KUBERNETES else Container(spec)


class Door:
    """Runs a kind's commands where its engine is: here, or on the SSH machine `on` through its Transport."""

    def __init__(self, machine: str, spec: BoxSpec, on: Transport | None) -> None:
        self.machine = machine
        self.spec = spec
        self.kind = kind_of(spec)
        self.on = on

    def run(self, argv: list[str], *, input: str | bytes | None = None, timeout: float | None = 60) -> Result:
        """Run an engine command (argv from the kind); a missing engine is a machine that cannot be reached."""
        if self.on is not None:
            env = [f"{k}={v}" for k, v in self.spec.engine_env.items()]
            res = self.on.run(["env", *env, *argv] if env else argv, input=input, timeout=timeout)
        else:
            data = input.decode() if isinstance(input, bytes) else input
            res = proc.run(argv, input=data, timeout=timeout, env={**os.environ, **self.spec.engine_env})
        if res.code == 127 and "not found" in res.err:
            where = f" on {self.spec.on}" if self.spec.on else ""
            raise MachineUnreachable(f"Machine {self.machine}: {argv[0]} is not installed{where}.",
                                     hint=f"install it{where}, then `git balanced ready {self.machine}`.",
                                     detail=f"{argv[0]}: command not found")
        return res

    def must(self, argv: list[str], doing: str, timeout: float = 120) -> Result:
        """`run`, or a BalancedError saying what failed (`doing`) and what the engine said."""
        res = self.run(argv, timeout=timeout)
        if not res.ok:
            raise BalancedError(f"Machine {self.machine}: could not {doing}: "
                                f"{(res.err or res.out).strip()[-400:] or f'exit {res.code}'}",
                                hint=f"try `{shlex.join(argv)}`; `git balanced ready {self.machine}` checks it.")
        return res

    def boxes(self, labels: dict[str, str]) -> list[Found]:
        """The boxes carrying all of `labels`, as the engine lists them."""
        res = self.must(self.kind.listing(labels), "list its boxes", timeout=60)
        try:
            return self.kind.parse(res.out)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BalancedError(f"Machine {self.machine}: the list of boxes could not be read: {res.out[:300]}",
                                hint=f"`git balanced ready {self.machine}` checks its engine.") from None

    def git_program(self, name: str, program: str) -> str:
        """`--upload-pack`/`--receive-pack` that runs git's `program` in box `name`, as a shell reads it."""
        env = [f"{k}={v}" for k, v in self.spec.engine_env.items()] if self.on is not None else []
        return shlex.join([*(["env", *env] if env else []), *self.kind.reach(name)]) + " " + machine_program(program)

    def git_url(self, path: str) -> str:
        """The remote git is given for a folder in a box: the folder itself (git's program is the box's own), or
        the SSH machine's `alias:path`."""
        return self.on.git_url(path) if self.on is not None else path

    def git_env(self) -> dict[str, str]:
        """Environment for git's push and fetch: the SSH machine's, or the engine's own settings here."""
        return self.on.git_env() if self.on is not None else dict(self.spec.engine_env)


class Shell:
    """Commands in one box (or, with `image`, in a throwaway box of the image): what a Transport offers."""

    def __init__(self, door: Door, box: str | None = None) -> None:
        self.door = door
        self.box = box
        self.name = door.machine
        self.multiplex = False
        self.sign_in_words = (f"give its boxes the agent's key: `git balanced machines add {door.machine} "
                              f"--container {door.spec.image} --pass-env ANTHROPIC_API_KEY` (or the agent's own "
                              "variable), with the key set where the engine runs")

    def _prefix(self) -> list[str]:
        return self.door.kind.reach(self.box) if self.box else self.door.kind.once(self.door.spec.image)

    def run(self, argv: list[str], *, input: str | bytes | None = None, timeout: float | None = 60) -> Result:
        return self.door.run([*self._prefix(), *argv], input=input, timeout=timeout)

    def run_python(self, source: str, args: list[str], *, input: str | bytes = "",
                   timeout: float | None = 60) -> Result:
        """Run a Python script in the box with `args`: script and input both travel on stdin."""
        data = input.encode() if isinstance(input, str) else input
        code = source.encode()
        framed = str(len(code)).encode() + b"\n" + code + data
        return self.run(["python3", "-c", BOOTSTRAP, *args], input=framed, timeout=timeout)
