"""MCP both ways: MCP servers as tool sources for Co, and Co's tools as an MCP server.

Nothing here imports the MCP SDK at module level: ``co --help`` and ``co status`` stay
light. docs/mcp.md describes the settings and the ``mcp:<server>:<tool>`` permission keys.
The agent builder calls :func:`co_core.mcp.toolsets.mcp_toolsets`.
"""
