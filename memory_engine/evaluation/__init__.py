"""Evaluation of the memory on LoCoMo: metrics, plain baselines, the evaluation run and its report.

metrics.py     LoCoMo's answer F1 (per category), BLEU-1, evidence recall@k: pure functions
baselines.py   plain retrievers over a conversation's turns: last-k, BM25, dense MiniLM
locomo_run.py  ingest a conversation through the engine, ask every question, rank turns per method
report.py      aggregate per category, write JSON, a markdown table and a PNG chart
"""
