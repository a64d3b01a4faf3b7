"""Maintainers' tools: run from a clone (`python -m tools.<name>`); not part of the installed package."""
