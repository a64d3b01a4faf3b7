"""What the runtime needs of a kubernetes `ApiClient`, as a Protocol.

Factories, dynamic informers, the list-watch transport and `LeaseLock` take the
`kubernetes.client.ApiClient` a program already has; their signatures name this Protocol
instead of that class, and a type checker accepts the kubernetes client structurally. So
type-checking a program that uses kubeinformers (or only generated models) does not make
mypy or an IDE analyse the kubernetes package: its `client` package alone is ~900 modules,
most of the cold mypy time of a file that imports a few generated kinds (issue 30). A
program that imports `kubernetes` itself still has it analysed, once, as any import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import urllib3

__all__ = ["ApiClient", "RestClient"]


class RestClient(Protocol):
    """The REST layer of a kubernetes `ApiClient` (`kubernetes.client.rest.RESTClientObject`)."""

    @property
    def pool_manager(self) -> urllib3.PoolManager:
        """The connection pools (TLS and proxy as configured) the runtime sends through."""
        ...


@runtime_checkable
class ApiClient(Protocol):
    """A `kubernetes.client.ApiClient` (kubernetes 31 and later), as the runtime uses it:
    requests go through its urllib3 pool manager (`rest_client.pool_manager`) to
    `configuration.host`, with `default_headers`, `user_agent` and the credentials
    `update_params_for_auth` writes (see `kubeinformers.runtime.client.auth`)."""

    @property
    def configuration(self) -> Any:
        """The client's `kubernetes.client.Configuration` (host, TLS, credentials)."""
        ...

    @property
    def rest_client(self) -> RestClient: ...

    @property
    def default_headers(self) -> Mapping[str, str]: ...

    @property
    def user_agent(self) -> str: ...

    @property
    def update_params_for_auth(self) -> Callable[..., None]:
        """Writes the configuration's credentials into a request's headers and query."""
        ...
