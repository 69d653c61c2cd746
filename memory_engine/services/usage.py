"""What replies used and what a space costs: each reply's record (what it was given, its tokens) and the
space's LLM usage over time, priced where the operator gave prices (beyond/replies.py, beyond/usage.py)."""

from memory_engine.beyond.replies import used_counts, used_now
from memory_engine.beyond.usage import KINDS, MAX_DAYS, cost, space_usage

__all__ = ["KINDS", "MAX_DAYS", "cost", "space_usage", "used_counts", "used_now"]
