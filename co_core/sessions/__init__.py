"""Sessions: saved conversations and the context window they must fit.

- ``store``: the SQLite session store (one transaction per turn).
- ``recorder``: a conversation's link to the store (save, resume, list).
- ``history``: turn boundaries, tool call/return pairing, dangling-call patching.
- ``tokens``: token sizes, measuring and fitting a history to a window.
- ``counting``: counters (the estimate, the base of real tokenizers) and what they learn.
- ``overflow``: context-length errors in each server's words.
- ``fitting``: the pydantic-ai capability that fits every request.
- ``compact``: summarising older turns.
- ``context``: ``ContextKeeper``, one conversation's fitting, ``/context`` and compaction.

Importing this package is light; pydantic-ai loads only when messages are (de)serialised.
"""
