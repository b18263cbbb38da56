"""Sessions: the conversation store, memory that fits the model, and compaction.

- ``store``: SQLite session store (one transaction per turn).
- ``history``: turn boundaries, tool call/return pairing, dangling-call patching.
- ``memory``/``capability``: token estimates and the request-fitting capability.
- ``compact``: summarising older turns.
- ``chat``: what the chat loop calls (``Recorder``, ``Memory``, ``/context`` text).
- ``cli``: ``co sessions ...``.

Importing this package is light; pydantic-ai loads only when messages are (de)serialised.
"""
