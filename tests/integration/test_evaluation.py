"""The LoCoMo evaluation: LoCoMo's metrics, the plain baselines and the evaluate_locomo command."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.baselines import BM25Turns, DenseTurns, LastTurns
from bench.fake_llm_server import reply
from bench.locomo_run import BUDGETS, fit_turns, spread
from bench.metrics import (
    answer_f1,
    bleu1,
    evidence_recall,
    locomo_answer_score,
    normalize_answer,
    token_f1,
)
from memory_engine.engine.retriever import estimate_tokens
from memory_engine.formats.locomo import iter_turns, turn_document
from memory_engine.models import Page
from tests.memory_helpers import nothing_extracted

# --- metrics ----------------------------------------------------------------------------------------


def test_answers_are_normalised_as_locomo_does():
    assert normalize_answer("The Cat, and a dog!") == "cat dog"
    assert normalize_answer("  7 May 2023. ") == "7 may 2023"


def test_f1_stems_words_and_counts_repeated_tokens_once_each():
    assert token_f1("painting sunsets", "painted a sunset") == pytest.approx(1.0)
    assert token_f1("sunset sunset", "sunset") == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert token_f1("", "sunset") == 0.0
    assert token_f1("beach", "mountains") == 0.0


def test_multi_hop_answers_are_scored_part_by_part():
    # Gold parts: pottery (found), camping (found), swimming (missed): mean of best F1 per gold part.
    assert answer_f1("camping, pottery", "pottery, camping, swimming", 1) == pytest.approx(2 / 3)


def test_open_domain_gold_is_cut_at_its_rationale():
    assert answer_f1("likely no", "Likely no; she wants to be a counselor", 3) == pytest.approx(1.0)
    assert answer_f1("likely no", "Likely no; she wants to be a counselor", 4) < 1.0


def test_adversarial_questions_score_a_refusal():
    assert locomo_answer_score("Not mentioned in the conversation", "", 5) == 1.0
    assert locomo_answer_score("No information available.", "", 5) == 1.0
    assert locomo_answer_score("Sweden", "", 5) == 0.0


def test_bleu1_rewards_shared_words_and_punishes_short_answers():
    assert bleu1("transgender woman", "Transgender woman") == pytest.approx(1.0)
    assert 0 < bleu1("woman", "transgender woman") < 1.0
    assert bleu1("", "anything") == 0.0


def test_evidence_recall_counts_the_first_k_distinct_turns():
    ranked = ["D1:1", "D1:1", "D2:3", "D4:1", "D1:2"]
    assert evidence_recall(["D2:3", "D1:2"], ranked, 2) == 0.5
    assert evidence_recall(["D2:3", "D1:2"], ranked, 4) == 1.0
    with pytest.raises(ValueError):
        evidence_recall([], ranked, 5)


# --- a tiny conversation in LoCoMo's format -----------------------------------------------------------

SAMPLE = {
    "sample_id": "conv-t1",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Ben",
        "session_1_date_time": "9:00 am on 1 March, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Ben! I finally adopted a dog, his name is Pepper."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congratulations! What breed is Pepper?"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "Pepper is a beagle and loves long walks in the park."},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "Beagles are great. I started learning the violin."},
        ],
        "session_2_date_time": "6:30 pm on 20 April, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I ran my first marathon in Boston last week!"},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Amazing! My violin teacher says I am improving."},
            {"speaker": "Ann", "dia_id": "D2:3", "text": "I also repainted my kitchen a bright yellow."},
            {"speaker": "Ben", "dia_id": "D2:4", "text": "Yellow kitchens feel so sunny."},
            {"speaker": "Ann", "dia_id": "D2:5", "text": "My sister is visiting from Lisbon next month."},
            {"speaker": "Ben", "dia_id": "D2:6", "text": "Show her the new kitchen!"},
        ],
    },
    "qa": [
        {"question": "What is the name of Ann's dog?", "answer": "Pepper", "evidence": ["D1:1"], "category": 4},
        {"question": "When did Ann run a marathon?", "answer": "April 2023", "evidence": ["D2:1"], "category": 2},
        {"question": "What instrument is Ben learning?", "answer": "violin", "evidence": ["D1:4; D2:2"], "category": 1},
        {"question": "What is Ann's favourite film?", "adversarial_answer": "Heat", "evidence": [], "category": 5},
    ],
}


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "locomo-tiny.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_the_baselines_rank_turns_their_own_way():
    turns = list(iter_turns(SAMPLE))
    assert LastTurns(turns).rank("anything", 3) == ["D2:6", "D2:5", "D2:4"]
    assert BM25Turns(turns).rank("long walks in the park", 3) == ["D1:3"]  # only turns sharing a word
    assert DenseTurns(turns).rank("running a marathon in Boston", 1) == ["D2:1"]


def _run(locomo_file, tmp_path, *args):
    out = tmp_path / "eval"
    call_command("evaluate_locomo", "--file", str(locomo_file), "--out", str(out), *args)
    return out, json.loads((out / "locomo.json").read_text())


@pytest.mark.django_db(transaction=True)
def test_the_evaluation_ranks_every_question_with_every_method_and_writes_its_report(locomo_file, tmp_path, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    out, result = _run(locomo_file, tmp_path, "--no-llm")

    assert {p.name for p in out.iterdir()} == {"locomo.json", "locomo.md", "locomo.png", "locomo-curve.png", "samples"}
    assert [p.name for p in (out / "samples").iterdir()] == ["conv-t1.json"]
    assert (out / "locomo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "locomo-curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sample = result["samples"][0]
    assert sample["pages"] == 5 and sample["dialogue_turns"] == 10 and sample["ingest"]["turns"] == 5
    assert sample["ingest"]["pages_moved"] == 3 and sample["ingest"]["llm_calls"] == 0
    assert sample["tiers"] == {"short": 2, "mid": 3, "archived": 0}
    dog, marathon, violin, film = sample["questions"]
    assert dog["ranked"]["MemoryOS"][:2] == ["D1:1", "D1:2"]  # the page of Ann's turn and Ben's reply
    assert marathon["ranked"]["BM25 turns"][0] == "D2:1"
    assert violin["evidence"] == ["D1:4", "D2:2"]  # "D1:4; D2:2" cleaned
    assert film["evidence"] == []
    # The last two pages are short-term, but said long before the question: no conversation in progress, so
    # they are ranked with the others by their match, and the context opens with the page that answers.
    assert {"D2:3", "D2:4", "D2:5", "D2:6"} <= set(dog["ranked"]["MemoryOS"])
    assert dog["context_turns"][:2] == ["D1:1", "D1:2"]

    recall = result["summary"]["recall"]
    assert recall["MemoryOS"]["4 single-hop"] == {"n": 1, "@5": 1.0, "@10": 1.0, "@25": 1.0}
    assert recall["last-k turns"]["4 single-hop"]["@5"] == 0.0
    assert recall["MemoryOS"]["5 adversarial"]["n"] == 0
    assert result["summary"]["answers"] == {}
    table = (out / "locomo.md").read_text()
    assert "| **MemoryOS** | " in table and "Evidence recall@10" in table
    in_context = result["summary"]["context_recall"]
    assert in_context["4 single-hop"]["recall"] == 1.0 and in_context["4 single-hop"]["turns"] == 10.0
    assert "| evidence recall in the context | " in table

    # The curve: each method's context at each budget, never over it; the tiny conversation fits 250 tokens.
    assert set(dog["curve"]) == {"MemoryOS", "BM25 turns", "dense MiniLM turns"}
    for by_budget in dog["curve"].values():
        assert [int(b) for b in by_budget] == list(BUDGETS)
        assert all(tokens <= int(budget) for budget, (tokens, _) in by_budget.items())
        assert by_budget["250"][1] == 1  # Pepper's turn shown
    document = {t.dia_id: turn_document(t) for t in iter_turns(SAMPLE)}
    # BM25 shows the turns sharing a word with the question, each costing its "Speaker: text"
    assert dog["curve"]["BM25 turns"]["250"][0] == sum(
        estimate_tokens(document[t]) for t in dog["ranked"]["BM25 turns"]
    )
    curve = result["summary"]["curve"]
    assert curve["MemoryOS"]["1500"]["1-4 all"] == 1.0
    assert "## Evidence in the context against its tokens" in table


def test_a_context_of_plain_turns_takes_them_in_order_while_they_fit():
    tokens = {"a": 5, "b": 10, "c": 3, "d": 2}
    assert fit_turns(["a", "b", "c", "d"], tokens, 9) == (8, ["a", "c"])  # b left out, c still fits
    assert fit_turns(["a", "b", "c", "d"], tokens, 100) == (20, ["a", "b", "c", "d"])
    assert fit_turns(["b"], tokens, 9) == (0, [])


@pytest.mark.django_db(transaction=True)
def test_an_interrupted_evaluation_resumes_at_the_conversation_it_stopped_in(tmp_path, settings, capsys):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    second = json.loads(json.dumps(SAMPLE)) | {"sample_id": "conv-t2"}
    second["conversation"]["session_2"][2]["text"] = "x" * 9000  # longer than a turn may be: the run stops
    path = tmp_path / "two.json"
    path.write_text(json.dumps([SAMPLE, second]), encoding="utf-8")
    out = tmp_path / "eval"
    run = ["evaluate_locomo", "--file", str(path), "--out", str(out), "--no-llm"]

    with pytest.raises(Exception, match="8000"):
        call_command(*run)
    assert not (out / "locomo.json").exists()
    assert (out / "samples" / "conv-t1.json").exists() and not (out / "samples" / "conv-t2.json").exists()
    first_space = Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id
    capsys.readouterr()

    second["conversation"]["session_2"][2]["text"] = "I also repainted my kitchen a bright yellow."
    path.write_text(json.dumps([SAMPLE, second]), encoding="utf-8")
    call_command(*run)
    printed = capsys.readouterr().err
    assert "conv-t1: kept from an earlier run" in printed and "conv-t2: done in" in printed
    assert "so far (2 of 2 conversations): recall@10 (1-4, 6 questions): MemoryOS" in printed
    # conv-t1 was not ingested again: its space is the one the interrupted run made.
    assert Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id == first_space
    resumed = json.loads((out / "locomo.json").read_text())
    assert resumed["meta"]["kept_from_earlier_runs"] == ["conv-t1"]

    call_command(*run, "--fresh", "--out", str(tmp_path / "fresh"))
    fresh = json.loads((tmp_path / "fresh" / "locomo.json").read_text())
    assert fresh["meta"]["kept_from_earlier_runs"] == []
    assert resumed["summary"] == fresh["summary"]
    assert _untimed(resumed["samples"]) == _untimed(fresh["samples"])

    # Another setting is another key: the conversation is computed again.
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 3}
    call_command(*run)
    assert "conv-t1: done in" in capsys.readouterr().err
    assert Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id != first_space


@pytest.mark.django_db(transaction=True)
def test_reuse_keeps_the_spaces_an_earlier_run_ingested_and_ranks_the_same(tmp_path, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    path = tmp_path / "one.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    run = ["evaluate_locomo", "--file", str(path), "--no-llm"]
    call_command(*run, "--out", str(tmp_path / "first"))
    space = Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id

    call_command(*run, "--reuse", "--out", str(tmp_path / "again"))
    assert Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id == space
    first, again = (json.loads((tmp_path / name / "locomo.json").read_text()) for name in ("first", "again"))
    assert again["samples"][0]["ingest"]["turns"] == 0  # nothing stored again
    assert again["summary"] == first["summary"]

    call_command(*run, "--reuse", "--limit-pages", "2", "--out", str(tmp_path / "fewer"))  # not every page: anew
    assert Page.objects.get(space__user__external_id="locomo-eval-conv-t1", seq=1).space_id != space


def _untimed(samples: list[dict]) -> list[dict]:
    """Samples without their ingestion's timings, which differ from run to run."""
    timing = {"store_ms": [], "add_ms": [], "seconds": 0}
    return [{**s, "ingest": {**s["ingest"], **timing}} for s in samples]


def _answers(request):
    """Promotion requests get an empty extraction; a question gets the answer its context supports."""
    if request.get("response_format"):
        return nothing_extracted()
    prompt = request["messages"][-1]["content"]
    if "name of Ann's dog" in prompt:
        return reply("Pepper" if "Pepper" in prompt.split("Question:")[0] else "I don't know")
    return reply("Not mentioned in the conversation")


@pytest.mark.django_db(transaction=True)
def test_with_an_llm_each_method_answers_and_is_scored_with_locomo_f1(locomo_file, tmp_path, settings, fake_llm):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    fake_llm.responder = _answers
    _, result = _run(locomo_file, tmp_path, "--answer")

    dog = result["samples"][0]["questions"][0]
    assert dog["answers"] == {"MemoryOS": "Pepper", "BM25 turns": "Pepper", "full conversation": "Pepper"}
    answers = result["summary"]["answers"]
    assert answers["MemoryOS"]["4 single-hop"]["f1"] == 1.0
    assert answers["MemoryOS"]["5 adversarial"] == {"n": 1, "f1": 1.0, "bleu1": None}
    assert answers["MemoryOS"]["2 temporal"]["f1"] == 0.0  # "Not mentioned" is wrong there
    asked = [r for r in fake_llm.requests if not r.get("response_format")]
    assert len(asked) == 4 * 3  # every question, three methods
    assert all(r["temperature"] == 0.0 for r in asked)


@pytest.mark.offline_llm
@pytest.mark.django_db(transaction=True)
def test_a_locomo_subset_runs_through_the_real_offline_stack(tmp_path, settings):
    """The CI-sized run of the real thing: conv-26's first 40 pages, with the bundled model configured; a weak
    model's promotion asks no model (long_term.extraction_from_words) and keeps the speakers' own words."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    out = tmp_path / "eval"
    call_command(
        "evaluate_locomo", "--samples", "conv-26", "--limit-pages", "40", "--limit-questions", "40", "--out", str(out)
    )
    result = json.loads((out / "locomo.json").read_text())
    sample = result["samples"][0]
    assert sample["pages"] == sample["ingest"]["turns"] == 40 and sample["ingest"]["llm_calls"] == 0
    assert sample["ingest"]["sessions_promoted"] >= 1 and sample["ingest"]["items_stored"] >= 1
    assert sample["ingest"]["errors"] == []
    recall = result["summary"]["recall"]
    asked = recall["MemoryOS"]["1-4 all"]["n"]
    assert asked > 10
    assert recall["MemoryOS"]["1-4 all"]["@25"] > recall["last-k turns"]["1-4 all"]["@25"]


@pytest.mark.django_db(transaction=True)
def test_ingest_locomo_reports_costs_and_what_the_memory_built(locomo_file, settings, fake_llm, capsys):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    fake_llm.responder = lambda request: nothing_extracted()
    call_command("ingest_locomo", "--file", str(locomo_file), "--report")
    call_command("ingest_locomo", "--file", str(locomo_file), "--report")  # replaces, does not add
    printed = capsys.readouterr().out.split("== conv-t1")[-1]
    assert "5 pages (10 dialogue turns)" in printed
    assert "retrieval at the end (4 questions)" in printed
    assert Page.objects.count() == 5


def test_a_limited_number_of_answers_is_spread_over_the_questions():
    assert spread(10, 3) == {1, 4, 7}
    assert spread(4, None) == spread(4, 9) == {1, 2, 3, 4}


def test_a_file_that_is_not_locomo_is_a_clear_error(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError, match="cannot read LoCoMo samples"):
        call_command("evaluate_locomo", "--file", str(broken))
    with pytest.raises(CommandError, match="no sample"):
        call_command("evaluate_locomo", "--samples", "conv-999")


@pytest.mark.django_db(transaction=True)
def test_longmemeval_is_read_in_its_published_format_and_ranked_as_the_paper_reports(tmp_path):
    talk = [{"role": "user", "content": f"I planted {n} tulips today."} for n in range(3)]
    question = {
        "question_id": "lme1",
        "question_type": "single-session-user",
        "question": "Where does my sister live?",
        "answer": "Porto",
        "question_date": "2023/05/30 (Tue) 10:18",
        "haystack_dates": ["2023/05/20 (Sat) 16:31", "2023/05/02 (Tue) 09:05"],
        "haystack_session_ids": ["garden", "family"],
        "haystack_sessions": [
            [message for said in talk for message in (said, {"role": "assistant", "content": "Lovely. " * 200})],
            [
                {"role": "user", "content": "My sister lives in Porto.", "has_answer": True},
                {"role": "assistant", "content": "Porto is lovely. " * 600},  # over 8,000 characters: cut
            ],
        ],
        "answer_session_ids": ["family"],
    }
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([question]))
    out = tmp_path / "out"
    call_command("evaluate_longmemeval", "--file", str(path), "--no-dense", "--out", str(out), stdout=io.StringIO())
    found = json.loads((out / "longmemeval.json").read_text())
    result = found["questions"][0]
    assert result["evidence"] == ["D1:1"] and result["answer_sessions"] == [1]
    assert result["ranked"]["MemoryOS"][0] == "D1:1"
    assert found["summary"]["MemoryOS"]["all"]["turn_all@10"] == 1.0
    assert found["summary"]["MemoryOS"]["all"]["curve"]["250"] == 1.0  # the page shown first, cut to fit
