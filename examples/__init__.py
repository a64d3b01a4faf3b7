"""Example programs built on kubeinformers (run with `python -m examples.<name>`)."""
