"""Summaries of measured latencies, as the benchmark commands print them."""

import statistics


def percentile(values: list[float], q: float) -> float:
    """The value at quantile q (0..1) of the measured values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def describe(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms (n={len(values)})"
