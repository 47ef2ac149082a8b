"""Every refusal of `tau serve deploy|status|scale|delete` is one line naming the flag.

Offline (a profile snapshot and --dry-run=client) so the table needs no cluster; the live-only
refusals (LocalQueue onboarding, finetune runs) are in tests/e2e/test_serve.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.cli.main import cli, run

from .profiles import CPU, ELASTIC, GPU, MULTI, NAMESPACE, WIDE, snapshot

FLAGS_OWNER = "(owner: researcher: tau serve deploy flags)"
PROFILE_OWNER = "(owner: researcher: --profile (choose a serving profile that fits))"


@pytest.fixture(scope="module")
def snap(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("serve") / "profiles.snapshot.yaml")


def tau(capsys, *args: str) -> tuple[int, str, str]:
    code = run(cli, "tau", list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def offline(snap: Path, *extra: str, profile: str = GPU, kind: str = "rayservice") -> list[str]:
    return [
        "serve",
        "deploy",
        "svc",
        "--kind",
        kind,
        "--profile",
        profile,
        "-n",
        NAMESPACE,
        "--image",
        "img:1",
        "--dry-run=client",
        "--workload-profile-snapshot",
        str(snap),
        *extra,
    ]


def deployment(snap: Path, *extra: str, profile: str = CPU) -> list[str]:
    return offline(snap, *extra, profile=profile, kind="deployment")


# (case id, argv builder, exact start of the error line after "error: ")
FLAG_CASES = [
    ("kind", lambda s: offline(s, "--kind", "vm"), "--kind must be one of: rayservice, deployment"),
    (
        "dry-run",
        lambda s: offline(s, "--dry-run", "maybe"),
        "--dry-run must be one of: client, server",
    ),
    (
        "deployment-port-on-ray",
        lambda s: offline(s, "--deployment-port", "80"),
        "--deployment-port applies only to --kind deployment",
    ),
    (
        "service-port-on-ray",
        lambda s: offline(s, "--service-port", "80"),
        "--service-port applies only to --kind deployment",
    ),
    (
        "readiness-on-ray",
        lambda s: offline(s, "--readiness-path", "/h"),
        "--readiness-path applies only to --kind deployment",
    ),
    (
        "init-on-ray",
        lambda s: offline(s, "--init", "a=b"),
        "--init applies only to --kind deployment",
    ),
    (
        "command-on-ray",
        lambda s: offline(s, "--command", "x"),
        "--command applies only to --kind deployment",
    ),
    (
        "pip-on-deployment",
        lambda s: deployment(s, "--runtime-pip", "numpy"),
        "--runtime-pip applies only to --kind rayservice",
    ),
    (
        "import-path-on-deployment",
        lambda s: deployment(s, "--import-path", "a:b"),
        "--import-path applies only to --kind rayservice",
    ),
    (
        "port-on-deployment",
        lambda s: deployment(s, "--port", "9000"),
        "--port applies only to --kind rayservice",
    ),
    (
        "nodes-on-deployment",
        lambda s: deployment(s, "--nodes", "2"),
        "--nodes applies only to --kind rayservice",
    ),
    (
        "ray-version-on-deployment",
        lambda s: deployment(s, "--ray-version", "2.40.0"),
        "--ray-version applies only to --kind rayservice",
    ),
    ("replicas-zero", lambda s: offline(s, "--replicas", "0"), "--replicas 0 must be >= 1"),
    (
        "replicas-and-max",
        lambda s: offline(s, "--replicas", "2", "--max-replicas", "3"),
        "--replicas and --max-replicas are mutually exclusive",
    ),
    (
        "min-without-max",
        lambda s: offline(s, "--min-replicas", "2"),
        "--min-replicas needs --max-replicas > 0 (autoscaling)",
    ),
    (
        "qps-without-max",
        lambda s: offline(s, "--target-qps", "9"),
        "--target-qps needs --max-replicas > 0 (autoscaling)",
    ),
    (
        "delay-without-max",
        lambda s: offline(s, "--scale-down-delay", "9"),
        "--scale-down-delay needs --max-replicas > 0 (autoscaling)",
    ),
    (
        "min-over-max",
        lambda s: offline(s, "--min-replicas", "5", "--max-replicas", "3"),
        "--min-replicas 5 exceeds --max-replicas 3",
    ),
    (
        "hpa-without-cpu",
        lambda s: deployment(s, "--max-replicas", "3"),
        "--max-replicas on --kind deployment needs --cpu",
    ),
    (
        "hpa-min-zero",
        lambda s: deployment(s, "--max-replicas", "3", "--min-replicas", "0", "--cpu", "1"),
        "--min-replicas 0 must be >= 1 for --kind deployment",
    ),
    (
        "arg-and-args",
        lambda s: deployment(s, "--arg", "a", "--args", "b c"),
        "--arg and --args are mutually exclusive",
    ),
    (
        "app-args-no-import",
        lambda s: offline(s, "--app-args", "args.yaml"),
        "--app-args requires an explicit --import-path",
    ),
    (
        "app-args-replicas",
        lambda s: offline(s, "--app-args", "a.yaml", "--import-path", "a:b", "--replicas", "2"),
        "--app-args cannot be combined with --replicas",
    ),
    (
        "app-args-autoscaling",
        lambda s: offline(s, "--app-args", "a.yaml", "--import-path", "a:b", "--max-replicas", "2"),
        "--app-args cannot be combined with --max-replicas",
    ),
    (
        "app-args-args",
        lambda s: offline(s, "--app-args", "a.yaml", "--import-path", "a:b", "--args", "x"),
        "--app-args cannot be combined with --args",
    ),
    (
        "app-args-unreadable",
        lambda s: offline(s, "--app-args", "/nonexistent/a.yaml", "--import-path", "a:b"),
        "--app-args /nonexistent/a.yaml: cannot read",
    ),
    (
        "nodes-one",
        lambda s: offline(s, "--nodes", "1"),
        "--nodes 1 must be between 2 and 2147483647",
    ),
    (
        "nodes-args",
        lambda s: offline(s, "--nodes", "2", "--args", "x"),
        "--args cannot be used with --nodes",
    ),
    (
        "port-range",
        lambda s: offline(s, "--port", "70000"),
        "--port 70000 must be between 1 and 65535",
    ),
    (
        "target-port-alone",
        lambda s: deployment(s, "--service-target-port", "80"),
        "--service-target-port needs --service-port",
    ),
    (
        "two-checkpoints",
        lambda s: offline(s, "--checkpoint", "a", "--from-finetune", "r"),
        "--checkpoint and --from-finetune are mutually exclusive: give one checkpoint source",
    ),
    (
        "model-and-model-ref",
        lambda s: offline(s, "--from-model", "m:a", "--model-ref", "m:b"),
        "--from-model and --model-ref are mutually exclusive",
    ),
    (
        "pvc-alone",
        lambda s: offline(s, "--checkpoint-pvc", "data"),
        "--checkpoint-pvc needs a checkpoint: --checkpoint, --from-finetune or --from-model",
    ),
    (
        "finetune-client",
        lambda s: offline(s, "--from-finetune", "run-1"),
        "--from-finetune reads Kubernetes metadata, so it cannot be used with --dry-run=client",
    ),
    (
        "ref-client",
        lambda s: offline(s, "--checkpoint-ref", "finetune/run-1"),
        "--checkpoint-ref reads Kubernetes metadata, so it cannot be used with --dry-run=client",
    ),
    (
        "model-client",
        lambda s: offline(s, "--from-model", "policy:prod"),
        "--from-model reads Kubernetes metadata, so it cannot be used with --dry-run=client",
    ),
    (
        "shm-zero",
        lambda s: offline(s, "--shm-size", "0"),
        '--shm-size "0" must be a positive quantity such as 16Gi or 500m',
    ),
    (
        "shm-words",
        lambda s: offline(s, "--shm-size", "lots"),
        '--shm-size "lots" must be a positive quantity',
    ),
    (
        "memory-words",
        lambda s: offline(s, "--memory", "big"),
        '--memory "big" must be a positive quantity',
    ),
    ("gpus-negative", lambda s: offline(s, "--gpus", "-1"), "--gpus -1 must be >= 0"),
    (
        "threshold-alone",
        lambda s: deployment(s, "--startup-failure-threshold", "3"),
        "--startup-failure-threshold needs --startup-path",
    ),
    ("env-no-eq", lambda s: offline(s, "--env", "NOEQ"), '--env "NOEQ"=… must be KEY=VALUE'),
    (
        "env-bad-name",
        lambda s: offline(s, "--env", "1BAD=x"),
        '--env "1BAD": not a valid environment variable name',
    ),
    ("env-twice", lambda s: offline(s, "--env", "A=1", "--env", "A=2"), "--env A is given twice"),
    (
        "env-secret-shape",
        lambda s: offline(s, "--env-secret", "TOKEN=hf"),
        '--env-secret "TOKEN"=<redacted> must be KEY=SECRET:KEY',
    ),
    (
        "volume-kind",
        lambda s: offline(s, "--volume", "v=nfs:x"),
        '--volume v: kind "nfs" must be one of: pvc, emptyDir, configMap, secret',
    ),
    (
        "volume-source",
        lambda s: offline(s, "--volume", "v=pvc"),
        "--volume v=pvc needs a source: v=pvc:NAME",
    ),
    (
        "volume-emptydir-source",
        lambda s: offline(s, "--volume", "v=emptyDir:x"),
        "--volume v=emptyDir takes no source",
    ),
    (
        "volume-name",
        lambda s: offline(s, "--volume", "V_1=emptyDir"),
        '--volume name "V_1" must be a DNS-1123 label',
    ),
    (
        "mount-undeclared",
        lambda s: offline(s, "--mount", "v:/x"),
        "--mount v: no --volume v=KIND[:SOURCE] declares it",
    ),
    (
        "mount-relative",
        lambda s: offline(s, "--volume", "v=emptyDir", "--mount", "v:x"),
        '--mount v:"x": the path must be absolute',
    ),
    (
        "mount-mode",
        lambda s: offline(s, "--volume", "v=emptyDir", "--mount", "v:/x:rx"),
        '--mount v:/x: mode "rx" must be ro or rw',
    ),
    ("init-shape", lambda s: deployment(s, "--init", "warm"), '--init "warm" must be NAME=IMAGE'),
    (
        "deployment-port-zero",
        lambda s: deployment(s, "--deployment-port", "0"),
        '--deployment-port "0" must be a port between 1 and 65535',
    ),
    (
        "deployment-port-twice",
        lambda s: deployment(s, "--deployment-port", "80,80"),
        "--deployment-port 80 is given twice",
    ),
    (
        "checkpoint-dotdot",
        lambda s: offline(s, "--checkpoint", "../etc"),
        "--checkpoint \"../etc\" must not contain '..'",
    ),
    (
        "checkpoint-outside",
        lambda s: offline(s, "--checkpoint", "/etc/model"),
        '--checkpoint "/etc/model" is outside /data, where --checkpoint-pvc is mounted',
    ),
    (
        "checkpoint-ref-shape",
        lambda s: [
            "serve",
            "deploy",
            "svc",
            "--profile",
            GPU,
            "-n",
            NAMESPACE,
            "--checkpoint-ref",
            "run/x",
        ],
        '--checkpoint-ref "run/x" must be finetune/RUN[:ARTIFACT]',
    ),
]


@pytest.mark.parametrize(("case", "argv", "message"), FLAG_CASES, ids=[c[0] for c in FLAG_CASES])
def test_flag_refusals(capsys, snap, case, argv, message):
    code, out, err = tau(capsys, *argv(snap))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {message}"), line
    assert line.endswith(FLAGS_OWNER), line


def test_profile_and_namespace_are_required(capsys, snap):
    argv = offline(snap)
    profile_at = argv.index("--profile")
    code, _, err = tau(capsys, *(argv[:profile_at] + argv[profile_at + 2 :]))
    assert (code, err) == (2, f"error: --profile is required (e.g. model-serve) {FLAGS_OWNER}\n")
    ns_at = argv.index("-n")
    code, _, err = tau(capsys, *(argv[:ns_at] + argv[ns_at + 2 :]))
    assert code == 2
    assert err == (
        "error: -n/--namespace is required; serving uses the namespace and context from the"
        f" platform handoff; tau/workspace.connection.yaml is not read {FLAGS_OWNER}\n"
    )


def test_snapshot_needs_client_dry_run(capsys, snap):
    argv = [a for a in offline(snap) if a != "--dry-run=client"]
    code, _, err = tau(capsys, *argv)
    assert code == 2
    assert err.startswith("error: --workload-profile-snapshot requires --dry-run=client;")


PROFILE_CASES = [
    (
        "unknown",
        lambda s: offline(s, profile="nope"),
        "workload profile 'nope' is not published by snapshot",
    ),
    (
        "gpus-mismatch",
        lambda s: offline(s, "--gpus", "2"),
        '--gpus 2 does not match workload profile "model-serve" (gpusPerWorker 1)',
    ),
    (
        "nodes-on-single",
        lambda s: offline(s, "--nodes", "2"),
        '--nodes 2 needs a multi-node serving profile; workload profile "model-serve" has placement'
        " independent (needs multi-node-nccl), workerCount 1 (--nodes is 2)",
    ),
    (
        "nodes-elastic",
        lambda s: offline(s, "--nodes", "2", profile=ELASTIC),
        f'--nodes 2 needs a multi-node serving profile; workload profile "{ELASTIC}" has mode'
        " elastic (needs fixed)",
    ),
    (
        "nodes-cpu",
        lambda s: offline(s, "--nodes", "2", profile=WIDE),
        f'--nodes 2 needs a multi-node serving profile; workload profile "{WIDE}" has no GPUs per'
        " worker (needs >= 1)",
    ),
    (
        "nodes-count",
        lambda s: offline(s, "--nodes", "4", profile=MULTI),
        f'--nodes 4 needs a multi-node serving profile; workload profile "{MULTI}" has workerCount'
        " 2 (--nodes is 4)",
    ),
    (
        "multi-without-nodes",
        lambda s: offline(s, profile=MULTI),
        f'workload profile "{MULTI}" spans 2 workers; pass --nodes 2, or choose a single-worker'
        " profile",
    ),
    (
        "multi-deployment",
        lambda s: deployment(s, profile=MULTI),
        f'workload profile "{MULTI}" spans 2 workers; --kind deployment runs one pod per replica',
    ),
]


@pytest.mark.parametrize(
    ("case", "argv", "message"), PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES]
)
def test_profile_refusals(capsys, snap, case, argv, message):
    code, out, err = tau(capsys, *argv(snap))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {message}"), line


def test_no_image_names_the_profile(capsys, snap):
    argv = offline(snap)
    at = argv.index("--image")
    code, _, err = tau(capsys, *(argv[:at] + argv[at + 2 :]))
    assert code == 2
    assert err.startswith(
        'error: no image: profile "model-serve" declares no runtime image and --image was not set;'
    )
    assert err.rstrip().endswith(PROFILE_OWNER)


RENDER_CASES = [
    (
        "name-too-long",
        lambda s: [*offline(s)[:2], "a" * 48, *offline(s)[3:]],
        "service name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' is too long (48 chars; at"
        " most 47 for --kind rayservice)",
    ),
    (
        "name-digit",
        lambda s: [*offline(s)[:2], "1svc", *offline(s)[3:]],
        "service name '1svc' must be a DNS-1035 label",
    ),
    (
        "managed-env",
        lambda s: offline(s, "--checkpoint", "m", "--env", "TAU_MODEL_PATH=/x"),
        "--env TAU_MODEL_PATH is set by Tau for this endpoint and cannot be overridden",
    ),
    (
        "blank-pip",
        lambda s: offline(s, "--runtime-pip", "numpy", "--runtime-pip", " "),
        "runtime.pip[1]: blank entry",
    ),
    (
        "probe-no-port",
        lambda s: deployment(s, "--readiness-path", "/ready"),
        "a probe path needs a port: set --service-port, --service-target-port or --deployment-port",
    ),
    (
        "probe-slash",
        lambda s: deployment(s, "--readiness-path", "ready", "--deployment-port", "80"),
        "--readiness-path 'ready' must start with '/'",
    ),
    (
        "checkpoint-mount-collision",
        lambda s: offline(s, "--checkpoint", "m", "--volume", "v=emptyDir", "--mount", "v:/data"),
        "--checkpoint mounts PVC blob-training at /data",
    ),
    (
        "shm-collision",
        lambda s: offline(
            s, "--shm-size", "1Gi", "--volume", "v=emptyDir", "--mount", "v:/dev/shm"
        ),
        "--shm-size adds volume tau-shm at /dev/shm",
    ),
    (
        "shape-env",
        lambda s: offline(s, "--nodes", "2", "--env", "TAU_SERVE_NODES=3", profile=MULTI),
        'TAU_SERVE_NODES is supplied by the workload profile and must be "2"',
    ),
]


@pytest.mark.parametrize(
    ("case", "argv", "message"), RENDER_CASES, ids=[c[0] for c in RENDER_CASES]
)
def test_render_refusals(capsys, snap, case, argv, message):
    code, out, err = tau(capsys, *argv(snap))
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {message}"), line


def test_secret_values_never_echo_in_errors(capsys, snap):
    code, _, err = tau(
        capsys, *offline(snap, "--env", "API_KEY=hunter2-secret", "--env", "API_KEY=x")
    )
    assert code == 2 and "hunter2" not in err
    code, _, err = tau(capsys, *offline(snap, "--env-secret", "TOKEN=vault-name"))
    assert code == 2 and "vault-name" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["serve", "scale", "svc", "-n", NAMESPACE, "--replicas", "3"],
            "scaling a RayService is not yet implemented: its replica count lives in the serialized"
            " Serve config; redeploy with `tau serve deploy svc --replicas N`",
        ),
        (
            ["serve", "scale", "svc", "--kind", "deployment", "-n", NAMESPACE],
            "--replicas is required",
        ),
        (
            ["serve", "scale", "svc", "--kind", "deployment", "-n", NAMESPACE, "--replicas", "-1"],
            "--replicas -1 must be >= 0",
        ),
        (["serve", "status", "svc"], "-n/--namespace is required"),
        (
            ["serve", "delete", "svc", "--kind", "job", "-n", NAMESPACE],
            '--kind must be one of: rayservice, deployment (got "job")',
        ),
    ],
)
def test_manage_refusals_need_no_cluster(capsys, argv, message):
    code, out, err = tau(capsys, *argv)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith(f"error: {message}"), line
