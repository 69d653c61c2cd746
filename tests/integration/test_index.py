"""FAISS sidecar indexes: the database is the source of truth, a bad file is rebuilt, never read as empty."""

import json
import threading

import faiss
import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_engine.errors import EmbeddingModelMismatch
from memory_engine.models import MemorySpace, Page
from memory_engine.store import index, writes
from memory_engine.store.embeddings import from_bytes
from memory_engine.store.index import dense_index, index_path, read_index_file
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns


@pytest.fixture
def space(memory, alice_space):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1000
    alice_space.save()
    add_turns(memory, CAT_TALK)
    alice_space.refresh_from_db()
    return alice_space


def cat_pages(memory):
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="Milo the cat", count_hits=False)
    return {item.id for item in result.pages}


def test_vector_ids_are_the_rows_primary_keys(space):
    mid = set(Page.objects.filter(tier=Page.Tier.MID).values_list("pk", flat=True))
    idx = dense_index(space, "pages")
    assert {i for i, _ in idx.search(idx.faiss.reconstruct(min(mid)), 10)} == mid


def test_the_sidecar_file_records_its_version_and_model(space):
    dense_index(space, "pages")
    stored = read_index_file(index_path(space.pk, "pages"))
    assert stored.version == space.vector_version
    assert stored.model == space.embedding_model == "all-MiniLM-L6-v2 (bundled)"
    assert len(stored) == 2


def test_a_missing_file_is_rebuilt_from_the_database(memory, space):
    expected = cat_pages(memory)
    index.forget_all()
    index_path(space.pk, "pages").unlink()
    assert cat_pages(memory) == expected and expected


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped-byte", "empty"])
def test_a_corrupt_file_is_rebuilt_not_read_as_empty_memory(memory, space, damage):
    expected = cat_pages(memory)
    path = index_path(space.pk, "pages")
    raw = path.read_bytes()
    damaged = {
        "garbage": b"\x00not an index at all",
        "truncated": raw[: len(raw) // 2],
        "flipped-byte": raw[:-5] + bytes([raw[-5] ^ 0xFF]) + raw[-4:],
        "empty": b"",
    }[damage]
    path.write_bytes(damaged)
    index.forget_all()  # as a fresh process would start
    assert cat_pages(memory) == expected
    assert read_index_file(path) is not None  # and the good file is written back


def test_a_stale_file_catches_up_with_the_database(memory, space):
    cat_pages(memory)  # writes the file at the current version
    old_version = read_index_file(index_path(space.pk, "pages")).version
    add_turns(memory, COOKING_TALK)
    index.forget_all()
    space.refresh_from_db()
    assert space.vector_version > old_version
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="chickpea curry", count_hits=False)
    assert "curry" in result.pages[0].text
    assert len(dense_index(space, "pages")) == Page.objects.filter(tier=Page.Tier.MID).count()


def test_a_file_ahead_of_the_database_is_not_trusted(memory, space):
    cat_pages(memory)
    MemorySpace.objects.filter(pk=space.pk).update(vector_version=1)  # e.g. the database was restored
    Page.objects.filter(space=space).update(vector_version=1)
    index.forget_all()
    assert len(dense_index(space, "pages")) == 2
    assert read_index_file(index_path(space.pk, "pages")).version == 1


def test_another_process_changes_are_seen_through_the_version(memory, space):
    cat_pages(memory)  # this process caches the index
    before = len(dense_index(space, "pages"))
    add_turns(memory, COOKING_TALK)  # the write bumps the version in the database
    assert len(dense_index(space, "pages")) == before + 3


def test_vectors_of_another_model_are_never_mixed_in(memory, space):
    MemorySpace.objects.filter(pk=space.pk).update(embedding_model="some-other-model")
    index.forget_all()
    with pytest.raises(EmbeddingModelMismatch, match="rebuild_indexes --reembed"):
        memory.retrieve(user_id="alice", assistant_id="helper", query="cat")
    with pytest.raises(EmbeddingModelMismatch):
        add_turns(memory, COOKING_TALK)


def test_reembedding_after_a_model_change_restores_the_space(memory, space, capsys):
    MemorySpace.objects.filter(pk=space.pk).update(embedding_model="some-other-model")
    call_command("rebuild_indexes", "--reembed", "--space", str(space.pk))
    space.refresh_from_db()
    assert space.embedding_model == "all-MiniLM-L6-v2 (bundled)"
    assert cat_pages(memory)


def test_the_rebuild_command_rebuilds_every_index_from_the_database(memory, space, capsys):
    for name in index.SPECS:
        dense_index(space, name)
    index_path(space.pk, "sessions").write_bytes(b"junk")
    call_command("rebuild_indexes")
    out = capsys.readouterr().out
    assert f"space {space.pk} (alice / helper): pages 2, sessions 1, user_knowledge 0, assistant_knowledge 0" in out
    rebuilt = read_index_file(index_path(space.pk, "sessions"))
    session = space.sessions.get()
    assert rebuilt is not None and len(rebuilt) == 1 and rebuilt.version == space.vector_version
    [(found, score)] = rebuilt.search(from_bytes(session.embedding), 1)  # the junk gave way to the session
    assert found == session.pk and score == pytest.approx(1.0, abs=1e-5)


def test_scoring_given_ids_reads_the_stored_vectors():
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dense = index.DenseIndex(16, "model")
    dense.add(list(range(1000, 1300)), vectors)
    query = vectors[7]

    def reconstructed(ids):  # a dot product each: the same to float32 rounding; another row's differs by far more
        return pytest.approx(dense._score_by_reconstruct(query, ids), abs=1e-6)

    ids = [1007, 1299, 5, 1000, 1150]  # 5 is not in the index
    assert dense.score_ids(query, ids) == reconstructed(ids) and 5 not in dense.score_ids(query, ids)
    dense.remove([1000, 1001, 1150])  # rows after a removed one move up
    dense.add([1150, 2000], vectors[:2])  # an id back, with another vector, and a new one
    ids = [1002, 1150, 1299, 2000, 1000]
    assert dense.score_ids(query, ids) == reconstructed(ids)
    assert dense.score_ids(query, [1150])[1150] == pytest.approx(float(np.dot(vectors[0], query)), abs=1e-6)


def test_a_pinned_block_reads_the_space_version_once_for_every_search(memory, space):
    vector = dense_index(space, "pages").faiss.reconstruct(int(Page.objects.filter(tier=Page.Tier.MID).first().pk))
    with index.pinned_versions(), CaptureQueriesContext(connection) as queries:
        for name in index.SPECS:
            index.search_dense(space, name, vector, 5)
            index.search_lexical(space, name, "Milo", 5)
    assert sum("memory_engine_memoryspace" in query["sql"] for query in queries) == 1
    before = len(dense_index(space, "pages"))
    add_turns(memory, COOKING_TALK)  # bumps the version: seen again once the block is over
    assert len(dense_index(space, "pages")) == before + 3


def test_the_neighbourhood_of_a_page_follows_the_pages_that_are_in_mid_term(memory, space):
    add_turns(memory, COOKING_TALK)
    mid = list(Page.objects.filter(space=space, tier=Page.Tier.MID).order_by("seq").values_list("id", "seq"))
    assert len(mid) >= 3
    (first, _), (second, second_seq), (third, _) = mid[:3]
    assert index.page_neighbourhood(space, {second}) == {first: mid[0][1], second: second_seq, third: mid[2][1]}
    # Another process archives the middle page (as an eviction does): it leaves every neighbourhood.
    version = writes.begin_vector_write(space)
    Page.objects.filter(pk=second).update(tier=Page.Tier.ARCHIVED, vector_version=version)
    assert index.page_neighbourhood(space, {second}) == {}
    assert second not in index.page_neighbourhood(space, {first, third})
    index.forget_all()  # a fresh process builds the same from the database
    assert second not in index.page_neighbourhood(space, {first, third})
    assert first in index.page_neighbourhood(space, {first})


def test_a_search_from_any_thread_runs_on_one_openmp_thread():
    """A request thread's FAISS search must not fan out over every core (DenseIndex.search says why)."""
    dense = index.DenseIndex(8, "test")
    vectors = np.eye(8, dtype=np.float32)
    dense.add(list(range(1, 9)), vectors)
    seen = {}

    def search():
        seen["before"] = faiss.omp_get_max_threads()
        seen["hits"] = dense.search(vectors[2], 3)
        seen["after"] = faiss.omp_get_max_threads()

    thread = threading.Thread(target=search)
    thread.start()
    thread.join(timeout=60)
    assert seen["hits"][0] == (3, pytest.approx(1.0))
    assert seen["after"] == 1


# --- BM25 sidecar files ---------------------------------------------------------------------------------


def lexical_hits(space, query: str) -> list[tuple[int, float]]:
    return index.search_lexical(space, "pages", query, 10)


def page_text_queries(queries) -> int:
    """How many of the captured queries read the pages' table (a BM25 index built from their texts)."""
    return sum('"memory_engine_page"' in query["sql"] for query in queries)


def test_a_bm25_file_is_read_back_without_reading_or_tokenising_the_texts(memory, space):
    expected = lexical_hits(space, "Milo the cat knocked my coffee")
    order = dict(index.page_neighbourhood(space, set(Page.objects.values_list("pk", flat=True))))
    assert expected and index.lexical_path(space.pk, "pages").exists()
    index.forget_all()  # as a fresh process would start
    with CaptureQueriesContext(connection) as queries:
        assert lexical_hits(space, "Milo the cat knocked my coffee") == expected
    assert page_text_queries(queries) == 0
    assert index.page_neighbourhood(space, set(order)) == order


@pytest.mark.parametrize("damage", ["flipped-byte", "truncated", "another space", "other tokenising code"])
def test_a_bm25_file_that_cannot_be_trusted_is_rebuilt_from_the_database(memory, space, damage):
    expected = lexical_hits(space, "Milo the cat knocked my coffee")
    path = index.lexical_path(space.pk, "pages")
    raw = path.read_bytes()
    header, payload = raw.split(b"\n", 2)[1], raw.split(b"\n", 2)[2]
    meta = json.loads(header)
    if damage == "flipped-byte":
        raw = raw[:-5] + bytes([raw[-5] ^ 0xFF]) + raw[-4:]
    elif damage == "truncated":
        raw = raw[: len(raw) // 2]
    else:
        key = "space" if damage == "another space" else "tokens"
        raw = index.LEXICAL_MAGIC + json.dumps({**meta, key: "something else"}).encode() + b"\n" + payload
    path.write_bytes(raw)
    index.forget_all()
    with CaptureQueriesContext(connection) as queries:
        assert lexical_hits(space, "Milo the cat knocked my coffee") == expected
    assert page_text_queries(queries) == 1  # rebuilt from the pages
    assert index.read_lexical_file(path, space_key=str(space.index_key)) is not None  # and written back


def test_a_stale_bm25_file_catches_up_and_one_ahead_of_the_database_is_not_trusted(memory, space):
    lexical_hits(space, "Milo")  # writes the file at the current version
    add_turns(memory, COOKING_TALK)
    index.forget_all()
    hits = lexical_hits(space, "chickpea curry")
    assert hits and "curry" in Page.objects.get(pk=hits[0][0]).text
    index.forget_all()
    MemorySpace.objects.filter(pk=space.pk).update(vector_version=1)  # e.g. the database was restored
    Page.objects.filter(space=space).update(vector_version=1)
    space.refresh_from_db()
    with CaptureQueriesContext(connection) as queries:
        assert lexical_hits(space, "chickpea curry")
    assert page_text_queries(queries) == 1
    assert index.read_lexical_file(index.lexical_path(space.pk, "pages"), space_key=str(space.index_key)).version == 1
