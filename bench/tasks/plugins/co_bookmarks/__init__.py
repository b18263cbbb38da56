"""Bookmarks kept in the workspace's bookmarks.json."""
