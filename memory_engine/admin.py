"""Django finds the admin here; the ModelAdmins are in interfaces/admin.py."""

from memory_engine.interfaces import admin  # noqa: F401  (registers the ModelAdmins)
