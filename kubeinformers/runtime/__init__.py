"""kubeinformers.runtime."""
