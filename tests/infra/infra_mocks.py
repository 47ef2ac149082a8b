"""Runs the stack program against Pulumi's mock engine and records the resource graph.

Azure cannot be reached here, so the Pulumi engine is replaced by `pulumi.runtime.set_mocks`.
The recording monitor keeps what the real engine would receive for every registration
(type, logical name, parent, dependencies, provider, inputs) and the stack's exported outputs,
so tests assert on the graph `pulumi preview` would show.
"""

from __future__ import annotations

import base64
import json
import runpy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import config as runtime_config
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.settings import get_root_resource
from pulumi.runtime.sync_await import _ensure_event_loop

from infra.config import settings_from_stack_file

ROOT = Path(__file__).resolve().parents[2]
SUBSCRIPTION = "00000000-0000-0000-0000-0000000000aa"
PROJECT = "taugrid"
CALLER_TENANT = "caller-tenant-0000"
IDENTITY_TENANT = "identity-tenant-0000"
MOCK_KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"


def issuer_url(cluster_name: str) -> str:
    return f"https://oidc.mock.azure.example/{cluster_name}/"


def client_id(identity_name: str) -> str:
    return f"client-id-of-{identity_name}"


def kusto_uri(cluster_name: str, location: str) -> str:
    return f"https://{cluster_name}.{location}.kusto.windows.net"


@dataclass
class Registration:
    type: str
    name: str
    urn: str
    parent: str
    dependencies: list[str]
    provider: str
    custom: bool
    inputs: dict[str, Any]
    options: Any = None
    secret_inputs: frozenset[str] = frozenset()
    """Top-level inputs the program marked secret (sent to the engine in secret envelopes)."""


class AzureMocks(pulumi.runtime.Mocks):
    """Computed outputs a real Azure would return, derived from inputs so tests can predict them."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        inputs = dict(args.inputs)
        state = dict(inputs)
        typ = args.typ
        if typ == "azure-native:resources:ResourceGroup":
            state["name"] = inputs["resourceGroupName"]
        elif typ == "azure-native:containerservice:ManagedCluster":
            state["name"] = inputs["resourceName"]
            state["oidcIssuerProfile"] = {
                "enabled": True,
                "issuerURL": issuer_url(inputs["resourceName"]),
            }
        elif typ == "azure-native:containerservice:AgentPool":
            state["name"] = inputs["agentPoolName"]
        elif typ == "azure-native:managedidentity:UserAssignedIdentity":
            state["name"] = inputs["resourceName"]
            state["clientId"] = client_id(inputs["resourceName"])
            state["principalId"] = f"principal-id-of-{inputs['resourceName']}"
            state["tenantId"] = IDENTITY_TENANT
        elif typ == "azure-native:kusto:Cluster":
            state["name"] = inputs["clusterName"]
            state["uri"] = kusto_uri(inputs["clusterName"], inputs["location"])
        elif typ == "azure-native:kusto:ReadWriteDatabase":
            state["name"] = f"{inputs['clusterName']}/{inputs['databaseName']}"
        elif typ == "kubernetes:helm.sh/v3:Release":
            state.setdefault("name", args.name)
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "tenantId": CALLER_TENANT,
                "clientId": "caller-client",
                "objectId": "caller-object",
                "subscriptionId": "caller-subscription",
            }
        if args.token == "azure-native:containerservice:listManagedClusterAdminCredentials":
            value = base64.b64encode(MOCK_KUBECONFIG.encode()).decode()
            return {"kubeconfigs": [{"name": "clusterAdmin", "value": value}]}
        raise AssertionError(f"unexpected invoke {args.token}")


class RecordingMonitor(MockMonitor):
    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            _ensure_event_loop()
            self.registrations.append(
                Registration(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    parent=request.parent,
                    dependencies=list(request.dependencies),
                    provider=request.provider,
                    custom=bool(request.custom),
                    inputs=rpc.deserialize_properties(request.object),
                    options={
                        "ignore_changes": list(request.ignoreChanges),
                        "retain_on_delete": request.retainOnDelete,
                        "delete_timeout": request.customTimeouts.delete,
                    },
                    secret_inputs=frozenset(
                        key for key, value in request.object.fields.items() if _is_secret(value)
                    ),
                )
            )
        return response


def _is_secret(value: Any) -> bool:
    fields = value.struct_value.fields if value.HasField("struct_value") else {}
    signature = fields.get(rpc._special_sig_key)
    return signature is not None and signature.string_value == rpc._special_secret_sig


@dataclass
class StackRun:
    registrations: list[Registration]
    outputs: dict[str, Any]
    _by_urn: dict[str, Registration] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_urn = {item.urn: item for item in self.registrations}

    def of_type(self, typ: str) -> list[Registration]:
        return [item for item in self.registrations if item.type == typ]

    def one(self, typ: str) -> Registration:
        found = self.of_type(typ)
        assert len(found) == 1, f"expected one {typ}, found {[item.name for item in found]}"
        return found[0]

    def named(self, name: str) -> Registration:
        found = [item for item in self.registrations if item.name == name]
        assert len(found) == 1, f"expected one resource named {name}, found {len(found)}"
        return found[0]

    def types(self) -> list[str]:
        return sorted(item.type for item in self.registrations)

    def depends_on(self, dependent: Registration, dependency: Registration) -> bool:
        """True when `dependent` waits for `dependency`, directly or through other resources."""
        seen: set[str] = set()
        pending = [dependent.urn]
        while pending:
            urn = pending.pop()
            for dep in self._by_urn[urn].dependencies if urn in self._by_urn else []:
                if dep == dependency.urn:
                    return True
                if dep not in seen:
                    seen.add(dep)
                    pending.append(dep)
        return False

    def parent_of(self, item: Registration) -> Registration | None:
        return self._by_urn.get(item.parent)


def stack_config_map(settings: Mapping[str, Any]) -> dict[str, str]:
    """Settings as the engine passes them: `taugrid:key` -> string (structured values as JSON)."""
    encoded: dict[str, str] = {}
    for key, value in settings.items():
        if isinstance(value, str):
            encoded[f"{PROJECT}:{key}"] = value
        else:
            encoded[f"{PROJECT}:{key}"] = json.dumps(value)
    return encoded


def run_stack(
    settings: Mapping[str, Any], stack: str = "test", monitor: RecordingMonitor | None = None
) -> StackRun:
    """Run `infra/__main__.py` exactly as `pulumi up` would, against the mock engine."""
    # asyncio.run() elsewhere in the session leaves the main thread without a loop; the Pulumi
    # runtime needs one.
    _ensure_event_loop()
    mocks = AzureMocks()
    monitor = monitor or RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    runtime_config.set_all_config(stack_config_map(settings))
    exported: dict[str, Any] = {}

    def program() -> pulumi.Output:
        runpy.run_path(str(ROOT / "infra" / "__main__.py"), run_name="__main__")
        # pulumi.export() records on the root stack; resolve what the program exported.
        return pulumi.Output.from_input(get_root_resource().outputs).apply(exported.update)

    try:
        pulumi.runtime.test(program)()
    finally:
        runtime_config.set_all_config({})
    return StackRun(monitor.registrations, exported)


def stack_settings(stack: str) -> dict[str, Any]:
    """The settings committed in stacks/Pulumi.<stack>.yaml."""
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return settings_from_stack_file(document)


def operator_settings(stack: str) -> dict[str, Any]:
    """The stack file plus what an operator sets before the first preview."""
    settings = stack_settings(stack)
    if stack.startswith("aks-"):
        settings["subscription_id"] = SUBSCRIPTION
    return settings
