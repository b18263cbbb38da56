"""Co plugin."""
