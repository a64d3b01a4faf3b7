"""kubeinformers.testing."""
