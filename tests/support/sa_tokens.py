"""Service-account tokens that can be rotated and killed on a real kube-apiserver (issue 27).

A ServiceAccount bound to a (Cluster)Role; each token comes from the TokenRequest API bound to
its own Secret, so deleting the Secret kills the token (the apiserver's token cache may accept
it for ~10 s more). The tokens go to a file a kubeconfig names with `tokenFile:`, replaced the
way the kubelet replaces a projected token (a new file renamed over the old one).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import urllib3
import yaml

from tests.support.cluster import RealCluster


def write_token(path: Path, token: str) -> None:
    """Replace the token file as the kubelet does (a new file renamed over the old one)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(token + "\n")
    tmp.replace(path)


class ServiceAccountTokens:
    """ServiceAccount `name` in `ns`, allowed `rules` in `ns` (a Role) or, with
    `cluster_admin=True`, everything (a ClusterRoleBinding to cluster-admin)."""

    def __init__(
        self,
        cluster: RealCluster,
        ns: str,
        *,
        name: str = "reader",
        rules: list[dict[str, Any]] | None = None,
        cluster_admin: bool = False,
    ) -> None:
        self.cluster, self.ns, self.name = cluster, ns, name
        self.count = 0
        self.tokens: list[str] = []
        cluster.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": ns},
            }
        )
        subject = [{"kind": "ServiceAccount", "name": name, "namespace": ns}]
        rbac = "rbac.authorization.k8s.io"
        if cluster_admin:
            cluster.create(
                {
                    "apiVersion": f"{rbac}/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"{ns}-{name}"},
                    "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "cluster-admin"},
                    "subjects": subject,
                }
            )
            return
        cluster.create(
            {
                "apiVersion": f"{rbac}/v1",
                "kind": "Role",
                "metadata": {"name": name, "namespace": ns},
                "rules": rules or [],
            }
        )
        cluster.create(
            {
                "apiVersion": f"{rbac}/v1",
                "kind": "RoleBinding",
                "metadata": {"name": name, "namespace": ns},
                "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
                "subjects": subject,
            }
        )

    def new_token(self) -> tuple[str, str]:
        """(a new token, the name of the Secret it is bound to)."""
        self.count += 1
        secret = self.cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{self.name}-token-{self.count}", "namespace": self.ns},
            }
        )
        answer = self.cluster._call(
            "POST",
            f"/api/v1/namespaces/{self.ns}/serviceaccounts/{self.name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {
                    "expirationSeconds": 3600,
                    "boundObjectRef": {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "name": secret["metadata"]["name"],
                        "uid": secret["metadata"]["uid"],
                    },
                },
            },
        )
        token: str = answer["status"]["token"]
        self.tokens.append(token)
        return token, secret["metadata"]["name"]

    def revoke(self, secret: str) -> None:
        """Delete the token's Secret: the server refuses the token within its token cache's
        lifetime (~10 s)."""
        self.cluster.delete("v1", "Secret", secret, self.ns)

    def kill(self, token: str, secret: str, timeout: float = 30.0) -> None:
        """`revoke`, then wait until the server refuses the token."""
        self.revoke(secret)
        real = self.cluster.server
        http = urllib3.PoolManager(ca_certs=str(real.ca_file))
        url = f"{real.server}/api/v1/namespaces/{self.ns}/configmaps?limit=1"
        deadline = time.monotonic() + timeout
        tick = threading.Event()
        while http.request("GET", url, headers={"Authorization": f"Bearer {token}"}).status != 401:
            if time.monotonic() > deadline:
                raise AssertionError(f"the server still accepts the token of Secret {secret}")
            tick.wait(0.1)


def token_file_kubeconfig(path: Path, server: str, ca_file: Path, token_file: Path) -> Path:
    """Write a kubeconfig at `path` whose user reads its token from `token_file`."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "real",
                        "cluster": {"server": server, "certificate-authority": str(ca_file)},
                    }
                ],
                "users": [{"name": "sa", "user": {"tokenFile": str(token_file)}}],
                "contexts": [{"name": "real", "context": {"cluster": "real", "user": "sa"}}],
                "current-context": "real",
            }
        )
    )
    return path
