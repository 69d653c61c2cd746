"""The multi-tenant load benchmark: its spaces' sizes and their traffic, and, run small (opt-in:
`benchmark`), it populates its own benchmark database, drives the production stack with Locust, and
prints each table with figures that add up."""

import json

import psycopg
import pytest
from django.core.management import call_command

from bench.tenants import TenantOptions, space_sizes, zipf_weights
from tests.processes import database_url


def test_space_sizes_are_long_tailed_and_reach_the_maximum():
    sizes = space_sizes(TenantOptions(spaces=1000, max_pages=10_000, median_pages=100))
    assert len(sizes) == 1000 and min(sizes) >= 10 and max(sizes) == 10_000
    assert sizes.count(10_000) >= 3
    assert sorted(sizes)[500] < 200 < sum(sizes) / len(sizes)  # the mean well above the median: a long tail


def test_access_follows_a_zipf_law_not_the_size_order():
    weights = zipf_weights(1000, 1.1, seed=1)
    top = sorted(weights, reverse=True)
    assert top[0] == 1.0 and top[1] == pytest.approx(2**-1.1)
    assert sum(top[:10]) / sum(top) > 0.3  # a few spaces get much of the traffic
    assert weights.index(1.0) != 0


@pytest.mark.benchmark  # the production stack driven by Locust for minutes
@pytest.mark.once
@pytest.mark.django_db(transaction=True)
def test_a_small_run_prints_every_table_with_no_error_and_no_lost_turn(tmp_path, capsys):
    base = database_url().rsplit("/", 1)[0] if database_url().startswith("postgres") else None
    url = (base or "postgres://postgres@127.0.0.1:5432") + "/memoryos_bench_tenants_test"
    out = tmp_path / "figures.json"
    call_command(
        "bench_tenants",
        "--spaces", "20", "--max-pages", "300", "--median-pages", "20", "--clients", "2",
        "--seconds", "5", "--warmup-seconds", "3", "--work-dir", str(tmp_path), "--postgres-url", url,
        "--plot", str(tmp_path / "rss.png"), "--json", str(out),
    )  # fmt: skip
    printed = capsys.readouterr().out
    figures = json.loads(out.read_text())
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert [(run["cache"], run["clients"]) for run in figures["runs"]] == [("bounded", 2), ("no bound", 2)]
    for run in figures["runs"]:
        total = run["figures"]["Aggregated"]
        assert total["requests"] > 0 and total["failures"] == 0 and run["errors"] == [], run["errors"]
        assert {"retrieve", "store turn"} <= set(run["figures"])
        assert run["index_cache"]["processes"] >= 1 and run["index_cache"]["hit_rate"] is not None
        assert run["peak_rss"]["web"] > 100 * 2**20 and run["peak_rss"]["worker"] > 100 * 2**20
        assert run["cores"]["web"] > 0 and run["cores"]["locust"] > 0 and run["cores"]["machine"] > 0
        # Both web processes' shares (the default --web-workers 2), the larger first, within the web total.
        shares = run["cores"]["web processes"]
        assert len(shares) == 2 and shares == sorted(shares, reverse=True)
        assert 0 < sum(shares) <= run["cores"]["web"] + 0.05
        # The consolidation jobs that started while measuring, read from the runs they left. A busy machine
        # may start none in a 5-second run; those that started are counted whole.
        jobs = run["consolidation"]
        assert jobs["jobs"] == 0 or (jobs["pages_per_job"] >= 1 and jobs["worker_ms_per_job"] > 0), jobs
    assert figures["cold"]["beside"]["cold retrieve"]["requests"] > 0 and figures["cold"]["errors"] == []
    assert figures["turns"]["accepted"] == figures["turns"]["stored"] > 0
    # Each run stored its turns in a fresh copy of the population, counted there and dropped after it: no
    # run retrieved over an earlier run's turns, and the population is as it was made.
    assert all(run["turns"]["accepted"] == run["turns"]["stored"] > 0 for run in figures["runs"])
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM memory_engine_page").fetchone()[0] == plan["pages_total"]
        copy = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", ["memoryos_bench_tenants_test_run"])
        assert copy.fetchone() is None
    assert (
        "Failed requests, warm-ups included: 0" in printed
        and "none lost" in printed
        and "Cold loads next to warm traffic" in printed
        and "pages/job" in printed
    )
    assert (tmp_path / "rss.png").stat().st_size > 10_000
    # Every run started from the population's index files, as a deployment's processes start from theirs.
    assert len(list((tmp_path / "populate-indexes").glob("space-*/pages.faiss"))) == 20
