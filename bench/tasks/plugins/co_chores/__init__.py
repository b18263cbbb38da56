"""A todo list kept in the workspace's todos.json."""
