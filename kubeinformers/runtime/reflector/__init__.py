"""The reflector (client-go: tools/cache/reflector.go): keeps a store in step with the server.

`reflector` holds the run loop and the steady watch loop; `list` the paged LIST, `watch_list`
the streamed initial state, `watch` opening watches and applying a stream to a store,
`state` what these share, `backoff` when to retry, `support` the errors, feature gates,
temporary store and consistency detector.
"""
