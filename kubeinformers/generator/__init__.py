"""kubeinformers.generator."""
