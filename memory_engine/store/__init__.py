"""Storage under the engine: the space lock and vector versions (writes.py), the FAISS and BM25 sidecar
indexes (index.py, lexical.py), the embedder, keyword tokens, and the registry of users, assistants and
spaces (spaces.py)."""
