"""The kinds of box as the commands they are (no cluster here: a pod is tested up to its kubectl command lines,
and for real only where a kubeconfig is set), and a box machine's settings as `machines add` checks them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_balanced.machines.inventory import records
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.reach.boxdoor import REAPER, Container, Pod
from git_balanced.machines.reach.boxhost import box_labels
from tests.support.builders import make_repo
from tests.support.cli import balanced

LABELS = box_labels("4f2a9c1", "1m9abc", "balanced/orders-api")


def test_a_container_is_made_without_network_with_its_limits_and_labels() -> None:
    kind = Container(BoxSpec("container", "balanced-box:base", cpus="2", memory="2g", pass_env=("API_KEY",),
                             engine_args=("--runtime=runc",)))
    assert kind.create("balanced-4f2a9c1-1m9abc", LABELS) == [
        "podman", "--runtime=runc", "run", "-d", "--name", "balanced-4f2a9c1-1m9abc",
        "--label", "balanced=1", "--label", "balanced.repo=4f2a9c1", "--label", "balanced.job=1m9abc",
        "--label", f"balanced.branch={LABELS['balanced.branch']}",
        "--network", "none", "--env", "API_KEY", "--cpus", "2", "--memory", "2g",
        "--workdir", "/root", "--env", "HOME=/root", "--", "balanced-box:base", "python3", "-c", REAPER]
    assert kind.reach("b1") == ["podman", "--runtime=runc", "exec", "-i", "b1"]
    assert kind.remove(["b1", "b2"]) == ["podman", "--runtime=runc", "rm", "-f", "b1", "b2"]
    host = Container(BoxSpec("container", "img", engine="docker", network="host"))
    assert host.create("b", {})[:7] == ["docker", "run", "-d", "--name", "b", "--network", "host"]
    assert "--network" not in Container(BoxSpec("container", "img", network="on")).create("b", {})


def test_a_pod_is_bare_never_restarted_labelled_waited_for_and_reached_through_kubectl_exec() -> None:
    kind = Pod(BoxSpec("kubernetes", "registry.example/balanced-box:claude", namespace="agents", context="prod",
                       cpus="1", memory="1Gi"))
    kubectl = ["kubectl", "--context", "prod", "--namespace", "agents"]
    made = kind.create("balanced-4f2a9c1-1m9abc", LABELS)
    assert made[:7] == [*kubectl, "run", "balanced-4f2a9c1-1m9abc"]
    assert "--restart=Never" in made and f"--labels={','.join(f'{k}={v}' for k, v in LABELS.items())}" in made
    over = json.loads(next(a for a in made if a.startswith("--overrides="))[len("--overrides="):])
    assert over["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"}}
    assert made[-5:] == ["--command", "--", "python3", "-c", REAPER]
    assert kind.ready("p") == [*kubectl, "wait", "--for=condition=Ready", "pod/p", "--timeout=300s"]
    assert kind.reach("p") == [*kubectl, "exec", "-i", "p", "--"]
    assert kind.remove(["p"]) == [*kubectl, "delete", "pod", "--wait=false", "--ignore-not-found", "p"]
    assert kind.listing({"balanced.repo": "4f2a9c1"}) == [*kubectl, "get", "pods", "-l", "balanced.repo=4f2a9c1",
                                                         "-o", "json"]
    listed = {"items": [{"metadata": {"name": "p", "labels": {"balanced.job": "1m9abc"}},
                         "status": {"phase": "Running"}}]}
    [found] = kind.parse(json.dumps(listed))
    assert (found.name, found.running, found.labels) == ("p", True, {"balanced.job": "1m9abc"})


def test_a_branch_label_is_a_value_any_kind_takes() -> None:
    value = LABELS["balanced.branch"]
    assert len(value) == 20 and value.isalnum() and value == box_labels("x", branch="balanced/orders-api")[
        "balanced.branch"]


@pytest.mark.parametrize(("args", "said"), [
    (["--container", "-oops"], "Refusing the image '-oops'"),
    (["--container", "img", "--cpus", "two"], "Refusing --cpus 'two'"),
    (["--container", "img", "--pass-env", "A B"], "Refusing --pass-env 'A B'"),
    (["--container", "img", "--on", "nowhere"], "--on nowhere: there is no added SSH machine"),
    (["--container", "img", "--namespace", "ns"], "--namespace does not go with --container"),
    (["--kubernetes", "img", "--network", "host"], "--network does not go with --kubernetes"),
    (["--container", "img", "--kubernetes", "img"], "Give --container or --kubernetes, not both"),
    (["--network", "host"], "--network only goes with --container or --kubernetes"),
])
def test_bad_box_settings_are_refused_naming_the_option(tmp_path: Path, args: list[str], said: str) -> None:
    repo = make_repo(tmp_path / "proj")
    ran = balanced(repo, "machines", "add", "box", *args)
    assert ran.code == 1 and said in ran.err and "Traceback" not in ran.err, ran.err
    assert "box" not in records.added()


def test_a_box_machine_is_kept_and_listed_with_what_it_is(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    ran = balanced(repo, "machines", "add", "box", "--container", "balanced-box:base", "--memory", "2g")
    assert ran.code == 0 and "Added box: container balanced-box:base (podman, network off, memory 2g)" in ran.out
    assert records.box_of("box") == BoxSpec("container", "balanced-box:base", memory="2g")
    (Path.home() / ".ssh").mkdir()
    (Path.home() / ".ssh" / "config").write_text("")  # no SSH hosts: only local and the box
    listed = json.loads(balanced(repo, "machines", "--json").out)
    row = next(r for r in listed if r["name"] == "box")
    assert row["address"] == "container balanced-box:base (podman, network off, memory 2g)"


def test_image_build_names_what_it_needs_and_builds_nothing_without_it(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    ran = balanced(make_repo(tmp_path / "proj"), "image", "build", "--agent", "claude", "--engine", "docker",
                   env={"PATH": str(bare)})
    assert ran.code == 1 and "`image build` needs mmdebstrap, docker, npm here." in ran.err, ran.err
    assert "apt-get install mmdebstrap docker.io npm" in ran.err and "Traceback" not in ran.err


@pytest.mark.skipif(not os.environ.get("KUBECONFIG") or shutil.which("kubectl") is None,
                    reason="no cluster here: runs where KUBECONFIG names one")
def test_a_pod_runs_a_command_and_is_deleted(tmp_path: Path) -> None:
    """Against a real cluster: make a pod, wait for it, run python3 in it through exec, delete it."""
    kind = Pod(BoxSpec("kubernetes", os.environ.get("BALANCED_TEST_POD_IMAGE", "balanced-box:base")))
    name = f"balanced-test-{os.getpid()}"
    try:
        assert subprocess.run(kind.create(name, {"balanced": "1"}), check=False).returncode == 0
        assert subprocess.run(kind.ready(name) or [], check=False).returncode == 0
        out = subprocess.run([*kind.reach(name), "python3", "-c", "print(6*7)"], capture_output=True, text=True)
        assert out.stdout.strip() == "42", out.stderr
    finally:
        subprocess.run(kind.remove([name]), check=False)
