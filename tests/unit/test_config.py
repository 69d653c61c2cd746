"""The settings the code reads (memory_engine/config.py): read from the environment by type, refused when
malformed with the variable's name, seen at once when a test overrides them, and documented from the
same definitions."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from memory_engine.config import SETTINGS, MemorySettings, from_environment, memory_settings
from memory_engine.management.commands.settings_table import DOC, with_table


def test_each_setting_is_read_from_its_variable_as_its_type(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORYOS_STM_CAPACITY", "9")
    monkeypatch.setenv("MEMORYOS_HEAT_THRESHOLD", "4.5")
    monkeypatch.setenv("MEMORYOS_RETRIEVAL_DATES", "off")
    monkeypatch.setenv("MEMORYOS_EVICTION_POLICY", "lfu")
    monkeypatch.setenv("MEMORYOS_INDEX_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORYOS_LLM_PRICES", "gpt-4o-mini=0.15/0.60")
    read = MemorySettings(**{name.lower(): value for name, value in from_environment().items()})
    assert (read.stm_capacity, read.heat_threshold, read.retrieval_dates) == (9, 4.5, False)
    assert read.eviction_policy == "lfu" and read.index_dir == tmp_path
    assert read.llm_prices == {"smollm2-135m": (0.0, 0.0), "gemma3-270m": (0.0, 0.0), "gpt-4o-mini": (0.15, 0.6)}
    assert read.mtm_capacity == 200 and read.consolidation == "celery"  # the defaults where nothing is set


def test_the_benchmarks_files_are_found_by_one_setting_each_as_the_pages_find_them(tmp_path, settings):
    # LoCoMo's file was a setting for the pages and a constant of formats/ for the evaluations, LongMemEval's only
    # a constant: now one setting each, which every command's default reads
    from bench.management.commands.evaluate_locomo import Command as EvaluateLocomo
    from bench.management.commands.evaluate_longmemeval import Command as EvaluateLongMemEval

    mine = tmp_path / "longmemeval_s.json"
    settings.MEMORYOS = {**settings.MEMORYOS, "LOCOMO_FILE": tmp_path / "locomo10.json", "LONGMEMEVAL_FILE": mine}
    assert memory_settings().longmemeval_file == mine
    for command, expected in ((EvaluateLongMemEval(), mine), (EvaluateLocomo(), tmp_path / "locomo10.json")):
        assert command.create_parser("manage.py", "x").parse_args([]).file == str(expected)


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("MEMORYOS_STM_CAPACITY", "seven", "MEMORYOS_STM_CAPACITY must be an integer"),
        ("MEMORYOS_MERGE_THETA", "high", "MEMORYOS_MERGE_THETA must be a number"),
        ("MEMORYOS_RETRIEVAL_DATES", "maybe", "MEMORYOS_RETRIEVAL_DATES must be a boolean"),
        ("MEMORYOS_CONSOLIDATION", "cron", "MEMORYOS_CONSOLIDATION must be one of celery, inline"),
        ("MEMORYOS_LLM_PRICES", "gpt=cheap", "MEMORYOS_LLM_PRICES: each part is model=prompt/completion"),
        ("MEMORYOS_LLM_LOCAL_SERVERS", "Ollama=ftp://x", "MEMORYOS_LLM_LOCAL_SERVERS: 'Ollama=ftp://x' is not Name="),
        ("MEMORYOS_RERANKER", "/nowhere/reranker", "MEMORYOS_RERANKER: '/nowhere/reranker' holds no reranker"),
    ],
)
def test_a_malformed_value_stops_with_the_variables_name(monkeypatch, name, value, message):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=message):
        from_environment()


def test_the_local_model_servers_are_offered_in_development_only_unless_listed(monkeypatch):
    assert [name for name, _ in from_environment(debug=True)["LLM_LOCAL_SERVERS"]] == [
        "Ollama",
        "LM Studio",
        "llama.cpp",
    ]
    assert from_environment(debug=False)["LLM_LOCAL_SERVERS"] == []
    monkeypatch.setenv("MEMORYOS_LLM_LOCAL_SERVERS", "Mine=http://127.0.0.1:9000/v1/")
    assert from_environment(debug=False)["LLM_LOCAL_SERVERS"] == [("Mine", "http://127.0.0.1:9000/v1")]


def test_the_engine_reads_an_override_at_once_and_a_name_no_setting_has_is_an_error(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "TOP_PAGES": 3}
    assert memory_settings().top_pages == 3
    settings.MEMORYOS = {**settings.MEMORYOS, "TOP_PAGE": 3}
    with pytest.raises(TypeError, match="top_page"):
        memory_settings()


def test_the_docs_table_is_made_from_the_settings_and_is_current():
    call_command("settings_table", "--check")
    table = with_table(DOC.read_text())
    assert all(f"| `MEMORYOS_{spec.name.upper()}` |" in table for spec in SETTINGS)
    assert "| `MEMORYOS_HEAT_THRESHOLD` | 5 | heat τ at which a session is promoted |" in table
    stale = DOC.read_text().replace("| `MEMORYOS_HEAT_THRESHOLD` | 5 |", "| `MEMORYOS_HEAT_THRESHOLD` | 4 |")
    assert with_table(stale) != stale  # a changed row is found and written again
    with pytest.raises(CommandError, match="markers are missing"):
        with_table("# Settings\n")
