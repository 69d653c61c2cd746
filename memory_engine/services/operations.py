"""Keeping the indexes: their caches' state, and a space's indexes rebuilt or its vectors made again."""

from memory_engine.store.embeddings import EmbeddingModelMismatch
from memory_engine.store.index import cache_stats, rebuild_space_indexes, reembed_space

__all__ = ["EmbeddingModelMismatch", "cache_stats", "rebuild_space_indexes", "reembed_space"]
