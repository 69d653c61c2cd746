"""Search indexes of a memory space: FAISS and BM25, in memory and in sidecar files, kept in step with the
database.

The database is the source of truth. Each space has a `vector_version`; every row that an index holds
(mid-term pages, active sessions, knowledge entries) records the version at which it last changed. An
index knows the version it is current to, so bringing it up to date reads only the rows changed since:

    current  -> use it
    behind   -> catch up: re-read rows with a higher version, drop their old vectors, add the live ones
    missing, unreadable, made by another model, or ahead of the database -> rebuild from the database
    written for another space (its header's key is not this space's index_key) -> rebuild

so a stale or corrupt file is never read as empty memory, and a folder left by a reset or restored
database, whose space had this number, is never read as this space's memory. Writers bump the version while holding the
space's row lock (writes.lock_space), so versions commit in order and a reader that sees version V sees
every row up to V.

Sidecar files are written atomically (temporary file, fsync, rename), carry a checksum, and are only an
accelerator for a fresh process: they are rewritten after a rebuild and when they fall SAVE_EVERY
versions behind, never once per turn. A FAISS file (`<name>.faiss`) holds the vectors; a BM25 file
(`<name>.bm25`) holds each document's content words and their counts, and for pages their order, so that
loading it reads no text from the database and tokenises nothing (a fifth of the time, measured); it is
not reused by code that makes its documents differently (`LEXICAL_DOCUMENTS`: the tokens, the dated text).
"""

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np
from django.db.models import BooleanField, ExpressionWrapper, Model, Q

from memory_engine.config import memory_settings
from memory_engine.language.temporal import said_tokens
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page, reply_as_memory
from memory_engine.store.embeddings import check_embedding_model, from_bytes, get_embedder, model_label, to_bytes
from memory_engine.store.index_cache import CacheStats, IndexCache, configured_limit_bytes
from memory_engine.store.lexical import TOKENS_FINGERPRINT, BM25Index
from memory_engine.store.writes import next_vector_version, space_write

logger = logging.getLogger(__name__)

FILE_MAGIC = b"MEMORYOS-FAISS-1\n"
LEXICAL_MAGIC = b"MEMORYOS-BM25-1\n"
# A BM25 file is reused only by code that makes the same documents: the same tokens, the same text.
LEXICAL_DOCUMENTS = f"{TOKENS_FINGERPRINT}+dated-1"
SAVE_EVERY = 200  # versions a sidecar file may fall behind before it is rewritten

# Every search here is one query, which FAISS would still split over one OpenMP thread per core. On a busy
# 2-core machine (a worker consolidating next to the web process) each search then waits at barriers for a
# descheduled thread: 12 ms for 160 vectors, 36 ms for 10k, 80 ms for 100k, against 0.01, 0.5 and 16 ms on
# one thread, which is as fast when the machine is idle (measured). FAISS ships its own OpenMP runtime, so
# this does not touch torch's threads.
faiss.omp_set_num_threads(1)


@dataclass(frozen=True)
class IndexSpec:
    name: str
    model: type[Model]
    live: Q  # rows that belong in the index

    def text_of(self, row: dict) -> str:
        """The text a row's lexical document is made of. A page's ends with the date tokens of the day it
        was said and of the days it speaks of (language/temporal.py)."""
        if self.model is Page:
            reply = reply_as_memory(row["agent_response"], withheld=row["reply_withheld"], source=row["reply_source"])
            text = f"{row['user_input']}\n{reply}"
            return f"{text}\n{' '.join(said_tokens(text, row['timestamp']))}"
        if self.model is MidTermSession:
            return f"{row['summary']} {' '.join(row['keywords'])}"
        return f"{row['key']}: {row['value']}"

    @property
    def text_fields(self) -> tuple[str, ...]:
        if self.model is Page:
            return ("user_input", "agent_response", "reply_withheld", "reply_source", "timestamp")
        if self.model is MidTermSession:
            return ("summary", "keywords")
        return ("key", "value")


SPECS = {
    spec.name: spec
    for spec in (
        IndexSpec("pages", Page, Q(tier=Page.Tier.MID, embedding__isnull=False)),
        IndexSpec("sessions", MidTermSession, Q(status=MidTermSession.Status.ACTIVE)),
        IndexSpec(
            "user_knowledge",
            LongTermEntry,
            Q(kind=LongTermEntry.Kind.USER_KNOWLEDGE, status=LongTermEntry.Status.ACTIVE),
        ),
        IndexSpec(
            "assistant_knowledge",
            LongTermEntry,
            Q(kind=LongTermEntry.Kind.ASSISTANT_KNOWLEDGE, status=LongTermEntry.Status.ACTIVE),
        ),
    )
}


class DenseIndex:
    """Exact inner-product search over L2-normalised vectors; FAISS ids are the rows' primary keys."""

    def __init__(self, dim: int, model: str, version: int = 0, faiss_index=None, space_key: str = "") -> None:
        self.dim = dim
        self.model = model
        self.space_key = space_key  # the index_key of the space whose rows it holds
        self.version = version
        self.saved_version = version if faiss_index is not None else -1
        self.faiss = faiss_index if faiss_index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        # id -> row of the flat index, made on first use (score_ids, remove); kept up to date by add,
        # dropped when a removal moves rows up.
        self._positions: dict[int, int] | None = None

    def __len__(self) -> int:
        return int(self.faiss.ntotal)

    def nbytes(self) -> int:
        """Memory held: the vectors and their ids, and the id -> row map once made (about 100 bytes an
        entry in a Python dict)."""
        return len(self) * (self.dim * 4 + 8) + (len(self._positions) * 100 if self._positions else 0)

    def remove(self, ids: list[int]) -> None:
        """Drop these ids; ids not in the index are ignored. Safe to repeat."""
        if not ids or not self.faiss.ntotal:
            return
        # Only ids that are there: IndexIDMap2.remove_ids rebuilds its whole id map whatever it removes
        # (~10 ms at 100k vectors), and a catch-up mostly passes ids of rows that are new to the index.
        positions = self._row_positions()
        present = [i for i in ids if int(i) in positions]
        if present and self.faiss.remove_ids(np.asarray(present, dtype=np.int64)):
            self._positions = None

    def add(self, ids: list[int], vectors: np.ndarray) -> None:
        if ids:
            start = int(self.faiss.ntotal)
            self.faiss.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64))
            if self._positions is not None:
                self._positions.update(zip(map(int, ids), range(start, start + len(ids)), strict=True))

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k nearest ids with their scores, searched on one OpenMP thread.

        A query is one vector: FAISS's default (one OpenMP thread per core) splits it across threads that
        then spin at a barrier. On 2 busy cores that cost 14x the CPU of one thread at 10k vectors (4.9 ms
        against 0.35 ms) and p95 5.8 ms against 0.7 ms; it was a fifth of a web process's CPU under the
        multi-tenant benchmark (py-spy). OpenMP's thread count belongs to the calling thread, and requests
        run on several, so each search sets it (the call costs nothing)."""
        k = min(k, len(self))
        if k <= 0:
            return []
        faiss.omp_set_num_threads(1)
        scores, ids = self.faiss.search(np.asarray(vector, dtype=np.float32).reshape(1, -1), k)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i != -1]

    def score_ids(self, vector: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Inner product of the query with each given id that is in the index.

        Each score is the dot product of the stored vector and the query, as a reconstruct-and-dot per id
        would give (to float32 rounding), but the vectors are read from the flat index's storage in one
        gather instead of one FAISS call each, and multiplied in one product: 600 ids took 0.18 ms against
        1.9 ms for a dot product each (a retrieval scores the few hundred neighbours of its candidates).
        """
        flat = faiss.downcast_index(self.faiss.index)
        if not isinstance(flat, faiss.IndexFlat):
            return self._score_by_reconstruct(vector, ids)
        positions = self._row_positions()
        found = [(i, row) for i in ids if (row := positions.get(int(i))) is not None]
        if not found:
            return {}
        stored = faiss.rev_swig_ptr(flat.get_xb(), len(self) * self.dim).reshape(len(self), self.dim)
        rows = stored[np.fromiter((row for _, row in found), dtype=np.int64, count=len(found))]
        scores = rows @ np.asarray(vector, dtype=np.float32)
        return dict(zip((i for i, _ in found), scores.tolist(), strict=True))

    def _score_by_reconstruct(self, vector: np.ndarray, ids: list[int]) -> dict[int, float]:
        out = {}
        for i in ids:
            try:
                out[i] = float(np.dot(self.faiss.reconstruct(int(i)), vector))
            except RuntimeError:  # not in the index
                continue
        return out

    def _row_positions(self) -> dict[int, int]:
        if self._positions is None:
            ids = faiss.vector_to_array(self.faiss.id_map)
            self._positions = dict(zip(ids.tolist(), range(len(ids)), strict=True))
        return self._positions


@dataclass
class PageOrder:
    """Where each mid-term page of a space sits in its conversation: id -> seq and seq -> id. Kept with
    the pages' BM25 index (built from the database in every process), so that finding a page's
    neighbours costs no query."""

    seq_of: dict[int, int] = field(default_factory=dict)
    id_at: dict[int, int] = field(default_factory=dict)

    def remove(self, page_id: int) -> None:
        seq = self.seq_of.pop(page_id, None)
        if seq is not None and self.id_at.get(seq) == page_id:
            del self.id_at[seq]

    def add(self, page_id: int, seq: int) -> None:
        self.seq_of[page_id] = seq
        self.id_at[seq] = page_id


@dataclass
class SpaceIndexes:
    """The indexes of one space held by this process (the space with `key`), and the version they are
    current to."""

    key: str
    dense: dict[str, DenseIndex] = field(default_factory=dict)
    lexical: dict[str, BM25Index] = field(default_factory=dict)
    lexical_version: dict[str, int] = field(default_factory=dict)
    lexical_saved: dict[str, int] = field(default_factory=dict)  # the version of each one's file (-1: none)
    page_order: PageOrder = field(default_factory=PageOrder)

    def nbytes(self) -> int:
        """An estimate of the memory held, for the cache's bound (the page order: two dict entries a page)."""
        return (
            sum(index.nbytes() for index in self.dense.values())
            + sum(index.nbytes() for index in self.lexical.values())
            + len(self.page_order.seq_of) * 200
        )


_cache = IndexCache(configured_limit_bytes)


def space_lock(space_id: int):
    """The lock that loading, catching up and searching the space's indexes hold (no other space's)."""
    return _cache.lock(space_id)


def cache_stats() -> CacheStats:
    """This process's index cache: spaces and bytes held, the bound, hits, misses and evictions."""
    return _cache.stats()


def index_dir(space_id: int) -> Path:
    return Path(memory_settings().index_dir) / f"space-{space_id}"


def index_path(space_id: int, name: str) -> Path:
    return index_dir(space_id) / f"{name}.faiss"


def lexical_path(space_id: int, name: str) -> Path:
    return index_dir(space_id) / f"{name}.bm25"


# --- Files -------------------------------------------------------------------------------------


HEADER_BYTES = 4096  # a sidecar's magic and header (a few hundred bytes) fit in this


def _write_sidecar(path: Path, magic: bytes, meta: dict, payload: bytes) -> None:
    """Write atomically: a reader sees the old file or the new one, never half of one. The header
    carries `meta` and the payload's checksum."""
    header = json.dumps({**meta, "sha256": hashlib.sha256(payload).hexdigest()}).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(magic + header + b"\n" + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_sidecar(path: Path, magic: bytes) -> tuple[dict, bytes] | None:
    """(header, payload) of the file; None when there is no file. Raises ValueError when it is not a
    whole file of this kind."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    if not raw.startswith(magic):
        raise ValueError("not a MemoryOS index file of this kind")
    header_end = raw.index(b"\n", len(magic))
    meta = json.loads(raw[len(magic) : header_end])
    payload = raw[header_end + 1 :]
    if hashlib.sha256(payload).hexdigest() != meta["sha256"]:
        raise ValueError("checksum mismatch")
    return meta, payload


def file_due(version: int, saved: int) -> bool:
    """Should an index current to `version` be written to its file, which holds `saved` (-1: no file)?"""
    return saved < 0 or version - saved >= SAVE_EVERY


def write_index_file(path: Path, index: DenseIndex) -> None:
    payload = faiss.serialize_index(index.faiss).tobytes()
    meta = {"space": index.space_key, "version": index.version, "model": index.model, "dim": index.dim}
    _write_sidecar(path, FILE_MAGIC, {**meta, "count": len(index)}, payload)
    index.saved_version = index.version


def read_index_file(path: Path) -> DenseIndex | None:
    """The index in the file, or None when it is missing or cannot be trusted (logged)."""
    try:
        found = _read_sidecar(path, FILE_MAGIC)
        if found is None:
            return None
        meta, payload = found
        faiss_index = faiss.deserialize_index(np.frombuffer(payload, dtype=np.uint8))
        if faiss_index.ntotal != meta["count"] or faiss_index.d != meta["dim"]:
            raise ValueError("size does not match its header")
        return DenseIndex(meta["dim"], meta["model"], int(meta["version"]), faiss_index, meta.get("space", ""))
    except Exception as exc:  # any damage means: rebuild from the database
        logger.warning("index file %s is unreadable (%s); rebuilding from the database", path, exc)
        return None


@dataclass
class LexicalFile:
    """What a BM25 sidecar file holds: the index, the version it is current to, and (for pages) their
    order in the conversation."""

    index: BM25Index
    version: int
    order: PageOrder | None


def write_lexical_file(path: Path, *, space_key: str, version: int, index: BM25Index, order: PageOrder | None) -> None:
    """The index's documents as their content words and counts (and the pages' seqs): reading it back
    costs no tokenising and no query."""
    body = {"documents": index.documents(), "seqs": list(order.seq_of.items()) if order is not None else None}
    meta = {"space": space_key, "version": version, "tokens": LEXICAL_DOCUMENTS, "count": len(index)}
    _write_sidecar(path, LEXICAL_MAGIC, meta, json.dumps(body, separators=(",", ":")).encode())


def read_lexical_file(path: Path, *, space_key: str) -> LexicalFile | None:
    """The BM25 index in the file, or None when it is missing or cannot be trusted: damaged, written
    for another space, or by code that tokenises differently (logged)."""
    try:
        found = _read_sidecar(path, LEXICAL_MAGIC)
        if found is None:
            return None
        meta, payload = found
        if meta["space"] != space_key or meta["tokens"] != LEXICAL_DOCUMENTS:
            raise ValueError("written for another space, or tokenised by other code")
        body = json.loads(payload)
        index = BM25Index()
        for doc_id, term_counts in body["documents"]:
            index.add_terms(doc_id, term_counts)
        if len(index) != meta["count"]:
            raise ValueError("size does not match its header")
        order = None
        if body["seqs"] is not None:
            order = PageOrder()
            for page_id, seq in body["seqs"]:
                order.add(page_id, seq)
        return LexicalFile(index, int(meta["version"]), order)
    except Exception as exc:  # any damage means: rebuild from the database
        logger.warning("index file %s is unreadable (%s); rebuilding from the database", path, exc)
        return None


# --- Keeping indexes current -------------------------------------------------------------------


def _changed_rows(spec: IndexSpec, space_id: int, above: int, upto: int, fields: tuple[str, ...]):
    """(id, is_live, values) of rows whose version is in (above, upto]; all rows when above < 0."""
    base = spec.model.objects.filter(space_id=space_id, vector_version__lte=upto)
    if above < 0:  # a rebuild: only the live rows matter
        for row in base.filter(spec.live).values("id", *fields).iterator(chunk_size=2000):
            yield row["id"], True, row
        return
    # One query: whether each changed row still belongs in the index comes with the row.
    changed = base.filter(vector_version__gt=above).annotate(
        is_live=ExpressionWrapper(spec.live, output_field=BooleanField())
    )
    for row in changed.values("id", "is_live", *fields).iterator(chunk_size=2000):
        yield row["id"], bool(row["is_live"]), row


def _catch_up_dense(spec: IndexSpec, space: MemorySpace, index: DenseIndex, upto: int) -> None:
    ids, vectors, stale = [], [], []
    for row_id, live, row in _changed_rows(spec, space.pk, index.version, upto, ("embedding",)):
        stale.append(row_id)
        if live and row["embedding"] is not None:
            ids.append(row_id)
            vectors.append(from_bytes(row["embedding"], index.dim))
    index.remove(stale)
    if ids:
        index.add(ids, np.vstack(vectors))
    index.version = upto


def _catch_up_lexical(
    spec: IndexSpec, space: MemorySpace, index: BM25Index, order: PageOrder | None, above: int, upto: int
) -> None:
    """Bring a BM25 index (and, for pages, their order) from version `above` to `upto`."""
    fields = (*spec.text_fields, "seq") if order is not None else spec.text_fields
    for row_id, live, row in _changed_rows(spec, space.pk, above, upto, fields):
        index.remove(row_id)
        if order is not None:
            order.remove(row_id)
        if live:
            index.add(row_id, spec.text_of(row))
            if order is not None:
                order.add(row_id, row["seq"])


_pinned = threading.local()


@contextmanager
def pinned_versions():
    """Within the block, this thread reads each space's vector version once, at its first index access,
    instead of once per access: a retrieval searching seven indexes makes one query for them, not seven.
    The indexes it searches are then current to the database as of that first read. Changes nothing;
    nesting is harmless (the outermost block decides)."""
    if getattr(_pinned, "versions", None) is not None:
        yield
        return
    _pinned.versions = {}
    try:
        yield
    finally:
        _pinned.versions = None


def _current_version(space: MemorySpace) -> int:
    """The space's vector version in the database (its model and index key are refreshed with it)."""
    versions = getattr(_pinned, "versions", None)
    if versions is not None and space.pk in versions:
        version, model, key = versions[space.pk]
    else:
        version, model, key = MemorySpace.objects.values_list("vector_version", "embedding_model", "index_key").get(
            pk=space.pk
        )
        if versions is not None:
            versions[space.pk] = (version, model, key)
    space.vector_version, space.embedding_model, space.index_key = version, model, key
    return version


def read_version(space: MemorySpace) -> int:
    """The space's vector version now (within `pinned_versions`, the one every index will be current to)."""
    return _current_version(space)


def _held(space: MemorySpace) -> SpaceIndexes:
    """This process's indexes of the space; a new, empty set when those held under its number belong to
    another space (the database was reset or restored while this process lived)."""
    key = str(space.index_key)
    held = _cache.get(space.pk)
    if held is None or held.key != key:
        held = SpaceIndexes(key)
        _cache.put(space.pk, held)
    return held


def dense_index(space: MemorySpace, name: str) -> DenseIndex:
    """The FAISS index `name` of the space, current to the database as of this call."""
    spec = SPECS[name]
    with _cache.lock(space.pk):
        version = _current_version(space)
        model = check_embedding_model(space)
        held = _held(space)
        index = held.dense.get(name)
        in_memory = index is not None and index.model == model and index.version <= version
        began = time.perf_counter()
        if not in_memory:
            index = read_index_file(index_path(space.pk, name))
            if index is not None and index.space_key != held.key:
                logger.warning("index file %s of space %s was written for another space", name, space.pk)
                index = None
            if index is not None and (index.model != model or index.version > version):
                logger.warning("index file %s is from another model or ahead of the database", name)
                index = None
        if index is None:
            index = DenseIndex(get_embedder().dim, model, version=-1, space_key=held.key)
        if index.version < version:
            _catch_up_dense(spec, space, index, version)
        held.dense[name] = index
        if file_due(index.version, index.saved_version):
            write_index_file(index_path(space.pk, name), index)
        _cache.record(hit=in_memory, seconds=time.perf_counter() - began)
        _cache.resize(space.pk)
        return index


def lexical_index(space: MemorySpace, name: str) -> BM25Index:
    """The in-memory BM25 index `name` of the space, current to the database as of this call."""
    spec = SPECS[name]
    with _cache.lock(space.pk):
        version = _current_version(space)
        held = _held(space)
        index = held.lexical.get(name)
        have = held.lexical_version.get(name, -1)
        in_memory = index is not None and have <= version
        began = time.perf_counter()
        if not in_memory:
            stored = read_lexical_file(lexical_path(space.pk, name), space_key=held.key)
            if stored is not None and stored.version > version:
                logger.warning("index file %s.bm25 of space %s is ahead of the database", name, space.pk)
                stored = None
            if stored is None:
                stored = LexicalFile(BM25Index(), -1, PageOrder() if spec.model is Page else None)
            index, have = stored.index, stored.version
            held.lexical_saved[name] = have
            if spec.model is Page:
                held.page_order = stored.order or PageOrder()
        if have < version:
            _catch_up_lexical(spec, space, index, held.page_order if spec.model is Page else None, have, version)
        held.lexical[name] = index
        held.lexical_version[name] = version
        saved = held.lexical_saved.get(name, -1)
        if file_due(version, saved):
            order = held.page_order if spec.model is Page else None
            write_lexical_file(
                lexical_path(space.pk, name), space_key=held.key, version=version, index=index, order=order
            )
            held.lexical_saved[name] = version
        _cache.record(hit=in_memory, seconds=time.perf_counter() - began)
        _cache.resize(space.pk)
        return index


def rebuild_space_indexes(space: MemorySpace) -> dict[str, int]:
    """Drop this process's indexes and the sidecar files of the space, and rebuild them from the
    database. Returns the number of vectors in each index. Safe to repeat."""
    forget_space(space.pk, delete_files=True)
    for name in SPECS:
        lexical_index(space, name)  # and its file
    return {name: len(dense_index(space, name)) for name in SPECS}


def forget_space(space_id: int, *, delete_files: bool = False) -> None:
    """Drop the cached indexes of a space (and its files); the next use rebuilds from the database."""
    with _cache.lock(space_id):
        _cache.forget(space_id)
        if delete_files:
            shutil.rmtree(index_dir(space_id), ignore_errors=True)


def prune_deleted_spaces() -> int:
    """Remove this process's index folders (and cached indexes) of spaces that no longer exist, or whose
    files were written under another index key (words erased since: engine/erasure.py gives the space a new
    key): a space deleted or erased through another process (a web process, over REST) leaves its folders in
    every other one's MEMORYOS_INDEX_DIR, holding its words. Returns how many were removed. Safe to run at
    any time: a folder removed by mistake is a cache, rebuilt from the database."""
    root = Path(memory_settings().index_dir)
    try:
        folders = [path.name for path in root.iterdir() if path.is_dir() and path.name.startswith("space-")]
    except FileNotFoundError:
        return 0
    ids = {int(name.removeprefix("space-")) for name in folders if name.removeprefix("space-").isdigit()}
    if not ids:
        return 0
    keys = {pk: str(key) for pk, key in MemorySpace.objects.filter(pk__in=ids).values_list("pk", "index_key")}
    stale = [pk for pk in ids if pk not in keys or _folder_keys(index_dir(pk)) - {keys[pk]}]
    for space_id in stale:
        forget_space(space_id, delete_files=True)
    return len(stale)


def _folder_keys(folder: Path) -> set[str]:
    """The index keys the folder's files were written under, read from their headers."""
    keys = set()
    for path in folder.glob("*"):
        magic = FILE_MAGIC if path.suffix == ".faiss" else LEXICAL_MAGIC if path.suffix == ".bm25" else None
        if magic is None:
            continue
        try:
            with path.open("rb") as f:
                head = f.read(HEADER_BYTES)
            keys.add(str(json.loads(head[len(magic) : head.index(b"\n", len(magic))])["space"]))
        except (OSError, ValueError, KeyError):
            keys.add("")  # unreadable: not this space's as it is now
    return keys


def forget_all() -> None:
    """Drop every cached index and zero the counters (tests; a process that switched databases)."""
    _cache.clear()


# --- Searching (under the space's lock: a catch-up in another thread must not change an index mid-search) --


def search_dense(space: MemorySpace, name: str, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    with _cache.lock(space.pk):
        return dense_index(space, name).search(vector, k)


def score_dense(space: MemorySpace, name: str, vector: np.ndarray, ids: list[int]) -> dict[int, float]:
    with _cache.lock(space.pk):
        return dense_index(space, name).score_ids(vector, ids)


def search_lexical(
    space: MemorySpace, name: str, query: str, k: int, allowed: set[int] | None = None
) -> list[tuple[int, float]]:
    with _cache.lock(space.pk):
        return lexical_index(space, name).search(query, k, allowed)


def score_lexical_texts(space: MemorySpace, name: str, query: str, texts: dict[int, str]) -> dict[int, float]:
    """BM25 scores of texts kept apart from the index `name` (short-term pages), with its statistics."""
    with _cache.lock(space.pk):
        return lexical_index(space, name).score_texts(query, texts)


def page_document(page: Page) -> str:
    """The lexical document of a page, as the pages index makes it (its words and the days it names)."""
    fields = SPECS["pages"].text_fields
    return SPECS["pages"].text_of({name: getattr(page, name) for name in fields})


PAGE_VECTORS_KEPT = 2048  # vectors of pages outside the indexes (short-term) this process keeps
_page_vectors: OrderedDict[int, tuple[str, np.ndarray]] = OrderedDict()  # page id -> (its text's digest, vector)
_page_vectors_lock = threading.Lock()


def page_vectors(pages: list[Page]) -> dict[int, np.ndarray]:
    """page id -> the vector of each page (its `text`, as the updater will embed it when the page moves to
    mid-term): for the few pages outside the indexes (short-term memory), embedded in one batch when not
    already, and kept in this process (the PAGE_VECTORS_KEPT used last). A page whose words changed (edited,
    erased) is embedded again, and its old vector replaced at once."""
    digests = {page.pk: hashlib.sha256(page.text.encode()).hexdigest() for page in pages}
    found = {}
    with _page_vectors_lock:
        for pk, digest in digests.items():
            kept = _page_vectors.get(pk)
            if kept is not None and kept[0] == digest:
                found[pk] = kept[1]
                _page_vectors.move_to_end(pk)
    missing = [page for page in pages if page.pk not in found]
    if missing:
        vectors = get_embedder().encode([page.text for page in missing])
        with _page_vectors_lock:
            for page, vector in zip(missing, vectors, strict=True):
                found[page.pk] = vector
                _page_vectors[page.pk] = (digests[page.pk], vector)
                _page_vectors.move_to_end(page.pk)
            while len(_page_vectors) > PAGE_VECTORS_KEPT:
                _page_vectors.popitem(last=False)
    return found


def page_neighbourhood(space: MemorySpace, page_ids: set[int]) -> dict[int, int]:
    """id -> seq of the given mid-term pages and of the mid-term pages just before and after each;
    ids that are not mid-term pages are left out."""
    with _cache.lock(space.pk):
        lexical_index(space, "pages")
        order = _held(space).page_order
        seqs = {order.seq_of[i] for i in page_ids if i in order.seq_of}
        wanted = {seq + step for seq in seqs for step in (-1, 0, 1)}
        return {order.id_at[seq]: seq for seq in wanted if seq in order.id_at}


def reembed_space(space: MemorySpace) -> int:
    """Re-embed every stored vector of the space with the configured model (after a model change),
    then rebuild its indexes. Returns the number of vectors written. Safe to repeat."""
    embedder = get_embedder()
    label = model_label(embedder)
    written = 0
    with space_write(space.pk) as write:
        locked = write.space
        version = next_vector_version(locked)  # not write.version: that refuses the old model's vectors
        groups = (
            (Page.objects.filter(space=locked, embedding__isnull=False), lambda r: r.text),
            (MidTermSession.objects.filter(space=locked), lambda r: r.summary),
            (LongTermEntry.objects.filter(space=locked, embedding__isnull=False), lambda r: r.value),
        )
        for queryset, text_of in groups:
            rows = list(queryset)
            for row, vector in zip(rows, embedder.encode([text_of(r) for r in rows]), strict=True):
                row.embedding, row.vector_version = to_bytes(vector), version
            queryset.model.objects.bulk_update(rows, ["embedding", "vector_version"], batch_size=500)
            written += len(rows)
        MemorySpace.objects.filter(pk=locked.pk).update(embedding_model=label)
    space.refresh_from_db()
    rebuild_space_indexes(space)
    return written
