"""Talking to an API server: `transport.ApiListerWatcher` (list and watch over a kubernetes
ApiClient) and `pager` (client-go: tools/pager, following continue tokens).
"""
