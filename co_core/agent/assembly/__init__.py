"""Assembly: Co's pydantic-ai agent put together from the plugin host."""
