"""`--from-model MODEL:ALIAS | MODEL@RUN`: the checkpoint a model registry entry records.

The registry lives on the serving PVC itself (`tau.data`), read through the same helper
pods `tau data model` uses, so the checkpoint it names is on the PVC the endpoint mounts.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from tau.errors import RuntimeFailure
from tau.render.endpoint import Checkpoint
from tau.render.env import DATA_DIR

if TYPE_CHECKING:
    from tau.kube import KubeClient


def model_checkpoint(client: KubeClient, namespace: str, ref: str, pvc: str) -> Checkpoint:
    from tau.data import models
    from tau.data.podroot import PodRoot
    from tau.data.refs import parse_model

    parsed = parse_model(ref)
    with PodRoot(client, namespace, pvc, models.SCOPE) as root:
        resolved = models.resolve_model_ref(root, parsed)
    path = posixpath.normpath(resolved.checkpoint_path)
    if path != DATA_DIR and not path.startswith(DATA_DIR + "/"):
        raise RuntimeFailure(
            f"--from-model {ref}: the registry names checkpoint {path}, outside {DATA_DIR}",
            hint="re-register the model with its checkpoint on the data PVC",
            owner="researcher: the model registry entry",
        )
    return Checkpoint(path=path, pvc=pvc)
