"""kubeinformers.testing: test doubles for code that uses informers.

`FakeListerWatcher` (an in-memory source), `LocalApiServer` (a local HTTP API server),
`RealApiServer` (a real kube-apiserver + etcd when their binaries are found) and `FakeClock`
(time that moves when the test says). Names are imported on first use, so importing this
package does not import or start a server (`kubeinformers/_exports.py`).
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kubeinformers.runtime.clock import FakeClock as FakeClock
    from kubeinformers.testing.fake import FakeListerWatcher as FakeListerWatcher
    from kubeinformers.testing.local_api_server import LocalApiServer as LocalApiServer
    from kubeinformers.testing.real_apiserver import RealApiServer as RealApiServer

_exports.install(__name__)
