"""Step 1 for `--cluster`: the OpenAPI v3 documents and the CRDs a live cluster serves.

The connection comes from KUBECONFIG (or ~/.kube/config), else the in-cluster service
account; when there is neither, the error says so instead of the client library's
"Service host/port is not set". Each group-version document of /openapi/v3 is fetched on its
own, so one that fails (an aggregated API server that is down) is an error naming it while
the others load. Group-versions that a CRD serves are read from the CRD itself, not from
/openapi/v3, so they are typed exactly as files of the same CRDs would be.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from kubeinformers.generator.load import (
    APIModel,
    LoadError,
    Source,
    crd_from_document,
    openapi_from_document,
)

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
DEFAULT_KUBECONFIG = Path("~/.kube/config")
CORE_GROUP_NAMES = frozenset({"", "core"})


class ClusterConfigError(Exception):
    """No usable connection to a cluster: says which configuration was tried and what to do."""


class HTTPStatusError(OSError):
    """The server answered a GET with an error status (`status`)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def _unreachable(e: Exception) -> bool:
    """Whether `e` says the request reached no server (refused, no route, TLS, DNS) (H29)."""
    from urllib3.exceptions import HTTPError as Urllib3Error

    if getattr(e, "status", None) is not None:
        return False
    return isinstance(e, (Urllib3Error, ConnectionError)) or (
        type(e) is OSError and not str(e).startswith("HTTP ")
    )


def _why(e: Exception) -> str:
    """The failure's own words: a urllib3 retry error's underlying reason, not its wrapper."""
    reason = getattr(e, "reason", None)
    return str(reason if isinstance(reason, BaseException) else e)


def _request_failed(e: Exception, host: str, what: str, permission: str) -> str:
    """What went wrong with a request for `what` and what to do, by the kind of failure (H29)."""
    status = getattr(e, "status", None)
    if _unreachable(e):
        return (
            f"cannot reach the API server {host}: {_why(e)}; check that the cluster is running "
            "and that the kubeconfig's server address is right"
        )
    if status == 401:
        return (
            f"cannot {what}: HTTP 401 Unauthorized; the server did not accept the kubeconfig's "
            "credentials (an expired token or certificate?): renew them or point KUBECONFIG "
            "at another kubeconfig"
        )
    if status == 403:
        return f"cannot {what}: HTTP 403 Forbidden; the kubeconfig's user needs {permission}"
    return f"cannot {what}: {e}"


def group_of_document(gv_path: str) -> str | None:
    """`api/v1` → "" (core), `apis/apps/v1` → "apps"; None for anything else in the index
    (`api`, `apis`, `version`, `.well-known/...`: no group-version document)."""
    parts = gv_path.split("/")
    if len(parts) == 2 and parts[0] == "api":
        return ""
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1]
    return None


def api_client() -> Any:
    """A kubernetes ApiClient for KUBECONFIG / ~/.kube/config, else the in-cluster config."""
    from kubernetes import client, config

    configuration = client.Configuration()
    env = os.environ.get("KUBECONFIG", "")
    files = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    default = DEFAULT_KUBECONFIG.expanduser()
    in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    if files or default.is_file() or not in_cluster:
        if files and not any(f.is_file() for f in files):
            raise ClusterConfigError(
                f"KUBECONFIG={env} names no existing file; point KUBECONFIG at your "
                "cluster's kubeconfig"
            )
        if not files and not default.is_file():
            raise ClusterConfigError(
                f"no cluster to read: KUBECONFIG is not set, {default} does not exist, and "
                "this is not a pod (KUBERNETES_SERVICE_HOST is not set); set KUBECONFIG to "
                "your cluster's kubeconfig, or generate from files with --openapi/--crd"
            )
        where = f"KUBECONFIG={env}" if files else str(default)
        try:
            config.load_kube_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except Exception as e:
            raise ClusterConfigError(
                f"cannot use the kubeconfig {where}: {e}; fix it or point KUBECONFIG at another one"
            ) from e
    else:
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except Exception as e:
            raise ClusterConfigError(
                f"no kubeconfig (KUBECONFIG unset, no {default}) and the in-cluster "
                f"configuration failed: {e}; set KUBECONFIG to your cluster's kubeconfig"
            ) from e
    return client.ApiClient(configuration)


def load_cluster(groups: Collection[str] | None = None) -> APIModel:
    """/openapi/v3 and the CRDs of the configured cluster (only `groups`, when given)."""
    api = api_client()
    host = str(api.configuration.host)

    def get_json(path: str) -> Any:
        headers = {"Accept": "application/json"}
        if hasattr(api, "param_serialize"):  # kubernetes >= 34
            method, url, hdrs, body, post = api.param_serialize(
                "GET", path, header_params=headers, auth_settings=["BearerToken"]
            )
            resp = api.call_api(method, url, hdrs, body, post)
            resp.read()
        else:
            resp = api.call_api(
                path,
                "GET",
                header_params=headers,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
            )
        if resp.status >= 300:
            raise HTTPStatusError(resp.status)
        return json.loads(resp.data)

    # The client's own retries of a refused connection are not news to the user: the one
    # error below says that the server cannot be reached (H29).
    retries = logging.getLogger("urllib3.connectionpool")
    level = retries.level
    retries.setLevel(logging.ERROR)
    try:
        return cluster_model(get_json, host, groups)
    finally:
        retries.setLevel(level)
        api.close()


def not_served_because(crd: Any) -> str:
    """Why the server serves nothing of this CRD (its status conditions), or "" (H23).

    A CRD whose names the server refused (`NamesAccepted=False`: a kind or plural another
    CRD of the group has) or that is not `Established` has no API; a CRD without conditions
    (an object not written by a server) counts as served."""
    status = crd.get("status") if isinstance(crd, dict) else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    by_type = {c.get("type"): c for c in conditions or [] if isinstance(c, dict) and c.get("type")}
    for kind, wanted, why in (
        ("NamesAccepted", "True", "the server did not accept its names"),
        ("Established", "True", "the server has not established it"),
    ):
        condition = by_type.get(kind)
        if condition is not None and condition.get("status") != wanted:
            detail = condition.get("message") or condition.get("reason") or ""
            return (
                f"{why} ({kind}={condition.get('status')}"
                f"{': ' + str(detail) if detail else ''}), so it serves nothing"
            )
    if by_type and "Established" not in by_type:
        return "the server has not established it (no Established condition), so it serves nothing"
    return ""


def cluster_model(
    get_json: Callable[[str], Any], host: str, groups: Collection[str] | None = None
) -> APIModel:
    """Read the cluster through `get_json(server-relative path)`; failures become errors.

    Separate from the connection so that a recording of a real server's documents can be
    read the same way in tests.
    """
    chosen = None if groups is None else {"" if g in CORE_GROUP_NAMES else g for g in groups}
    model = APIModel()
    try:
        crd_list = get_json(CRD_PATH)
    except Exception as e:
        crd_list = {}
        model.errors.append(
            LoadError(
                f"{host}{CRD_PATH}",
                None,
                "",
                _request_failed(
                    e,
                    host,
                    "list CRDs",
                    "`list` on customresourcedefinitions (or generate from CRD files with --crd)",
                ),
            )
        )
        if _unreachable(e) or getattr(e, "status", None) == 401:
            return model  # /openapi/v3 would fail the same way: one error says it
    crd_gvs: set[str] = set()
    for i, item in enumerate(crd_list.get("items") or []):
        if chosen is not None and (item.get("spec") or {}).get("group") not in chosen:
            continue
        name = (item.get("metadata") or {}).get("name")
        # Where a message points: the CRD's own URL (what `kubectl get --raw` reads), not
        # the list's with an index into it.
        source = (
            Source(f"{host}{CRD_PATH}/{name}", None)
            if isinstance(name, str) and name
            else Source(f"{host}{CRD_PATH}", i)
        )
        refused = not_served_because(item)
        if refused:
            model.notes.append(f"CRD {name or f'#{i}'} ({source.file}): skipped, {refused}")
            continue
        item.setdefault("apiVersion", "apiextensions.k8s.io/v1")
        item.setdefault("kind", "CustomResourceDefinition")
        try:
            part = crd_from_document(item, source)
        except LoadError as e:
            model.errors.append(e)
            continue
        model.extend(part)
        crd_gvs.update(f"apis/{c.resource.group}/{c.resource.version}" for c in part.crds)
    # CRDs of groups left out still serve group-versions of /openapi/v3: skip those too.
    for item in crd_list.get("items") or []:
        spec = item.get("spec") or {}
        for v in spec.get("versions") or []:
            if isinstance(v, dict):
                crd_gvs.add(f"apis/{spec.get('group')}/{v.get('name')}")
    try:
        index = get_json("/openapi/v3")
    except Exception as e:
        model.errors.append(
            LoadError(
                f"{host}/openapi/v3",
                None,
                "",
                _request_failed(
                    e,
                    host,
                    "read",
                    "`get` on the non-resource URLs /openapi/v3 and /openapi/v3/*",
                ),
            )
        )
        return model
    for gv, entry in sorted((index.get("paths") or {}).items()):
        group = group_of_document(gv)
        if group is None or gv in crd_gvs or (chosen is not None and group not in chosen):
            continue
        url = str((entry or {}).get("serverRelativeURL") or f"/openapi/v3/{gv}")
        source = Source(f"{host}{url.split('?')[0]}", 0)
        try:
            model.extend(openapi_from_document(get_json(url), source))
        except LoadError as e:
            model.errors.append(e)
        except Exception as e:
            model.errors.append(
                source.error("", f"cannot fetch: {e}; the other group-versions were read")
            )
    served = {g for gv in index.get("paths") or {} if (g := group_of_document(gv)) is not None}
    for group in sorted((chosen or set()) - served):
        model.errors.append(
            LoadError(
                f"{host}/openapi/v3",
                None,
                "",
                f"--group {group or 'core'}: the cluster serves no such API group; it serves "
                f"{', '.join(sorted(g or 'core' for g in served))}",
            )
        )
    return model
