"""LocalApiServer's parts: HTTP handling (`http`, `watch_stream`), routing and verbs (`api`,
`write`), objects and schemas (`objects`, `schema`, `registry`), rendering (`render`), the
versioned store (`store`), selectors, TLS, errors and shared state.
"""
