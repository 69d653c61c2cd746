"""Keeping the indexes and the models: the index caches' state, a space's indexes rebuilt or its vectors
made again, and the embedding model loaded before a worker's first task."""

import statistics
from dataclasses import dataclass

from memory_engine.models import MemorySpace
from memory_engine.store.embeddings import get_embedder
from memory_engine.store.index import cache_stats, rebuild_space_indexes, reembed_space


def embedding_model_load() -> None:
    """Load this process's embedding model now (the first use would, slower, inside a job)."""
    get_embedder()


def index_cache_report() -> dict:
    """This process's index cache as the operations page gives it: spaces and bytes held, the bound, hits,
    misses, evictions, and how long the loads it keeps took (median and 95th percentile, ms)."""
    stats = cache_stats()
    loads = sorted(stats.load_seconds)
    return {
        "spaces": stats.spaces,
        "bytes": stats.bytes,
        "limit_bytes": stats.limit_bytes,
        "hits": stats.hits,
        "misses": stats.misses,
        "evictions": stats.evictions,
        "hit_rate": stats.hit_rate,
        "loads_kept": len(loads),
        "load_ms_median": round(statistics.median(loads) * 1000, 2) if loads else None,
        "load_ms_p95": round(loads[int(0.95 * (len(loads) - 1))] * 1000, 2) if loads else None,
    }


@dataclass(frozen=True)
class Rebuilt:
    vectors: dict[str, int]  # the vectors in each index, by index name
    reembedded: int | None  # the vectors made again with the configured model, when asked


def space_indexes_rebuild(space: MemorySpace, *, reembed: bool = False) -> Rebuilt:
    """Rebuild the space's sidecar indexes from the database, after making every stored vector again with
    the configured model when `reembed` (after a model change). Safe to repeat. Raises
    EmbeddingModelMismatch when the space's vectors came from another model and `reembed` is not asked."""
    reembedded = reembed_space(space) if reembed else None
    return Rebuilt(vectors=rebuild_space_indexes(space), reembedded=reembedded)
