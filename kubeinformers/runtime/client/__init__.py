"""Talking to an API server: `transport.ApiListerWatcher` (list and watch over a kubernetes
ApiClient), `pager` (client-go: tools/pager, following continue tokens), `framing` (watch
lines and frames) and `chunked` (HTTP chunks cut out of big reads).
"""
