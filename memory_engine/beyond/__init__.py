"""Beyond the paper: what the playground builds on the engine (memory_engine/engine, the paper's ideas).

- inspector.py: what a turn would retrieve, what the token budget cut, and the exact prompt;
- comparison.py: two spaces side by side (an experiment and its source): tiers, heat, what each retrieves;
- export.py and restore.py: a space's memory as one document, and that document restored into an empty
  space (its shape: memory_engine/export_format.py).

The services call these; they call the engine, never the other way round (import contracts in
pyproject.toml).
"""
