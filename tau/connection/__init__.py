"""The workspace connection: from a checkout to a verified, pinned place to send workloads.

One package owns the whole connection so a command follows it without climbing layers:
the checked-in descriptor and the repository boundary (`descriptor`), the monorepo catalog
(`catalog`), the ordered discovery of a project's contract (`discovery`), local state under
the Tau config dir — pins, assignments, readiness evidence (`localstate`) — isolated
kubeconfigs (`kubeconfig`, `aks`), and live verification against the TauWorkspace
(`verify`, `connecting`), and the route a command takes to a run's cluster (`target`).

Code outside this package imports these names from `tau.connection` only (the import-graph
test enforces it). Importing it costs nothing: each name loads its module on first access
(PEP 562), so an offline command that reads the descriptor and local state never loads
`verify`, `connecting` or `target`, nor through them `tau.kube`; the Azure SDKs load inside
`aks` only when an AKS connection is made.
"""

from typing import TYPE_CHECKING

from tau.lazyexports import lazy_exports

if TYPE_CHECKING:
    from tau.connection.aks import azure_credential, cluster_user_kubeconfig
    from tau.connection.catalog import (
        CATALOG_FILE,
        Catalog,
        Project,
        check_workspace_binding,
        default_config,
        load_catalog,
        project_targets,
        select_lifecycle_project,
        select_project,
    )
    from tau.connection.connecting import (
        Connection,
        Interaction,
        connect,
        ensure_connection,
    )
    from tau.connection.descriptor import (
        ConnectionSource,
        DescriptorNotFound,
        Repository,
        find_descriptor,
        find_repository,
        load_descriptor,
        parse_descriptor_text,
    )
    from tau.connection.discovery import discover_connection
    from tau.connection.kubeconfig import load_merged
    from tau.connection.localstate import (
        ConnectionState,
        ReviewRequired,
        cached_connections,
        clear_assignment,
        config_dir,
        is_fresh,
        load_state,
        pin_changes,
        save_assignment,
        state_path,
    )
    from tau.connection.target import (
        Target,
        cached_route,
        cached_targets,
        resolve_target,
        terminal_interaction,
    )
    from tau.connection.verify import (
        AUTHORIZATION,
        PLATFORM,
        READINESS,
        LayerFailure,
        LiveWorkspace,
        active_workspace,
        denied_workspace,
        live_contract,
        not_taugrid,
        read_workspace,
        readiness_problem,
        verify_live,
        workspace_objects,
    )

# Where each public name lives: `__getattr__` imports that module on first access.
_HOMES = {
    "azure_credential": "aks",
    "cluster_user_kubeconfig": "aks",
    "CATALOG_FILE": "catalog",
    "Catalog": "catalog",
    "Project": "catalog",
    "check_workspace_binding": "catalog",
    "default_config": "catalog",
    "load_catalog": "catalog",
    "project_targets": "catalog",
    "select_lifecycle_project": "catalog",
    "select_project": "catalog",
    "Connection": "connecting",
    "Interaction": "connecting",
    "connect": "connecting",
    "ensure_connection": "connecting",
    "ConnectionSource": "descriptor",
    "DescriptorNotFound": "descriptor",
    "Repository": "descriptor",
    "find_descriptor": "descriptor",
    "find_repository": "descriptor",
    "load_descriptor": "descriptor",
    "parse_descriptor_text": "descriptor",
    "discover_connection": "discovery",
    "load_merged": "kubeconfig",
    "ConnectionState": "localstate",
    "ReviewRequired": "localstate",
    "cached_connections": "localstate",
    "clear_assignment": "localstate",
    "config_dir": "localstate",
    "is_fresh": "localstate",
    "load_state": "localstate",
    "pin_changes": "localstate",
    "save_assignment": "localstate",
    "state_path": "localstate",
    "Target": "target",
    "cached_route": "target",
    "cached_targets": "target",
    "resolve_target": "target",
    "terminal_interaction": "target",
    "AUTHORIZATION": "verify",
    "PLATFORM": "verify",
    "READINESS": "verify",
    "LayerFailure": "verify",
    "LiveWorkspace": "verify",
    "active_workspace": "verify",
    "denied_workspace": "verify",
    "live_contract": "verify",
    "not_taugrid": "verify",
    "read_workspace": "verify",
    "readiness_problem": "verify",
    "verify_live": "verify",
    "workspace_objects": "verify",
}

__all__ = [
    "AUTHORIZATION",
    "CATALOG_FILE",
    "PLATFORM",
    "READINESS",
    "Catalog",
    "Connection",
    "ConnectionSource",
    "ConnectionState",
    "DescriptorNotFound",
    "Interaction",
    "LayerFailure",
    "LiveWorkspace",
    "Project",
    "Repository",
    "ReviewRequired",
    "Target",
    "active_workspace",
    "azure_credential",
    "cached_connections",
    "cached_route",
    "cached_targets",
    "check_workspace_binding",
    "clear_assignment",
    "cluster_user_kubeconfig",
    "config_dir",
    "connect",
    "default_config",
    "denied_workspace",
    "discover_connection",
    "ensure_connection",
    "find_descriptor",
    "find_repository",
    "is_fresh",
    "live_contract",
    "load_catalog",
    "load_descriptor",
    "load_merged",
    "load_state",
    "not_taugrid",
    "parse_descriptor_text",
    "pin_changes",
    "project_targets",
    "read_workspace",
    "readiness_problem",
    "resolve_target",
    "save_assignment",
    "select_lifecycle_project",
    "select_project",
    "state_path",
    "terminal_interaction",
    "verify_live",
    "workspace_objects",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
