"""The workspace connection descriptor, `tau/workspace.connection.yaml` (schema v1).

It is the only artifact a platform hands to a research repository, and it is checked in:
so it names *where* and *how* to connect (workspace, kube context, access method,
authorization contract) and must never carry *credentials*. Content that looks like a
kubeconfig, token, client secret or certificate is refused with a message saying why,
without echoing the secret back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from tau import credentials
from tau.api.meta import DNS1123_LABEL, DNS1123_SUBDOMAIN
from tau.api.workspace import CLUSTER_WIDE, WORKSPACE_RBAC
from tau.errors import ValidationError

SCHEMA = "tau.workspace.connection.v1"
DESCRIPTOR_PATH = "tau/workspace.connection.yaml"
DEFAULT_SYSTEM_NAMESPACE = "tau-system"
OWNER = "platform operator who authored the descriptor"

ACCESS_METHODS = ("kubeconfig", "aks")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, defer_build=True)


class ConnectionCluster(_Strict):
    contextName: str = Field(description="The kube context Tau selects.")
    systemNamespace: str | None = Field(
        default=None, description=f"TauGrid system namespace (default {DEFAULT_SYSTEM_NAMESPACE})."
    )

    @field_validator("contextName")
    @classmethod
    def _context(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("systemNamespace")
    @classmethod
    def _system_namespace(cls, value: str | None) -> str | None:
        if value is not None and not _is_label(value):
            raise ValueError(f"{value!r} is not a DNS-1123 label")
        return value


class AksAccess(_Strict):
    resourceID: str = Field(description="ARM resource ID of the AKS managed cluster.")
    tenantID: str = Field(description="Microsoft Entra tenant ID (UUID).")

    @field_validator("resourceID")
    @classmethod
    def _resource_id(cls, value: str) -> str:
        parse_aks_resource_id(value)
        return value

    @field_validator("tenantID")
    @classmethod
    def _tenant(cls, value: str) -> str:
        if not is_uuid(value):
            raise ValueError("must be a UUID (8-4-4-4-12 hex digits)")
        return value


class ConnectionAccess(_Strict):
    method: str = Field(description="kubeconfig (an existing context) or aks.")
    aks: AksAccess | None = None

    @field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        if value not in ACCESS_METHODS:
            raise ValueError(f"{value!r} is not one of: {', '.join(ACCESS_METHODS)}")
        return value

    @model_validator(mode="after")
    def _aks_block(self) -> ConnectionAccess:
        if self.method == "aks" and self.aks is None:
            raise ValueError("access.aks (resourceID, tenantID) is required for method aks")
        if self.method == "kubeconfig" and self.aks is not None:
            raise ValueError("access.aks must be omitted for method kubeconfig")
        return self


class ConnectionAuthorization(_Strict):
    mode: str = Field(description="cluster-wide or workspace-rbac.")
    requiredRole: str | None = None

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in (CLUSTER_WIDE, WORKSPACE_RBAC):
            raise ValueError(f"{value!r} is not one of: {CLUSTER_WIDE}, {WORKSPACE_RBAC}")
        return value

    @model_validator(mode="after")
    def _role(self) -> ConnectionAuthorization:
        if self.mode == CLUSTER_WIDE and self.requiredRole is not None:
            raise ValueError(
                "authorization.requiredRole must be omitted for cluster-wide mode"
                " (the workspace is not an authorization boundary)"
            )
        if self.mode == WORKSPACE_RBAC and not (self.requiredRole or "").strip():
            raise ValueError("authorization.requiredRole is required for workspace-rbac mode")
        return self


class ConnectionRequirements(_Strict):
    minTauVersion: str

    @field_validator("minTauVersion")
    @classmethod
    def _version(cls, value: str) -> str:
        parse_version(value)
        return value


class ConnectionNetwork(_Strict):
    privateCluster: bool = False
    instructions: str | None = None

    @model_validator(mode="after")
    def _instructions(self) -> ConnectionNetwork:
        if self.privateCluster and not (self.instructions or "").strip():
            raise ValueError("network.instructions must say how to reach a private cluster")
        return self


class WorkspaceConnection(_Strict):
    """`tau.workspace.connection.v1`: field names are the YAML keys (camelCase)."""

    schema_: str = Field(alias="schema")
    workspace: str
    cluster: ConnectionCluster
    access: ConnectionAccess
    authorization: ConnectionAuthorization
    requirements: ConnectionRequirements
    network: ConnectionNetwork | None = None

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: str) -> str:
        if value != SCHEMA:
            raise ValueError(f"must be {SCHEMA}")
        return value

    @field_validator("workspace")
    @classmethod
    def _workspace(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        if not is_dns_subdomain(value):
            raise ValueError(f"{value!r} is not a DNS-1123 subdomain")
        return value

    @property
    def system_namespace(self) -> str:
        return self.cluster.systemNamespace or DEFAULT_SYSTEM_NAMESPACE

    @property
    def context_name(self) -> str:
        return self.cluster.contextName

    @property
    def private_cluster(self) -> bool:
        return bool(self.network and self.network.privateCluster)

    @property
    def access_identity(self) -> str:
        """What the caller authenticates against: pins and state file names hash this."""
        if self.access.method == "aks" and self.access.aks is not None:
            aks = self.access.aks
            return f"aks:{aks.resourceID.lower()}:{aks.tenantID.lower()}"
        return f"kubeconfig:{self.cluster.contextName}"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @property
    def digest(self) -> str:
        encoded = json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=False)
        return "sha256:" + hashlib.sha256(encoded.encode()).hexdigest()


# --- value rules -----------------------------------------------------------------------------


def _is_label(value: str) -> bool:
    return len(value) <= 63 and re.fullmatch(DNS1123_LABEL, value) is not None


def is_dns_subdomain(value: str) -> bool:
    return len(value) <= 253 and re.fullmatch(DNS1123_SUBDOMAIN, value) is not None


_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_uuid(value: str) -> bool:
    return _UUID.fullmatch(value) is not None


@dataclass(frozen=True)
class AksResourceID:
    subscription: str
    resource_group: str
    name: str

    def __str__(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            f"/providers/Microsoft.ContainerService/managedClusters/{self.name}"
        )


def parse_aks_resource_id(value: str) -> AksResourceID:
    """Parse an ARM ID of a `Microsoft.ContainerService/managedClusters` resource."""
    parts = value.strip("/").split("/")
    expected = "/subscriptions/<uuid>/resourceGroups/<group>/providers/"
    expected += "Microsoft.ContainerService/managedClusters/<name>"
    if value != value.strip() or not value.startswith("/") or len(parts) != 8:
        raise ValueError(f"must be an ARM resource ID shaped {expected}")
    keys = [part.lower() for part in parts[0:8:2]]
    if keys != ["subscriptions", "resourcegroups", "providers", "managedclusters"]:
        raise ValueError(f"must be an ARM resource ID shaped {expected}")
    if parts[5].lower() != "microsoft.containerservice":
        raise ValueError("provider namespace must be Microsoft.ContainerService")
    subscription, group, name = parts[1], parts[3], parts[7]
    if not (subscription and group and name):
        raise ValueError("subscription, resource group and cluster name must be non-empty")
    if not is_uuid(subscription):
        raise ValueError("subscription ID must be a UUID")
    return AksResourceID(subscription, group, name)


_DESCRIPTOR_VERSION = re.compile(r"\d+\.\d+\.\d+")


def parse_version(value: str) -> Version:
    """A descriptor's `major.minor.patch`, optional leading `v`; a `-suffix` is ignored."""
    core = value.strip().removeprefix("v").split("-", 1)[0]
    if not _DESCRIPTOR_VERSION.fullmatch(core):
        raise ValueError(f"{value!r} is not a version like 0.3.0")
    return Version(core)


def check_tau_version(descriptor: WorkspaceConnection, installed: str) -> None:
    """The descriptor's `minTauVersion` gate; a `dev` build always passes.

    The installed CLI's version is PEP 440 (`0.3.2`, `0.3.3.dev4+g1a2b`): its release part is
    what is compared, so a pre-release of the required version is not "too old".
    """
    if installed.strip().lower() == "dev":
        return
    required = descriptor.requirements.minTauVersion
    try:
        have = Version(Version(installed.strip().removeprefix("v")).base_version)
    except InvalidVersion:
        return
    if have < parse_version(required):
        raise ValidationError(
            f"descriptor: Tau {installed} is too old for this repository;"
            f" install Tau {required} or newer",
            owner="researcher (upgrade the tau CLI)",
        )


# --- credential-shaped content ---------------------------------------------------------------

_SECRET_KEY_NAMES = (
    "token|id-token|refresh-token|access-token|access_token|password|"
    "client-secret|client_secret|clientSecret|secret|client-key-data|client-certificate-data|"
    "certificate-authority-data|client-key|client-certificate|auth-provider|exec|"
    "apiKey|api-key|api_key|sasToken|sas_token|accountKey|account_key|privateKey|private-key|"
    "private_key|kubeconfig|users|current-context"
)
_SECRET_KEYS = re.compile(rf"(?P<key>{_SECRET_KEY_NAMES})[\"']?\s*:", re.IGNORECASE)
_SECRET_KEY_SET = frozenset(name.lower() for name in _SECRET_KEY_NAMES.split("|"))


def credential_findings(text: str) -> list[str]:
    """Where `text` holds something credential-shaped: `line N: looks like <what>`.

    Scans the raw text (comments included: they are checked in too) and never returns the
    matched bytes.
    """
    findings: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        key = _secret_key(line)
        if key:
            findings.append(f"line {number}: key {key!r} belongs to a kubeconfig or credential")
            continue
        what = _secret_value(line)
        if what:
            findings.append(f"line {number}: looks like {what}")
    return findings


def _secret_key(line: str) -> str:
    """A credential key starting the line, a comment (`# token: ...` is checked in too) or a
    flow-mapping entry (`{token: ...}`); "" when there is none."""
    if ":" not in line:
        return ""
    for match in _SECRET_KEYS.finditer(line):
        before = line[max(0, match.start() - 64) : match.start()].rstrip(" \t\"'-")
        if (not before and match.start() <= 64) or (before and before[-1] in "#{,"):
            return match.group("key")
    return ""


def decoded_findings(scalars: Iterable[tuple[int, str, bool]]) -> list[str]:
    """The same scan over decoded scalars `(line, text, is_key)`.

    YAML escapes and line continuations (`"eyJ...\\<newline>  eyJ..."`) reassemble a value
    that no raw line shows; the decoded text is what a command would print.
    """
    findings: list[str] = []
    for line, text, is_key in scalars:
        if is_key and text.strip().lower() in _SECRET_KEY_SET:
            findings.append(
                f"line {line}: key {text.strip()!r} belongs to a kubeconfig or credential"
            )
            continue
        what = _secret_value(text)
        if what:
            findings.append(f"line {line}: looks like {what}")
    return list(dict.fromkeys(findings))


def _secret_value(text: str) -> str:
    return credentials.looks_like(text)


def refuse_credentials(text: str, source: str, *, decoded: list[str] | None = None) -> None:
    """Refuse a descriptor holding credential-shaped content (raw text, then `decoded`)."""
    findings = credential_findings(text) or list(decoded or [])
    if findings:
        raise ValidationError(
            f"descriptor: {source} contains credential-shaped content; the descriptor is checked"
            " in and must never hold a kubeconfig, token, client secret or certificate",
            problems=findings,
            hint="remove it; credentials stay in your kubeconfig or Azure sign-in",
            owner=OWNER,
        )


# --- parsing ---------------------------------------------------------------------------------


def validate_descriptor(data: Any, source: str) -> WorkspaceConnection:
    """Validate decoded YAML; every independent problem is reported at once."""
    if not isinstance(data, dict):
        raise ValidationError(
            f"descriptor: {source} must be a YAML mapping with schema: {SCHEMA}", owner=OWNER
        )
    try:
        return WorkspaceConnection.model_validate(data)
    except PydanticValidationError as error:
        problems = [_problem(item) for item in error.errors()]
        raise ValidationError(
            f"descriptor: {source} is not a valid {SCHEMA} ({len(problems)} problem(s))",
            problems=problems,
            owner=OWNER,
        ) from None


def _problem(item: Any) -> str:
    location = ".".join(str(part) for part in item["loc"] if part != "schema_") or "schema"
    if item["loc"] and item["loc"][0] == "schema_":
        location = "schema"
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] == "extra_forbidden":
        message = "unknown field"
    elif item["type"] == "missing":
        message = "required field is missing"
    return f"{location}: {message}"
