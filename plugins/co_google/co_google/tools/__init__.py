"""The tools the model calls (imported only when the agent is built)."""
