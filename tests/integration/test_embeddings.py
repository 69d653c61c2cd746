"""The bundled embedding model on its two runtimes: int8 ONNX (the default) and torch."""

import subprocess
import sys

import numpy as np
import pytest
from django.core.management import call_command

from memory_engine.config import memory_settings
from memory_engine.formats.locomo import load_samples
from memory_engine.store.embeddings import (
    Embedder,
    OnnxEmbedder,
    bundled_model_path,
    encoded_beside,
    get_embedder,
    model_label,
)
from tests.processes import ROOT


def locomo_turns(count: int) -> list[str]:
    conversation = load_samples(memory_settings().locomo_file)[0]["conversation"]
    turns = [
        turn["text"]
        for key, session in conversation.items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return turns[:count]


@pytest.fixture(scope="module")
def runtimes():
    return OnnxEmbedder(), Embedder(bundled_model_path())


def test_the_two_runtimes_give_interchangeable_vectors_under_one_label(runtimes):
    onnx, torch = runtimes
    texts = [*locomo_turns(200), "", "a" * 5000]  # an empty text, and one longer than the model reads
    a, b = onnx.encode(texts), torch.encode(texts)
    assert a.shape == b.shape == (len(texts), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = (a * b).sum(axis=1)
    assert cosines[:-2].min() >= 0.998 and cosines[-2:].min() >= 0.99  # LoCoMo's turns; the two odd ones
    assert model_label(onnx) == model_label(torch) == "all-MiniLM-L6-v2 (bundled)"


def test_a_query_alone_gets_the_vector_it_gets_in_a_batch(runtimes):
    onnx, _ = runtimes
    texts = locomo_turns(40)
    batch = onnx.encode(texts)  # sorted by length and padded
    alone = np.stack([onnx.encode_one(text) for text in texts])
    assert np.abs(batch - alone).max() < 1e-4
    assert onnx.encode([]).shape == (0, 384)


def test_a_query_encoded_beside_the_caller_gets_its_own_vector():
    texts = locomo_turns(6)
    waiting = [encoded_beside(text) for text in texts]  # six threads at once
    embedder = get_embedder()
    for text, vector in zip(texts, waiting, strict=True):
        assert np.abs(vector() - embedder.encode_one(text)).max() < 1e-6


def test_the_runtime_is_chosen_by_the_setting(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "EMBEDDING_MODEL": "", "EMBEDDING_RUNTIME": "onnx"}
    assert isinstance(get_embedder(), OnnxEmbedder)
    settings.MEMORYOS = {**settings.MEMORYOS, "EMBEDDING_RUNTIME": "torch"}
    assert isinstance(get_embedder(), Embedder)


def test_a_process_on_the_default_runtime_never_loads_torch():
    """The web process's whole application, an embedding of a batch and of a query: no torch imported."""
    script = (
        "import sys, django; django.setup(); import playground.asgi, playground.urls\n"
        "from memory_engine.store.embeddings import get_embedder\n"
        "get_embedder().encode(['one', 'two']); get_embedder().encode_one('a query')\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    env = {"DJANGO_SETTINGS_MODULE": "playground.settings", "DEBUG": "true", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_benchmark_prints_both_runtimes_side_by_side(tmp_path, capsys):
    call_command("bench_embedding", "--queries", "5", "--batch", "20", "--vectors", str(tmp_path / "vectors"))
    printed = capsys.readouterr().out
    rows = {line[:24].strip(): line[24:].split() for line in printed.splitlines()[2:7]}
    assert list(rows) == ["load, s", "query median, ms", "query p95, ms", "batch, texts/s", "peak RSS, MiB"]
    assert all(len(cells) == 3 and float(cells[0]) > 0 and float(cells[1]) > 0 for cells in rows.values())
    assert "torch imported by the onnx process: False" in printed
