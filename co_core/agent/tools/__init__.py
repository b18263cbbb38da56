"""Tool selection: which tools each model request carries."""
