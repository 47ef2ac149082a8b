"""docs/first-run.md, run verbatim: the platform guide and the first-run page on a fresh install.

Two terminals, as two people: the operator's starts in the environment
`eval "$(python -m hack.localcluster env)"` gives (the plane's admin kubeconfig) at the
repository root; the researcher's has no kubeconfig at all until it uses the one the operator's
handoff block wrote, so everything it does is what the workspace's researcher role grants. Each
marked block runs with bash in its person's terminal, which carries the environment and the
working directory from one block to the next as a shell would.

Then every command `tau` suggested in that output is run by whoever it addresses: the
researcher's hints as the researcher, the operator's as the operator. A hint that would change
what the page does next (it creates or installs) is instead shown to be a command the page's
own later block ran as that person; `tau run cancel`, last, ends the run it names.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from controller_harness import get, wait_for
from doc_pages import REPO, operator_shell, page_block
from tau_cli import TAU
from test_cluster_lifecycle import RELEASE_CLUSTER_OBJECTS

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

PAGE = REPO / "docs" / "first-run.md"
WORKSPACE = "taugrid-default"
SYSTEM_NAMESPACE = "tau-system"
RESEARCHER = "alice@example.com"
RUN = "first-run-train"
OPERATOR, RESEARCHER_ROLE = "operator", "researcher"
# Hints whose effect the page's next blocks depend on: proven by the page running them.
CHANGES_WHAT_FOLLOWS = (("workspace", "create"), ("workspace", "init-repo"), ("cluster", "install"))
ENDS_THE_RUN = ("run", "cancel")


def block(name: str) -> str:
    return page_block(PAGE, f"<!-- tests/e2e/test_first_run_page.py: {name} -->")


# --- the two terminals -----------------------------------------------------------------------


@dataclass
class Shell:
    """One person's terminal: bash, with the environment and directory each block leaves."""

    who: str
    env: dict[str, str]
    cwd: Path
    state: Path
    # Every command this terminal ran, as bash traced it (variables expanded).
    traced: list[list[str]] = field(default_factory=list)

    def run(
        self, script: str, *, answer: str | None = None, keep: bool = True, timeout: float = 900
    ) -> subprocess.CompletedProcess[str]:
        """`answer` is typed into a pseudo-terminal on stdin (a person at the keyboard)."""
        dump = self.state / "env"
        dump.unlink(missing_ok=True)
        wrapped = f"trap 'env -0 > {shlex.quote(str(dump))}' EXIT\n{script}"
        argv = ["bash", "-euxo", "pipefail", "-c", wrapped]
        if answer is None:
            done = subprocess.run(
                argv, capture_output=True, text=True, cwd=self.cwd, env=self.env,
                stdin=subprocess.DEVNULL, timeout=timeout, check=False,
            )  # fmt: skip
        else:
            master, slave = pty.openpty()
            try:
                process = subprocess.Popen(
                    argv, cwd=self.cwd, env=self.env, stdin=slave,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
                os.write(master, answer.encode() + b"\n")
                out, err = process.communicate(timeout=timeout)
            finally:
                os.close(master)
                os.close(slave)
            done = subprocess.CompletedProcess(argv, process.returncode, out, err)
        if keep:
            self.traced += traced_commands(done.stderr)
            if dump.is_file():
                carried = dict(
                    item.split("=", 1) for item in dump.read_text().split("\0") if "=" in item
                )
                self.cwd = Path(carried.pop("PWD", str(self.cwd)))
                for gone in ("OLDPWD", "SHLVL", "_"):
                    carried.pop(gone, None)
                self.env = carried
        return done


def traced_commands(stderr: str) -> list[list[str]]:
    """The commands bash -x traced at the block's own level (`+ `), not its subshells' or
    the wrapper's trap."""
    commands = []
    for line in stderr.splitlines():
        if not line.startswith("+ "):
            continue
        try:
            words = shlex.split(line[2:])
        except ValueError:
            continue
        if words and words[0] not in ("trap", "env"):
            commands.append(words)
    return commands


def output_of(done: subprocess.CompletedProcess[str]) -> str:
    """What the person saw: stdout and stderr without bash's trace."""
    err = [line for line in done.stderr.splitlines() if not line.startswith("+")]
    return done.stdout + "\n".join(err)


# --- hints -----------------------------------------------------------------------------------

BACKTICKED = re.compile(r"`(tau [^`]+)`")


def printed_hints(text: str) -> list[str]:
    """Every `tau` command a person is told to run: a line (or a `Next:` clause) that is one,
    or one quoted in backticks inside a sentence."""
    found: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        clauses = stripped.removeprefix("Next:").split(";") if stripped.startswith("Next:") else []
        for part in [stripped, *clauses]:
            part = part.strip().rstrip(".")
            if part.startswith("tau ") and "`" not in part:
                found.append(part)
        found += BACKTICKED.findall(line)
    return list(dict.fromkeys(found))


def verb(hint: str) -> tuple[str, ...]:
    words = [w for w in shlex.split(hint)[1:] if not w.startswith("-")]
    return tuple(words[:2])


def ran_by_page(hint: str, shell: Shell) -> bool:
    """The page's own blocks ran this command in `shell`: the hint's words (a `<placeholder>`
    stands for any word) appear, in order, in one traced command."""
    wanted = shlex.split(hint)

    def matches(command: list[str]) -> bool:
        words = iter(command)
        return all(
            any(w == want or (want.startswith("<") and want.endswith(">")) for w in words)
            for want in wanted
        )

    return any(matches(command) for command in shell.traced)


@dataclass
class Hint:
    command: str
    printed_to: str
    block: str


@dataclass
class Walk:
    cluster: LocalCluster
    operator: Shell
    researcher: Shell
    outputs: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    hints: list[Hint] = field(default_factory=list)

    def shell(self, who: str) -> Shell:
        return self.operator if who == OPERATOR else self.researcher

    def step(self, name: str, who: str, answer: str | None = None) -> str:
        """Run the page's block `name` in `who`'s terminal; it must succeed."""
        done = self.shell(who).run(block(name), answer=answer)
        self.outputs[name] = done
        text = output_of(done)
        assert done.returncode == 0, f"{name} as the {who} failed:\n{done.stderr[-6000:]}"
        self.hints += [Hint(h, who, name) for h in printed_hints(text)]
        return text


def addressee(hint: Hint) -> str:
    """Who a hint is for: `tau run`, `tau logs` and `tau workspace connection` run in the
    research repository, so they address the researcher wherever they were printed."""
    if verb(hint.command)[:1] in (("run",), ("logs",)) or verb(hint.command) == (
        "workspace",
        "connection",
    ):
        return RESEARCHER_ROLE
    return hint.printed_to


# --- the fixture: a fresh install, and its removal -------------------------------------------


def cleanup(cluster: LocalCluster, env: dict[str, str]) -> None:
    cluster.kubectl(
        "delete", "workspaces.tau.azure.com", WORKSPACE, "-n", SYSTEM_NAMESPACE,
        "--ignore-not-found", "--timeout=120s", check=False,
    )  # fmt: skip
    subprocess.run(
        [TAU, "cluster", "uninstall", "--chart", "charts/taugrid", "--yes"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    # Waited for: a later module may create a namespace of this name.
    cluster.kubectl(
        "delete", "namespace", WORKSPACE, "--ignore-not-found", "--timeout=120s", check=False
    )
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)


@pytest.fixture(scope="module")
def walk(
    local_cluster: LocalCluster,
    local_images: dict[str, ImageRef],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Walk]:
    # The page assumes a fresh plane: no release, workspace or cluster object left behind.
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        local_cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)
    home = tmp_path_factory.mktemp("home")
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    shared = {"HOME": str(home), "XDG_CACHE_HOME": cache, "COLUMNS": "200"}
    operator_env = {**operator_shell(local_cluster, tmp_path_factory), **shared}
    # The researcher's terminal: no variable that leads to the plane's admin credentials.
    admin = str(local_cluster.state_dir)
    researcher_env = {
        key: value
        for key, value in operator_env.items()
        if key not in ("KUBECONFIG", "TAU_CONTEXT", "TAU_E2E_KUBECONFIG", "XDG_STATE_HOME")
        and admin not in value
        and str(local_cluster.kubeconfig) not in value
    }
    researcher_env["TAU_CONFIG_DIR"] = str(tmp_path_factory.mktemp("researcher-tau-config"))
    researcher_env["PATH"] = os.pathsep.join([str(local_cluster.bin_dir), researcher_env["PATH"]])
    operator = Shell(OPERATOR, operator_env, REPO, tmp_path_factory.mktemp("operator-shell"))
    researcher = Shell(
        RESEARCHER_ROLE, researcher_env, home, tmp_path_factory.mktemp("researcher-shell")
    )
    try:
        yield Walk(local_cluster, operator, researcher)
    finally:
        cleanup(local_cluster, operator_env)


def researcher_json(walk: Walk, *args: str) -> dict[str, Any]:
    done = walk.researcher.run(shlex.join(["tau", *args, "-o", "json"]), keep=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- the page, block by block ----------------------------------------------------------------


def test_the_operator_installs_from_the_chart_and_the_gate_passes(walk: Walk) -> None:
    text = walk.step("platform install", OPERATOR)
    assert "TauGrid render summary (nothing was applied)" in text
    assert re.search(r"READY: \d+/\d+", text)
    for check in ("Kueue", "KubeRay", "Baseline queue"):
        assert re.search(rf"SKIP\s+{check}\b", text), f"{check} is reported SKIP"
    tau_cluster = get(walk.cluster, "clusters.tau.azure.com", "cluster")
    [profile] = tau_cluster["spec"]["workloadProfiles"]
    assert (profile["name"], profile["defaultLocalQueue"]) == (
        "azure.default.cpu",
        fx.REAL_CLUSTER_QUEUE,
    )


def test_the_operator_creates_the_workspace_for_the_researcher(walk: Walk) -> None:
    text = walk.step("platform workspace", OPERATOR)
    assert f"TauWorkspace {SYSTEM_NAMESPACE}/{WORKSPACE} created" in text
    workspace = get(walk.cluster, "workspaces.tau.azure.com", WORKSPACE, "-n", SYSTEM_NAMESPACE)
    assert workspace["status"]["phase"] == "Ready"
    assert workspace["spec"]["kubernetesSubject"] == {"kind": "User", "name": RESEARCHER}
    assert workspace["status"]["queue"]["localQueue"] == fx.REAL_CLUSTER_QUEUE


def test_the_guides_smoke_example_is_admitted_by_the_default_cpu_profile(walk: Walk) -> None:
    text = walk.step("platform smoke", OPERATOR)
    assert "rayjob.ray.io/cpu-multi-interest-ray created (server dry run)" in text
    assert get(walk.cluster, "rayjob", "cpu-multi-interest-ray", "-n", WORKSPACE) is None


def test_the_handoff_is_a_kubeconfig_and_a_repository_holding_no_credential(walk: Walk) -> None:
    walk.step("platform handoff", OPERATOR)
    handoff = Path(walk.operator.env["HOME"]) / "handoff"
    kubeconfig = yaml.safe_load((handoff / "researcher.kubeconfig").read_text())
    assert kubeconfig["current-context"] == "taugrid-research"
    repo = handoff / "first-run"
    descriptor = yaml.safe_load((repo / "tau" / "workspace.connection.yaml").read_text())
    assert descriptor["workspace"] == WORKSPACE
    assert descriptor["cluster"]["contextName"] == "taugrid-research"
    secret = kubeconfig["users"][0]["user"]["client-key-data"]
    for path in repo.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(), path
    target = yaml.safe_load((repo / "tau" / "train.yaml").read_text())
    assert target["runtime"]["image"].startswith(f"{walk.cluster.registry}/tau@sha256:")


def test_the_researcher_connects_validates_and_submits_with_only_their_kubeconfig(
    walk: Walk,
) -> None:
    denied = walk.cluster.kubectl(
        "auth", "can-i", "create", "pods", "-n", WORKSPACE,
        kubeconfig=Path(walk.operator.env["HOME"]) / "handoff" / "researcher.kubeconfig",
        check=False,
    )  # fmt: skip
    assert denied.stdout.strip() == "no", "the researcher creates no bare pods"
    text = walk.step("researcher submit", RESEARCHER_ROLE, answer="y")
    assert "Connected." in text
    assert "tau/train.yaml is valid" in text
    assert "kind: Job" in text
    assert f"Job {WORKSPACE}/{RUN} submitted" in text
    assert walk.researcher.env["KUBECONFIG"].endswith("handoff/researcher.kubeconfig")


def test_the_run_succeeds_on_the_real_node_and_its_logs_are_the_containers(walk: Walk) -> None:
    text = walk.step("researcher observe", RESEARCHER_ROLE)
    assert "training done; results in" in text

    def succeeded() -> dict[str, Any] | None:
        document = researcher_json(walk, "run", "status", RUN)
        return document if document["status"]["state"] == "succeeded" else None

    document = wait_for("the researcher's run to succeed", succeeded, timeout=300, interval=2)
    [pod] = document["pods"]
    assert pod["node"] == fx.REAL_NODE
    assert RUN in text and "Complete" in text  # tau run list
    # A container that ran and exited is not reported as never started.
    finished = walk.researcher.run(f"tau run status {RUN}", keep=False)
    assert finished.returncode == 0, finished.stderr
    assert "0/1 started" not in finished.stdout, finished.stdout


def test_every_hint_tau_printed_is_runnable_by_whoever_it_addresses(walk: Walk) -> None:
    assert walk.hints, "the walk printed no hint at all"
    # tau uses the connection's isolated kubeconfig itself: no copied command carries one.
    assert not [h.command for h in walk.hints if "KUBECONFIG=" in h.command]
    for done in walk.outputs.values():
        assert "KUBECONFIG=" not in output_of(done)
    cancels, refused = [], []
    for hint in walk.hints:
        who = addressee(hint)
        shell = walk.shell(who)
        if verb(hint.command) == ENDS_THE_RUN:
            cancels.append((hint, shell))
            continue
        if verb(hint.command) in CHANGES_WHAT_FOLLOWS or "<" in hint.command:
            if not ran_by_page(hint.command, shell):
                refused.append(f"{hint.command!r} ({hint.block}): the {who} never ran it")
            continue
        done = shell.run(hint.command, keep=False, timeout=300)
        if done.returncode != 0:
            refused.append(f"{hint.command!r} ({hint.block}) as the {who}: {output_of(done)}")
    for hint, shell in cancels:
        done = shell.run(hint.command, keep=False, timeout=300)
        if done.returncode != 0:
            refused.append(f"{hint.command!r} ({hint.block}): {output_of(done)}")
    assert not refused, "\n".join(refused)
    assert cancels, "the submission's hints end with the cancel that releases the run"
    assert get(walk.cluster, "job", RUN, "-n", WORKSPACE) is None
