"""Keeping the indexes and the models: the index caches' state, a space's indexes rebuilt or its vectors
made again, and the embedding model loaded before a worker's first task."""

from memory_engine.store.embeddings import EmbeddingModelMismatch, get_embedder
from memory_engine.store.index import cache_stats, rebuild_space_indexes, reembed_space

__all__ = ["EmbeddingModelMismatch", "cache_stats", "embedding_model_load", "rebuild_space_indexes", "reembed_space"]


def embedding_model_load() -> None:
    """Load this process's embedding model now (the first use would, slower, inside a job)."""
    get_embedder()
