"""The bundled embedding model on its two runtimes, side by side: int8 ONNX (the default) and torch.

    manage.py bench_embedding --queries 300 --batch 2000

Each runtime runs in a child process of its own, one after the other, on the same texts (LoCoMo's
questions as queries, its turns as the batch): load time, a query's latency on one thread (the request
path), batch throughput (the worker), the process's peak RSS, and the cosine of each vector to torch's.
"""

import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand

from bench.latency import percentile
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import iter_pages, load_samples

RUNTIMES = ("torch", "onnx")  # torch first: the baseline of the ratios


def texts(queries: int, batch: int) -> tuple[list[str], list[str]]:
    samples = load_samples(memory_settings().locomo_file)
    asked = [qa["question"] for sample in samples for qa in sample["qa"]][:queries]
    turns = [
        text for sample in samples for page in iter_pages(sample) for text in (page.user_input, page.agent_response)
    ]
    return asked, [text for text in turns if text][:batch]


def measure(runtime: str, queries: int, batch: int, vectors_path: str) -> dict:
    from memory_engine.store.embeddings import Embedder, OnnxEmbedder, bundled_model_path

    asked, turns = texts(queries, batch)
    began = time.perf_counter()
    embedder = OnnxEmbedder() if runtime == "onnx" else Embedder(bundled_model_path())
    embedder.encode_one("warm up")
    loaded = time.perf_counter() - began
    took = []
    for query in asked:
        began = time.perf_counter()
        embedder.encode_one(query)
        took.append((time.perf_counter() - began) * 1000)
    began = time.perf_counter()
    vectors = embedder.encode(turns)
    batch_seconds = time.perf_counter() - began
    np.save(vectors_path, vectors)
    return {
        "load_s": loaded,
        "query_median_ms": statistics.median(took),
        "query_p95_ms": percentile(took, 0.95),
        "batch_per_s": len(turns) / batch_seconds,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch_loaded": "torch" in sys.modules,
    }


class Command(BaseCommand):
    help = "Time the bundled embedding model on onnxruntime (int8) and on torch, side by side."

    def add_arguments(self, parser):
        parser.add_argument("--queries", type=int, default=300)
        parser.add_argument("--batch", type=int, default=2000)
        parser.add_argument("--role", choices=RUNTIMES, default=None, help="internal: measure one runtime")
        parser.add_argument("--vectors", default="/tmp/bench-embedding", help="where the children leave vectors")

    def handle(self, *args, queries, batch, role, vectors, **options):
        if role:
            figures = measure(role, queries, batch, f"{vectors}-{role}.npy")
            self.stdout.write(json.dumps(figures))
            return
        results = {}
        for runtime in RUNTIMES:
            child = subprocess.run(
                [sys.executable, "manage.py", "bench_embedding", "--role", runtime, "--queries", str(queries),
                 "--batch", str(batch), "--vectors", vectors],
                capture_output=True, text=True, check=True, cwd=settings.BASE_DIR,
            )  # fmt: skip
            results[runtime] = json.loads(child.stdout.strip().splitlines()[-1])
        cosines = (np.load(f"{vectors}-onnx.npy") * np.load(f"{vectors}-torch.npy")).sum(axis=1)
        base = results["torch"]
        self.stdout.write(
            f"all-MiniLM-L6-v2, {queries} LoCoMo questions one at a time (one thread), {batch} LoCoMo turns "
            "as one batch (every core); each runtime in its own process"
        )
        self.stdout.write(f"{'':<24} {'torch':>10} {'onnx int8':>10} {'onnx/torch':>10}")
        for key, label in (
            ("load_s", "load, s"),
            ("query_median_ms", "query median, ms"),
            ("query_p95_ms", "query p95, ms"),
            ("batch_per_s", "batch, texts/s"),
            ("peak_rss_mib", "peak RSS, MiB"),
        ):
            onnx, torch = results["onnx"][key], base[key]
            self.stdout.write(f"{label:<24} {torch:>10.1f} {onnx:>10.1f} {onnx / torch:>10.2f}")
        self.stdout.write(
            f"cosine of onnx's vectors to torch's over the batch: min {cosines.min():.4f}, "
            f"median {float(np.median(cosines)):.4f}; torch imported by the onnx process: "
            f"{results['onnx']['torch_loaded']}"
        )
