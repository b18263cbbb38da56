"""Sessions: saved conversations and the context window they must fit.

- ``store``: the SQLite session store (one transaction per turn).
- ``recorder``: a conversation's link to the store (save, resume, list).
- ``history``: turn boundaries, tool call/return pairing, dangling-call patching.
- ``tokens``: token estimates, measuring and fitting a history to a window.
- ``fitting``: the pydantic-ai capability that fits every request.
- ``compact``: summarising older turns.
- ``context``: ``ContextKeeper``, one conversation's fitting, ``/context`` and compaction.

Importing this package is light; pydantic-ai loads only when messages are (de)serialised.
"""
