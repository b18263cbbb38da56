"""co-todo: the plugin built step by step in Co's plugin guide (`co plugin guide`)."""
