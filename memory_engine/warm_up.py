"""Load the models a reply needs (the embedder, the reranker when it is on, and the offline LLM when it is
the provider) before the first request, so that the first chat after a start answers as fast as the others
instead of waiting for them to load. The web server does it in a background thread when MEMORYOS_WARM_UP
is set: its ASGI and WSGI entry points (playground/asgi.py, wsgi.py) call `warm_up_if_asked`, so no other
process loads models it does not answer with: not collectstatic or migrate, and not a Celery worker, which
must not start a loading thread before it forks its pool (its first consolidation hung so, seen in
bench_tenants)."""

import logging
import threading
import time

from memory_engine.config import memory_settings
from memory_engine.engine.reranker import get_reranker
from memory_engine.llm import get_llm
from memory_engine.store.embeddings import get_embedder

logger = logging.getLogger(__name__)


def warm_up() -> float:
    """Load the embedder and the LLM and embed one query; returns the seconds it took."""
    start = time.perf_counter()
    get_embedder().encode_one("warm up")
    get_reranker()  # when it is on
    get_llm().load()
    seconds = time.perf_counter() - start
    logger.info("models loaded in %.1f s", seconds)
    return seconds


def warm_up_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_up, name="memoryos-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up_if_asked() -> None:
    if memory_settings().warm_up:
        warm_up_in_background()
