"""Benchmarks and evaluations of the memory engine: they import the product (`memory_engine`), never
the reverse (an import contract in pyproject.toml).

chat_quality.py   the chat replies a demo audience sees, over scripted conversations (data/chat_quality.json)
locomo_run.py     ingest a LoCoMo conversation through the engine, ask every question, rank turns per method
metrics.py        LoCoMo's answer F1 (per category), BLEU-1, evidence recall@k: pure functions
baselines.py      plain retrievers over a conversation's turns: last-k, BM25, dense MiniLM
report.py         aggregate per category, write JSON, a markdown table and a PNG chart
scale.py          grow one space to 1k/10k/100k pages on SQLite and PostgreSQL and time the engine
synthetic_chat.py a long synthetic conversation for growing a space (data/synthetic_chat.json)
latency.py, progress.py   how the commands print timings and progress

The commands (bench_chat, bench_chat_quality, bench_scale, evaluate_locomo, ingest_locomo) are
`manage.py` commands of this app.
"""
