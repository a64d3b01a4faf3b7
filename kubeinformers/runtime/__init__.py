"""The runtime: client-go's informers, reflector, work queues and leader election in Python.

No face: users import from `kubeinformers` (docs/architecture.md lists the packages and their
order); runtime code imports each name from its defining module.
"""
