"""The features of the product, one module each, holding their work: what every door (REST, MCP, the
admin, the pages, the Python class `MemoryOS`, the management commands, the worker's Celery tasks) calls,
and the only layer below the doors they may import (an import contract says so). The paper's ideas are in
engine/, persistence in store/.

- spaces: memory users, assistants and their spaces, parameters, deletion, sizes; their lists (selectors)
- conversation: a chat turn (retrieve, reply, store), the stored turns, and what a turn would retrieve
  (the inspector)
- curation: profile and knowledge entries, pages and sessions edited, deleted, reverted; their history
- consolidation: moving memory between tiers in a worker (leases, runs on record), the runs listed
- dispatch: where work runs (a worker, or inline), the tasks sent, the sweep for work left behind
- imports, uploads, ingest: conversations imported turn by turn; files brought to import; ingestion
- export, restore: a space's memory as one document, and that document restored into an empty space
- background: restores and comparisons run by a worker a part at a time
- lab, comparison: experiments (a space forked and replayed) and their comparison with the source
- usage: what each reply used and cost, and what a space costs over time
- space_llm: the LLM a space uses, its endpoint checked and tested
- feed: what tells an open page that the memory changed
- operations: the indexes' caches and rebuilds, the embedding model loaded
- tokens: API tokens
"""
