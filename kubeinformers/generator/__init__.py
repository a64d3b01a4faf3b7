"""kubeinformers.generator: OpenAPI specs and CRDs → typed models, informers and listers.

One module per step: `load` (sources → one API model), `schema` (pre-processing),
`models` (datamodel-code-generator), `naming`, `render` (+ `templates/`), `apply` (apply
configurations for server-side apply), `write`
(deterministic output, stale files, check mode); `cli` runs them (`kubeinformers generate`),
`verify` checks the committed trees (`make verify`).

Public: `main(argv)` runs the generator as the `kubeinformers generate` command does.
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kubeinformers.generator.cli import main as main

_exports.install(__name__)
