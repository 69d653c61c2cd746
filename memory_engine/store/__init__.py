"""Storage under the engine: the space lock and vector versions (writes.py), the FAISS and BM25 sidecar
indexes (index.py, lexical.py), the embedder, and who holds a space (holders.py)."""
