"""The reranker: a cross-encoder that reads a question and one of the person's sentences together and says how
likely the sentence answers it (0 to 1).

The embedder reads a question and a sentence apart and compares their vectors: "what is that blood thinner
I'm on called?" is as close to "my GP changed my blood pressure pills" as to "I take warfarin". Read
together, the words of one can attend to the other's. The model is the bundled all-MiniLM-L6-v2 fine-tuned
with a one-logit head on the project's own chat sets (bench/reranker.py, `manage.py train_reranker`), run as
an int8 ONNX graph on onnxruntime, on one thread, loaded once per process. It is off unless
MEMORYOS_RERANKER names the folder that command wrote (model.onnx, tokenizer.json, reranker.json: the record
of its data, seed and command). How it was measured and why it is off by default: docs/benchmarks.md.
"""

from __future__ import annotations

import json
import threading
from functools import cache
from pathlib import Path

import numpy as np

from memory_engine.config import memory_settings

_load_lock = threading.Lock()


class RerankerMissing(RuntimeError):
    """MEMORYOS_RERANKER names a folder that holds no reranker."""


class Reranker:
    """A reranker loaded from the folder `manage.py train_reranker` wrote."""

    def __init__(self, folder: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        if not (folder / "model.onnx").is_file() or not (folder / "reranker.json").is_file():
            raise RerankerMissing(
                f"MEMORYOS_RERANKER={folder} holds no reranker (model.onnx, reranker.json): "
                "run `manage.py train_reranker --out <folder>` or leave the setting empty"
            )
        self.folder = folder
        self.record = json.loads((folder / "reranker.json").read_text())
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=int(self.record["max tokens"]))
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {given.name for given in self._session.get_inputs()}

    def scores(self, question: str, sentences: list[str]) -> np.ndarray:
        """How likely each sentence answers `question`, 0 to 1, in their order."""
        if not sentences:
            return np.zeros(0, dtype=np.float64)
        encodings = self._tokenizer.encode_batch([(question, sentence) for sentence in sentences])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        logits = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0].reshape(-1)
        return 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))


@cache
def _reranker_in(folder: str) -> Reranker:
    return Reranker(Path(folder))


def get_reranker() -> Reranker | None:
    """The process-wide reranker of MEMORYOS_RERANKER, or None when it is off."""
    folder = memory_settings().reranker
    if not folder:
        return None
    with _load_lock:
        return _reranker_in(folder)
