"""The RayJob payload: the entrypoint (and Tune driver) shipped inside the object.

Files travel as one deterministic JSON envelope, base64-encoded in an init container's env
and unpacked into /script; its SHA-256 is both verified at unpack time and stamped as
`tau.azure.com/payload-digest`, so a resumed run can tell whether the code changed.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from tau import keys
from tau.render.errors import RenderError

PAYLOAD_MAX_BYTES = 64 * 1024
PAYLOAD_RESOURCES = {
    "requests": {"cpu": "10m", "memory": "32Mi"},
    "limits": {"cpu": "250m", "memory": "128Mi"},
}

# Runs in the workload image with only the standard library.
DECODER = (
    "import base64,hashlib,json,os,sys\n"
    f"raw=base64.b64decode(os.environ['{keys.ENV_PAYLOAD_B64}'])\n"
    f"if hashlib.sha256(raw).hexdigest()!=os.environ['{keys.ENV_PAYLOAD_DIGEST}']:\n"
    "    sys.exit('tau-payload: digest mismatch; the RayJob was modified after rendering')\n"
    f"target=os.environ['{keys.ENV_PAYLOAD_TARGET_DIR}']\n"
    "for item in json.loads(raw)['files']:\n"
    "    with open(os.path.join(target,item['name']),'wb') as handle:\n"
    "        handle.write(base64.b64decode(item['data']))\n"
)


# Unpacks a `run.working_dir` archive (a zip with one top directory, `project/`) into the
# target dir of a Job pod, refusing members that would land outside it.
PROJECT_DECODER = (
    "import base64,hashlib,io,os,stat,sys,zipfile\n"
    f"raw=base64.b64decode(os.environ['{keys.ENV_PAYLOAD_B64}'])\n"
    f"if hashlib.sha256(raw).hexdigest()!=os.environ['{keys.ENV_PAYLOAD_DIGEST}']:\n"
    "    sys.exit('tau-project: digest mismatch; the Job was modified after rendering')\n"
    f"target=os.path.realpath(os.environ['{keys.ENV_PAYLOAD_TARGET_DIR}'])\n"
    "with zipfile.ZipFile(io.BytesIO(raw)) as archive:\n"
    "    for info in archive.infolist():\n"
    "        name=info.filename.split('/',1)[1] if '/' in info.filename else ''\n"
    "        path=os.path.realpath(os.path.join(target,name))\n"
    "        if not name or info.is_dir() or not path.startswith(target+os.sep):\n"
    "            continue\n"
    "        os.makedirs(os.path.dirname(path),exist_ok=True)\n"
    "        with open(path,'wb') as handle:\n"
    "            handle.write(archive.read(info))\n"
    "        os.chmod(path,0o777 if (info.external_attr>>16)&stat.S_IXUSR else 0o666)\n"
    "for root,dirs,_ in os.walk(target):\n"
    "    for d in dirs:\n"
    "        os.chmod(os.path.join(root,d),0o777)\n"
)
PROJECT_FILE = "_tau_project.zip"


@dataclass(frozen=True)
class Payload:
    encoded: str
    digest: str


def build_payload(files: dict[str, bytes]) -> Payload:
    envelope = {
        "version": 1,
        "files": [
            {"name": name, "data": base64.b64encode(files[name]).decode()} for name in sorted(files)
        ],
    }
    raw = json.dumps(envelope, sort_keys=True, separators=(",", ":")).encode()
    if len(raw) > PAYLOAD_MAX_BYTES:
        raise RenderError(
            f"RayJob payload is {len(raw)} bytes encoded; maximum is {PAYLOAD_MAX_BYTES}",
            hint="keep the entrypoint small and bake dependencies into the image",
        )
    return Payload(base64.b64encode(raw).decode(), hashlib.sha256(raw).hexdigest())
