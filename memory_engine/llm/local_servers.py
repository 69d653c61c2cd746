"""The LLM servers a person runs on their own machine (Ollama, LM Studio, llama.cpp's server), found where
MEMORYOS_LLM_LOCAL_SERVERS says they listen (in development, their usual ports), so that a space's model
form can offer the ones answering: a real local model in one step, instead of the bundled 135M one.

Each is asked for its models (`GET <base>/models`, OpenAI's list) with a short timeout, all at once; a
redirect is not followed, and what does not answer a model list is left out.
"""

import http.client
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from memory_engine.config import memory_settings

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 1.0
MAX_MODELS = 50
MAX_BODY_BYTES = 256 * 1024


def models_at(base_url: str, *, timeout: float = TIMEOUT_SECONDS) -> list[str] | None:
    """The model ids an OpenAI-compatible server at `base_url` lists, or None when it does not answer one."""
    parsed = urlsplit(base_url)
    connection_class = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parsed.hostname, parsed.port, timeout=timeout)
    try:
        connection.request("GET", f"{parsed.path.rstrip('/')}/models", headers={"Accept": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            return None
        listed = json.loads(response.read(MAX_BODY_BYTES))
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    data = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(data, list):
        return None
    ids = [str(model["id"])[:200] for model in data if isinstance(model, dict) and model.get("id")]
    return ids[:MAX_MODELS]


def answering() -> list[dict]:
    """The configured local servers that answer now: [{name, base_url, models}], in the configured order.
    Asks each for its models; stores nothing."""
    servers = memory_settings().llm_local_servers
    if not servers:
        return []
    with ThreadPoolExecutor(max_workers=len(servers)) as pool:
        found = list(pool.map(lambda server: models_at(server[1]), servers))
    return [
        {"name": name, "base_url": url, "models": models}
        for (name, url), models in zip(servers, found, strict=True)
        if models is not None
    ]
