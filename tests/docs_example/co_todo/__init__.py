"""co-todo: the plugin built step by step in docs/plugins.md (tested by tests/test_docs_example.py)."""
