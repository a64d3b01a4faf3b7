"""kubeinformers: typed, code-generated Kubernetes informers for Python.

`kubeinformers.runtime` holds client-go's informer machinery, `kubeinformers.generated` the
typed informers and listers of the built-in API, `kubeinformers.testing` a local API server
and in-memory fakes. Importing this package imports none of them, so it stays fast.
"""

__version__ = "0.1.0"

from kubeinformers import _moved

_moved.install()
