"""The doors into the memory: the REST API (api/), the MCP server, the Django admin, the pages, and the
Python class (memoryos.py). They validate, then call jobs and the engine; nothing below imports them."""
