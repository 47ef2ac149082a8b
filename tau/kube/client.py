"""A small, dict-in/dict-out client for one kubeconfig context.

Built on the official `kubernetes` package's configuration loading (exec plugins, client
certificates, tokens, KUBECONFIG merging) and its REST layer (`RESTClientObject`, urllib3
with the configuration's TLS, proxy and retry settings), but speaking plain JSON dicts for
every type so callers need no per-kind model classes or the generated `ApiClient`'s
serialization. The `kubernetes` import happens on first use, keeping offline commands fast,
and loads only those two layers (see `kubernetes_parts`). One kind of call skips the REST
layer but not the configuration: `patch_each`, many writes whose answers only their status
matters of, over `http.client` connections set up from the same Configuration.
"""

from __future__ import annotations

import builtins
import enum
import http.client
import importlib.util
import json
import os
import ssl
import sys
import threading
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Protocol
from urllib.parse import urlencode, urlsplit

from tau import keys
from tau.jsontypes import JSONObject
from tau.kube.errors import (
    AccessError,
    AuthorizationError,
    ConflictError,
    InvalidError,
    KubeError,
    NotFoundError,
    UnavailableError,
)
from tau.kube.resources import SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, Resource
from tau.version import __version__

if TYPE_CHECKING:
    from kubernetes.client import ApiClient
    from kubernetes.client.configuration import Configuration
    from kubernetes.client.rest import RESTClientObject, RESTResponse

DEFAULT_TIMEOUT_SECONDS = 15.0
POOL_SIZE = 32
# urllib3's request timeout: total seconds, (connect, read), or none.
Timeout = float | tuple[float, float] | None


class ClientDefault(enum.Enum):
    TIMEOUT = "the client's own timeout"


CLIENT_TIMEOUT: Final = ClientDefault.TIMEOUT  # `send(timeout=...)` default

USER_AGENT = f"tau/{__version__}"

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
# An object's metadata only (a Node's is a third of the whole Node's JSON), for a reader of
# names and labels and for `patch_each`, which leaves the answer undecoded; a failure still
# answers a JSON Status.
METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
METADATA_LIST_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


class ObjectLister(Protocol):
    """What a reader that only lists needs: a `KubeClient`, or a stand-in holding objects
    already read (the Portal builds board rows from watched objects this way)."""

    def list(
        self,
        resource: Resource,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[JSONObject]: ...


class ObjectReader(ObjectLister, Protocol):
    """What a snapshot reader needs: a `KubeClient`, or `tau.kube.informer.WatchedReads`
    answering repeated reads from watches."""

    def get(self, resource: Resource, name: str, namespace: str = "") -> JSONObject: ...

    def request(self, method: str, path: str, *, what: str) -> JSONObject: ...


@dataclass(frozen=True)
class AccessReview:
    """The answer of one SelfSubjectAccessReview."""

    allowed: bool
    reason: str = ""


def kubernetes_parts() -> None:
    """Let `kubernetes.config` and `kubernetes.client.rest` import without what tau never
    runs.

    `import kubernetes` runs an `__init__` that loads every part of the library: the dynamic
    client with jsonschema and kubernetes_validate, watch, stream with websocket, utils,
    leader election and the informer (bench/README.md has the measured cost). tau uses only
    the kubeconfig loader and the REST layer, so the package module is created from its
    spec without executing it; every submodule then imports as usual, on demand, including
    for other code in the process that imports `kubernetes.<part>` itself. The same goes for
    `kubernetes.utils`, whose `__init__` loads the YAML creator, quantities and metrics when
    the REST layer wants its retry and keepalive modules. The kubeconfig loader imports
    Google's auth transport (requests, cryptography) for the `gcp` auth provider only: that
    module is loaded lazily, executing on first use, so kubeconfigs naming that provider
    still work.
    """
    if "kubernetes" in sys.modules:
        return
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or spec.submodule_search_locations is None:
        raise AccessError(
            "the Kubernetes client library is not installed",
            hint="install tau with its cluster extra: pip install 'taugrid[kube]'",
        )
    sys.modules["kubernetes"] = importlib.util.module_from_spec(spec)
    _unexecuted("kubernetes.utils")
    _lazy("google.auth.transport.requests")


def _unexecuted(name: str) -> None:
    """A package module whose submodules import as usual but whose `__init__` never runs."""
    spec = importlib.util.find_spec(name)
    if spec is None or name in sys.modules:
        return
    _bind(name, importlib.util.module_from_spec(spec))


def _lazy(name: str) -> None:
    """Put a stand-in for module `name` in place; the module runs on its first use."""
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # a parent package is missing: the real import will say so
        return
    if spec is None:
        return
    module = _Deferred(name)
    module.__spec__ = spec
    _bind(name, module)


class _Deferred(types.ModuleType):
    """A module that imports itself when an attribute it lacks is first read.

    importlib's LazyLoader does not serve here: on Python 3.11 an `import` statement naming
    a module already in sys.modules reads its `__spec__`, which makes a LazyLoader module
    execute at once.
    """

    def __getattr__(self, attribute: str) -> object:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attribute)


def _bind(name: str, module: types.ModuleType) -> None:
    """Register `module` the way the import system does: in sys.modules and on its parent."""
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


class KubeClient:
    """Talks to the API server named by `context` in `kubeconfig`.

    `kubeconfig=None` follows the usual rules (`$KUBECONFIG`, else ~/.kube/config);
    `context=""` uses the kubeconfig's current context.
    """

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str = "",
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.kubeconfig = str(kubeconfig) if kubeconfig else None
        self.context = context
        self.timeout = timeout
        self._configuration: Configuration | None = None
        self._rest: RESTClientObject | None = None
        self._api_client: ApiClient | None = None
        self._writes: _Connections | None = None
        self.host = ""

    @property
    def target(self) -> str:
        where = f'context "{self.context}"' if self.context else "the current context"
        if self.kubeconfig:
            where += f" of kubeconfig {self.kubeconfig}"
        return where

    def _transport(self) -> tuple[Configuration, RESTClientObject]:
        if self._configuration is None or self._rest is None:
            kubernetes_parts()
            from kubernetes.client.rest import RESTClientObject

            configuration = self._load()
            self.host = configuration.host
            self._configuration, self._rest = configuration, RESTClientObject(configuration)
        return self._configuration, self._rest

    def _client(self) -> ApiClient:
        """The generated client over the same configuration, for the few calls it owns
        (pods/exec over a websocket)."""
        if self._api_client is None:
            from kubernetes.client.api_client import ApiClient

            self._api_client = ApiClient(configuration=self._transport()[0])
        return self._api_client

    def _load(self) -> Configuration:
        import yaml
        from kubernetes.client.configuration import Configuration
        from kubernetes.config import incluster_config, kube_config
        from kubernetes.config.config_exception import ConfigException

        if self.kubeconfig:
            for part in self.kubeconfig.split(os.pathsep):
                if part and not Path(part).is_file():
                    raise AccessError(
                        f"kubeconfig {part} does not exist or is not a file",
                        hint="check the path, or rerun `tau workspace connection` to rebuild it",
                    )
        configuration = Configuration()
        if _in_cluster(self.kubeconfig, self.context):
            # kubectl's rule: no kubeconfig at all inside a pod means its ServiceAccount.
            try:
                # kubernetes.config leaves its loaders unannotated.
                incluster_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            except ConfigException as error:
                raise AccessError(
                    f"cannot load the in-cluster ServiceAccount: {_first_line(str(error))}",
                    hint="mount the ServiceAccount token (automountServiceAccountToken) or "
                    "pass a kubeconfig",
                ) from None
            return _tuned(configuration)
        try:
            kube_config.load_kube_config(  # type: ignore[no-untyped-call]  # unannotated loader
                config_file=self.kubeconfig or _default_kubeconfig(),
                context=self.context or None,
                client_configuration=configuration,
                persist_config=False,
            )
        except ConfigException as error:
            raise AccessError(
                f"cannot load {self.target}: {_first_line(str(error))}",
                hint="check the context name with `kubectl config get-contexts`",
            ) from None
        except (OSError, ValueError, TypeError, yaml.YAMLError) as error:
            raise AccessError(
                f"cannot load {self.target}: {type(error).__name__}",
                hint="the kubeconfig is unreadable or malformed",
            ) from None
        return _tuned(configuration)

    def request(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: list[tuple[str, str]] | None = None,
        body: object = None,
        content_type: str = "application/json",
        accept: str = "application/json",
        warnings: list[str] | None = None,
    ) -> JSONObject:
        """One API call; returns the decoded JSON body or raises a `KubeError`. The API
        server's `Warning` headers (e.g. PodSecurity's) are appended to `warnings`."""
        response = self.send(
            method,
            path,
            what=what,
            query=query,
            body=body,
            content_type=content_type,
            accept=accept,
        )
        if warnings is not None:
            warnings.extend(warning_texts(response.headers.getlist("Warning")))
        data = response.data or b""
        decoded = json.loads(data) if data else {}
        if not isinstance(decoded, dict):
            raise KubeError(
                f"{what}: the API server answered a JSON {type(decoded).__name__}, not an object",
                owner="platform operator (API server)",
            )
        return decoded

    def send(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: list[tuple[str, str]] | None = None,
        body: object = None,
        content_type: str = "application/json",
        accept: str = "application/json",
        timeout: Timeout | Literal[ClientDefault.TIMEOUT] = CLIENT_TIMEOUT,
        stream: bool = False,
    ) -> RESTResponse:
        """One HTTP exchange (the library's RESTResponse); a transport failure or non-2xx
        answer raises a `KubeError`. With `stream` a successful body is left unread."""
        configuration, rest = self._transport()  # first: it decides how kubernetes imports
        import urllib3
        from kubernetes.client.exceptions import ApiException

        self._sent(method, path, query)
        headers = _headers(configuration, accept, content_type if body is not None else "")
        url = configuration.host + path
        if query:
            url += "?" + urlencode(query)
        try:
            response: RESTResponse = rest.request(  # type: ignore[no-untyped-call]
                method,
                url,
                headers=headers,
                body=body,
                _request_timeout=self.timeout if timeout is CLIENT_TIMEOUT else timeout,
            )
            if not stream:
                response.read()  # type: ignore[no-untyped-call]  # kubernetes' RESTResponse
        except ApiException as error:
            raise self._tls_failure(what, str(error.reason or "")) from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise self._no_answer(what, error) from None
        if not 200 <= response.status < 300:
            data: bytes = response.read() or b""  # type: ignore[no-untyped-call]  # as above
            raise _translate(response.status, data, what=what, target=self.target, host=self.host)
        return response

    def _tls_failure(self, what: str, reason: str) -> AccessError:
        return AccessError(
            f"cannot {what} on {self.target}: TLS or transport failure talking to {self.host}",
            hint=_first_line(reason),
        )

    def _no_answer(self, what: str, error: Exception) -> UnavailableError:
        return UnavailableError(
            f"cannot {what}: API server {self.host} ({self.target}) did not answer "
            f"({type(error).__name__})",
            hint="check the cluster is running and reachable from this machine",
        )

    def _sent(self, method: str, path: str, query: list[tuple[str, str]] | None) -> None:
        """Called as each HTTP exchange starts, whichever way it is sent (a counting
        client's hook)."""

    def patch_each(
        self,
        resource: Resource,
        patches: Sequence[tuple[str, JSONObject]],
        namespace: str = "",
        *,
        concurrency: int = 8,
    ) -> list[tuple[str, KubeError | None]]:
        """Merge-patch many objects, `concurrency` at a time, when the caller needs only
        whether each write took (the controller labelling a pool of new nodes): each
        `(name, patch)` gets `(name, None)`, or the `KubeError` a `patch` would raise.

        The answers are never decoded, and the exchanges skip the library's REST layer:
        each goes over a persistent `http.client` connection built from the same
        configuration (server, CA, client certificate, a bearer token read per request),
        which costs less than half the client CPU of `patch` per object (bench/README.md).
        A configuration naming a proxy takes the library's path, `patch` itself.
        """
        configuration, _ = self._transport()
        if self._writes is None and not configuration.proxy:
            try:
                self._writes = _Connections(configuration, self.timeout)
            except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
                raise AccessError(
                    f"cannot use the TLS settings of {self.target}: {type(error).__name__}",
                    hint=_first_line(str(error)),
                ) from None
        writes = self._writes

        def one(item: tuple[str, JSONObject]) -> tuple[str, KubeError | None]:
            name, patch = item
            try:
                if writes is None:
                    self.patch(resource, name, patch, namespace)
                else:
                    self._patch_unread(writes, configuration, resource, name, patch, namespace)
            except KubeError as error:
                return name, error
            return name, None

        if len(patches) <= 1 or concurrency <= 1:
            return [one(item) for item in patches]
        from concurrent.futures import ThreadPoolExecutor  # the controller's alone

        with ThreadPoolExecutor(min(concurrency, len(patches))) as pool:
            return list(pool.map(one, patches))

    def _patch_unread(
        self,
        writes: _Connections,
        configuration: Configuration,
        resource: Resource,
        name: str,
        patch: JSONObject,
        namespace: str,
    ) -> None:
        path = resource.path(namespace, name)
        self._sent("PATCH", path, None)
        what = _describe("patch", resource, name, namespace)
        headers = _headers(configuration, METADATA_ONLY, PATCH_CONTENT_TYPES["merge"])
        try:
            status, data = writes.exchange("PATCH", path, json.dumps(patch).encode(), headers)
        except ssl.SSLError as error:
            raise self._tls_failure(what, str(error)) from None
        except (OSError, http.client.HTTPException) as error:
            raise self._no_answer(what, error) from None
        if not 200 <= status < 300:
            raise _translate(status, data, what=what, target=self.target, host=self.host)

    def get(
        self, resource: Resource, name: str, namespace: str = "", subresource: str = ""
    ) -> JSONObject:
        return self.request(
            "GET",
            resource.path(namespace, name, subresource),
            what=_describe("get", resource, name, namespace),
        )

    def get_or_none(self, resource: Resource, name: str, namespace: str = "") -> JSONObject | None:
        """Like `get`, but a missing object (not a missing API type) is `None`."""
        try:
            return self.get(resource, name, namespace)
        except NotFoundError as error:
            if error.resource_missing:
                raise
            return None

    def list(
        self,
        resource: Resource,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> builtins.list[JSONObject]:
        query = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        result = self.request(
            "GET",
            resource.path(namespace),
            what=_describe("list", resource, "", namespace),
            query=query,
        )
        return list(result.get("items") or [])

    def create(
        self,
        resource: Resource,
        obj: JSONObject,
        namespace: str = "",
        *,
        dry_run: bool = False,
        warnings: builtins.list[str] | None = None,
    ) -> JSONObject:
        """Create `obj`; `dry_run=True` asks the server to validate and admit without persisting."""
        namespace = namespace or obj.get("metadata", {}).get("namespace", "")
        name = obj.get("metadata", {}).get("name", "")
        return self.request(
            "POST",
            resource.path(namespace),
            what=_describe("create", resource, name, namespace),
            query=[("dryRun", "All")] if dry_run else [],
            body=obj,
            warnings=warnings,
        )

    def patch(
        self,
        resource: Resource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        subresource: str = "",
        patch_type: str = "merge",
    ) -> JSONObject:
        """Patch an object or a subresource such as `status` (merge, json or strategic)."""
        return self.request(
            "PATCH",
            resource.path(namespace, name, subresource),
            what=_describe("patch", resource, name, namespace, subresource),
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
        )

    def apply(
        self,
        resource: Resource,
        obj: JSONObject,
        *,
        field_manager: str,
        dry_run: bool = False,
        warnings: builtins.list[str] | None = None,
    ) -> JSONObject:
        """Server-side apply: create `obj`, or take over and set exactly its fields.

        Conflicts with other managers are forced: the caller's rendered object is the
        declared intent (a redeploy replaces what the last deploy set).
        """
        metadata = obj.get("metadata", {})
        namespace, name = metadata.get("namespace", ""), metadata.get("name", "")
        query = [("fieldManager", field_manager), ("force", "true")]
        if dry_run:
            query.append(("dryRun", "All"))
        return self.request(
            "PATCH",
            resource.path(namespace, name),
            what=_describe("apply", resource, name, namespace),
            query=query,
            body=json.dumps(obj),
            content_type="application/apply-patch+yaml",
            warnings=warnings,
        )

    def delete(
        self, resource: Resource, name: str, namespace: str = "", *, ignore_missing: bool = False
    ) -> JSONObject | None:
        try:
            return self.request(
                "DELETE",
                resource.path(namespace, name),
                what=_describe("delete", resource, name, namespace),
            )
        except NotFoundError as error:
            if ignore_missing and not error.resource_missing:
                return None
            raise

    def can_i(
        self,
        verb: str,
        resource: str,
        *,
        group: str = "",
        namespace: str = "",
        subresource: str = "",
        name: str = "",
    ) -> AccessReview:
        """Ask the API server whether the caller may do `verb` (a SelfSubjectAccessReview)."""
        attributes = {"verb": verb, "resource": resource, "group": group}
        for key, value in (("namespace", namespace), ("subresource", subresource), ("name", name)):
            if value:
                attributes[key] = value
        review = {
            "apiVersion": SELF_SUBJECT_ACCESS_REVIEWS.api_version,
            "kind": SELF_SUBJECT_ACCESS_REVIEWS.kind,
            "spec": {"resourceAttributes": attributes},
        }
        result = self.create(SELF_SUBJECT_ACCESS_REVIEWS, review)
        status = result.get("status") or {}
        return AccessReview(bool(status.get("allowed")), str(status.get("reason") or ""))

    def readable_names(self, resource: Resource, namespace: str) -> tuple[str, ...] | None:
        """The object names the caller may `get` in `namespace` (a SelfSubjectRulesReview);
        None when the rules grant every name (no resourceNames restriction)."""
        review = {
            "apiVersion": SELF_SUBJECT_RULES_REVIEWS.api_version,
            "kind": SELF_SUBJECT_RULES_REVIEWS.kind,
            "spec": {"namespace": namespace},
        }
        result = self.create(SELF_SUBJECT_RULES_REVIEWS, review)
        names: set[str] = set()
        for rule in (result.get("status") or {}).get("resourceRules") or []:
            if not {"get", "*"} & set(rule.get("verbs") or []):
                continue
            if not {resource.group, "*"} & set(rule.get("apiGroups") or []):
                continue
            if not {resource.plural, "*"} & set(rule.get("resources") or []):
                continue
            if not rule.get("resourceNames"):
                return None
            names.update(rule["resourceNames"])
        return tuple(sorted(names))

    def close(self) -> None:
        if self._writes is not None:
            self._writes.close()
            self._writes = None
        if self._api_client is not None:
            self._api_client.close()  # type: ignore[no-untyped-call]  # unannotated in kubernetes
            self._api_client = None
        if self._rest is not None:
            self._rest.close()
            self._configuration, self._rest = None, None


def _headers(configuration: Configuration, accept: str, content_type: str) -> dict[str, str]:
    headers = {"Accept": accept, "User-Agent": USER_AGENT}
    if content_type:
        headers["Content-Type"] = content_type
    # Read on every request: an exec plugin's or a projected token's refresh hook runs here.
    bearer = configuration.auth_settings().get("BearerToken")
    if bearer and bearer["value"]:
        headers[bearer["key"]] = bearer["value"]
    return headers


class _Connections:
    """Idle keep-alive connections to the API server for `patch_each`, taken by one
    exchange at a time and put back after it.

    TLS is set up from the kubernetes Configuration the way its REST layer (urllib3) does:
    its CA file or data, client certificate and key, `verify_ssl`, `tls_server_name` and
    `assert_hostname`. A kept connection the server closed in the meantime fails its next
    exchange at once; that exchange is sent again, once, on a new connection.
    """

    def __init__(self, configuration: Configuration, timeout: float) -> None:
        split = urlsplit(configuration.host)
        self.secure = split.scheme == "https"
        self.address = (split.hostname or "", split.port or (443 if self.secure else 80))
        self.prefix = split.path.rstrip("/")
        self.timeout = timeout
        self.server_name = configuration.tls_server_name or self.address[0]
        self.context = _ssl_context(configuration) if self.secure else None
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _new(self) -> http.client.HTTPConnection:
        if self.context is None:
            return http.client.HTTPConnection(*self.address, timeout=self.timeout)
        return _TLSConnection(
            *self.address, timeout=self.timeout, context=self.context, server_name=self.server_name
        )

    def exchange(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """(status, body) of one idempotent request (it may be sent twice); OSError or
        HTTPException when it fails on a new connection."""
        with self._lock:
            kept = self._idle.pop() if self._idle else None
        if kept is not None:
            try:
                return self._exchange(kept, method, path, body, headers)
            except (OSError, http.client.HTTPException):
                pass  # closed by the server while idle, most likely: once more, on a new one
        return self._exchange(self._new(), method, path, body, headers)

    def _exchange(
        self,
        connection: http.client.HTTPConnection,
        method: str,
        path: str,
        body: bytes,
        headers: dict[str, str],
    ) -> tuple[int, bytes]:
        try:
            connection.request(method, self.prefix + path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            connection.close()
            raise
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                self._idle.append(connection)
        return response.status, data

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


class _TLSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that verifies the server by `server_name` (a kubeconfig's
    tls-server-name) rather than by the address it connects to."""

    def __init__(
        self, host: str, port: int, *, timeout: float, context: ssl.SSLContext, server_name: str
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._tls_context = context
        self._server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._tls_context.wrap_socket(self.sock, server_hostname=self._server_name)


def _ssl_context(configuration: Configuration) -> ssl.SSLContext:
    context = ssl.create_default_context(
        cafile=configuration.ssl_ca_cert or None, cadata=configuration.ca_cert_data or None
    )
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    return context


def _tuned(configuration: Configuration) -> Configuration:
    configuration.retries = 1
    # A watching reader (`tau.kube.informer.WatchedReads`) holds one pooled connection per
    # watched read; the library's default pool (5 per CPU) would discard, with a logged
    # warning, the connections of the reads beyond it on a small machine.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize, POOL_SIZE)
    return configuration


def _describe(verb: str, resource: Resource, name: str, namespace: str, sub: str = "") -> str:
    text = f"{verb} {resource.display}"
    if name:
        text += f' "{name}"'
    if sub:
        text += f" ({sub})"
    if namespace and resource.namespaced:
        text += f' in namespace "{namespace}"'
    return text


def _in_cluster(kubeconfig: str | None, context: str) -> bool:
    if kubeconfig or context or keys.ENV_KUBERNETES_SERVICE_HOST not in os.environ:
        return False
    configured = [p for p in os.environ.get(keys.ENV_KUBECONFIG, "").split(os.pathsep) if p]
    candidates = configured or [str(Path("~/.kube/config").expanduser())]
    return not any(Path(part).is_file() for part in candidates)


def _default_kubeconfig() -> str:
    """`$KUBECONFIG` (read now, not at import) else ~/.kube/config. Missing entries are skipped
    like kubectl does, but none existing at all is said plainly (the client library would
    blame the context name instead)."""
    configured = os.environ.get(keys.ENV_KUBECONFIG, "")
    candidates = [part for part in configured.split(os.pathsep) if part]
    if not candidates:
        candidates = [str(Path("~/.kube/config").expanduser())]
    if not any(Path(part).is_file() for part in candidates):
        where = "$KUBECONFIG" if configured else "the default kubeconfig"
        raise AccessError(
            f"no kubeconfig found ({where}: {os.pathsep.join(candidates)})",
            hint="set KUBECONFIG to your kubeconfig file (your platform operator issues it)",
        )
    return os.pathsep.join(candidates)


def warning_texts(headers: builtins.list[str]) -> builtins.list[str]:
    """The text of each RFC 7234 `Warning` header the API server sends (`299 - "text"`)."""
    texts = []
    for header in headers:
        code, _, rest = header.partition(" ")
        agent, _, quoted = rest.partition(" ")
        if code.isdigit() and agent and quoted.startswith('"') and quoted.endswith('"'):
            text = quoted[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        else:
            text = header
        if text.strip():
            texts.append(text.strip())
    return texts


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def _translate(status: int, data: bytes, *, what: str, target: str, host: str) -> KubeError:
    """Map an HTTP failure to the typed error naming its layer."""
    try:
        body = json.loads(data)
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = _first_line(str(body.get("message") or data.decode("utf-8", "replace")))
    details = body.get("details") or {}
    if status == 401:
        return AccessError(
            f"cannot {what}: the API server rejected the credentials of {target}",
            hint="sign in again or refresh the kubeconfig credentials",
            status=status,
        )
    if status == 403:
        return AuthorizationError(
            f"cannot {what}: forbidden ({message})",
            # The caller may well hold the workspace role already: say what is missing, not
            # which role to ask for.
            hint="this identity's RBAC does not allow it; the platform operator decides whether "
            "to grant it",
            status=status,
        )
    if status == 404:
        missing_type = not details.get("name")
        if missing_type:
            return NotFoundError(
                f"cannot {what}: the API type is not served by {host} ({message})",
                hint="is TauGrid (and its CRDs) installed on this cluster?",
                resource_missing=True,
                status=status,
            )
        return NotFoundError(f"cannot {what}: it does not exist", status=status)
    if status == 409:
        return ConflictError(f"cannot {what}: {message}", status=status)
    if status in (400, 422):
        return InvalidError(
            f"cannot {what}: the API server rejected it: {message}",
            owner="whoever authored the object",
            status=status,
        )
    return UnavailableError(f"cannot {what}: HTTP {status} from {host}: {message}", status=status)
