"""A client of the same server whose requests are sent once: for requests with a deadline.

Why: the kubernetes client's urllib3 sends a failed or timed-out request three more times by
default, so a Lease request given the time left until the renew deadline (N21, N22) could
last four times that: a replica cut off by a server that hangs went on working for seconds
after another had taken its Leases over, and each retry was a WARNING of urllib3's. Leader
election and the shard ring send their Lease requests through such a client; they retry on
their own schedule (every retry period, until the renew deadline).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubeinformers.runtime.client.api_client import ApiClient

if TYPE_CHECKING:
    # Declared for type checkers, so that checking a program that uses leader election or the
    # ring does not analyse the kubernetes package (H15).
    def KubernetesApiClient(configuration: Any) -> ApiClient:
        """kubernetes.client.ApiClient over `configuration`."""
        ...

else:
    from kubernetes.client import ApiClient as KubernetesApiClient

__all__ = ["single_attempt_client"]


def single_attempt_client(api: ApiClient) -> ApiClient:
    """A new kubernetes ApiClient with `api`'s configuration (server, TLS, credentials, proxy)
    and default headers, whose requests urllib3 does not retry."""
    configuration = copy.copy(api.configuration)
    configuration.retries = False
    client = KubernetesApiClient(configuration)
    headers = client.default_headers
    if isinstance(headers, dict):
        headers.update(api.default_headers)
    return client
