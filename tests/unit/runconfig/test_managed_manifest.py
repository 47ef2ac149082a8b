"""Managed workflow manifests are recognised by schema and parsed permissively."""

from __future__ import annotations

import hashlib

from tau.runconfig import ManagedManifest


def test_schema_version_without_engine_is_a_managed_manifest(loads) -> None:
    loaded = loads("schema_version: 1\nname: wf\nrun: {main_script: train.py}\n")
    assert loaded.is_managed
    assert isinstance(loaded.config, ManagedManifest)
    assert loaded.config.schema_version == 1
    assert loaded.config.name == "wf"
    assert loaded.warnings == []


def test_schema_version_with_an_engine_is_a_direct_config(loads) -> None:
    assert not loads("schema_version: 1\nengine: job\n").is_managed
    assert not loads("schema_version: 1\nrun: {engine: rayjob}\n").is_managed


def test_unknown_managed_keys_warn_with_did_you_mean(loads) -> None:
    loaded = loads("schema_version: 1\ncompute:\n  wrokers: 2\nfrobnicate: true\n")
    assert [(w.path, w.line) for w in loaded.warnings] == [
        ("compute.wrokers", 3),
        ("frobnicate", 4),
    ]
    assert loaded.warnings[0].message == (
        'unknown config key "compute.wrokers" (ignored); did you mean "compute.workers"?'
    )
    assert "did you mean" not in loaded.warnings[1].message


def test_unknown_container_suggests_the_parent_of_its_children(loads) -> None:
    loaded = loads("schema_version: 1\ncomptue:\n  gpus: 1\n  workers: 2\n")
    assert 'did you mean "compute"?' in loaded.warnings[0].message


def test_pass_through_and_free_form_keys_never_warn(loads) -> None:
    loaded = loads(
        """
        schema_version: 1
        eval: {stage: after-train}
        research: {x: 1}
        compute: {cpus: 4, memory: 8Gi}
        runtime:
          env: {ANY_NAME: v}
          rdma: {enabled: true, count: 1}
        policy: {node_selector: {any/key: v}}
        execution: {configs: {whatever: [1]}}
        storage:
          mounts:
            - {name: d, mountPath: /d, pvc: p, readOnly: true}
        """
    )
    assert loaded.warnings == []


def test_children_of_checked_containers_are_checked(loads) -> None:
    loaded = loads("schema_version: 1\nruntime:\n  rdma: {enabld: true}\n")
    assert loaded.warnings[0].path == "runtime.rdma.enabld"
    assert 'did you mean "runtime.rdma.enabled"?' in loaded.warnings[0].message


def test_list_elements_share_the_parent_path(loads) -> None:
    loaded = loads("schema_version: 1\nstorage:\n  mounts:\n    - {nme: d}\n")
    assert "storage.mounts.nme" in loaded.warnings[0].message


def test_managed_hash_is_the_sha256_of_the_raw_bytes(write) -> None:
    from tau.runconfig import load

    path = write("schema_version: 1\nname: wf\n")
    assert load(path).config_hash == hashlib.sha256(path.read_bytes()).hexdigest()


def test_managed_manifests_reject_staged_publication(issues) -> None:
    (issue,) = issues("schema_version: 1\nstorage: {publish: staged}\n")
    assert issue.path == "storage.publish"
