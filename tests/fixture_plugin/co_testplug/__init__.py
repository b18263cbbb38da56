"""A plugin used only by Co's own tests (found through a real entry point on PYTHONPATH)."""
