"""A recipe box kept in the workspace's recipes/ folder."""
