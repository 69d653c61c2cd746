"""A chat turn: retrieve from the space's memory, reply (the LLM, or the person's own words with a weak
model), store the exchange; and what a turn would retrieve and send, storing nothing (the inspector)."""

from memory_engine.beyond.inspector import Inspection, inspect
from memory_engine.engine.generator import Response
from memory_engine.engine.retriever import Retrieval, retrieve
from memory_engine.jobs.conversation import reply, turn_add
from memory_engine.llm import ReplyStopped

__all__ = ["Inspection", "ReplyStopped", "Response", "Retrieval", "inspect", "reply", "retrieve", "turn_add"]
