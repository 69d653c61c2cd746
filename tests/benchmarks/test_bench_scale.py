"""manage.py bench_scale on a tiny input: every figure is printed and sane (no timed assertions).

The benchmark runs in subprocesses against a database of its own: a SQLite file in the test's folder,
or, when the suite runs on PostgreSQL, a throwaway database on the same server, dropped afterwards.
"""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from bench.synthetic_chat import TOPICS, synthetic_pages, synthetic_queries

pytestmark = pytest.mark.both_databases  # bench_database follows the run's database: both are tested

SIZES = [200, 500]
CONSOLIDATION_PAGES = 8


@pytest.fixture(scope="module")
def bench_database():
    """("sqlite", None), or ("postgres", url) of a fresh database that is dropped afterwards."""
    if connection.vendor != "postgresql":
        yield "sqlite", None
        return
    import psycopg

    db = connection.settings_dict
    name = f"memoryos_bench_test_{uuid.uuid4().hex[:8]}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    yield "postgres", f"postgres://{auth}@{host}:{port}/{name}"
    params = {"dbname": "postgres", "user": db["USER"], "host": host, "port": port, "password": db["PASSWORD"] or None}
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def bench_run(bench_database, bench_dir):
    """One run of the command for the whole module: (vendor, printed text, figures from --json)."""
    vendor, url = bench_database
    tmp_path = bench_dir
    args = ["--pages", *map(str, SIZES), "--databases", vendor, "--work-dir", str(tmp_path)]
    args += ["--store-samples", "20", "--queries", "10", "--web-probe-turns", "3"]
    args += ["--consolidation-pages", str(CONSOLIDATION_PAGES), "--json", str(tmp_path / "figures.json")]
    if url:
        args += ["--postgres-url", url]
    out = StringIO()
    call_command("bench_scale", *args, stdout=out)
    return vendor, out.getvalue(), json.loads((tmp_path / "figures.json").read_text())


def test_it_prints_every_size_next_to_its_targets(bench_run):
    vendor, printed, _ = bench_run
    for size in ("200", "500"):
        assert any(line.startswith(vendor) and f" {size} " in line for line in printed.splitlines())
    assert "<=10" in printed and "<=30" in printed and "<=1.2" in printed
    assert f"\n{vendor}: store p95 <= 10 ms:" in printed
    assert "Where a retrieval's time goes" in printed


def test_its_figures_are_sane(bench_run):
    vendor, _, figures = bench_run
    assert figures["machine"]["cores"] >= 1 and figures["machine"]["ram_bytes"] > 0
    (db,) = figures["databases"]
    assert db["database"] == vendor
    assert [size["pages"] for size in db["sizes"]] == SIZES
    for size in db["sizes"]:
        # the grown pages, and those that retrievals after a consolidation moved into mid-term at smaller sizes
        assert size["pages"] <= size["mid_term_pages"] <= size["pages"] + 5
        # the grown pages plus the short-term pages left by timing page_store (its capacity, 7)
        assert size["pages_counted"] == size["mid_term_pages"] + 7
        assert 0 < size["active_sessions"] <= 160
        for timed in ("store_ms", "retrieve_ms", "retrieve_after_consolidation_ms"):
            assert 0 < size[timed]["median"] <= size[timed]["p95"] <= size[timed]["max"]
        assert size["store_ms"]["n"] == 20 and size["retrieve_ms"]["n"] == 10
        stages = size["retrieve_stages_ms"]
        assert set(stages) == {"embed", "versions", "dense", "lexical", "scoring", "reranker", "rows", "hits", "other"}
        assert all(stages[name]["median"] > 0 for name in ("embed", "versions", "dense", "lexical", "rows"))
        assert sum(stage["median"] for stage in stages.values()) <= 1.5 * size["retrieve_ms"]["median"]
        assert size["first_retrieve_ms"] > 0 and size["web_first_retrieve_ms"] > 0
        assert size["web_peak_rss_bytes"] > 50 * 2**20
        assert size["db_bytes"] > 0 and size["index_bytes"] > 0
        assert size["bytes_per_page"] == round((size["db_bytes"] + size["index_bytes"]) / size["pages_counted"])
    consolidation = db["consolidation"]
    assert consolidation["turns"] == CONSOLIDATION_PAGES and consolidation["llm"] == "offline"
    assert consolidation["turns_per_second"] > 0 and consolidation["peak_rss_bytes"] > 50 * 2**20
    assert consolidation["errors"] == []


def test_the_embeddings_are_cached_for_the_next_run(bench_run, bench_dir):
    _, _, figures = bench_run
    sizes = figures["databases"][0]["sizes"]
    assert [size["texts_embedded"] for size in sizes] == [200, 300]
    assert len(list((bench_dir / "embeddings").glob("*/*.npz"))) == 2


def test_the_synthetic_conversation_is_prefix_stable_and_varied():
    long = synthetic_pages(7, 400)
    assert synthetic_pages(7, 150) == long[:150]
    assert synthetic_pages(8, 150) != long[:150]
    assert len({page.topic for page in long}) > 40
    assert all(page.user_input and page.agent_response for page in long)
    assert [p.minutes for p in long] == sorted(p.minutes for p in long)
    assert len(set(synthetic_queries(7, 100))) > 80
    assert sum(len(topic.subjects) for topic in TOPICS) == 160
