"""kubeinformers.generator: OpenAPI specs and CRDs → typed models, informers and listers.

One module per step: `load` (sources → one API model), `schema` (pre-processing),
`models` (datamodel-code-generator), `naming`, `render` (+ `templates/`), `write`
(deterministic output, stale files, check mode); `cli` runs them (`kubeinformers generate`),
`verify` checks the committed trees (`make verify`).
"""
