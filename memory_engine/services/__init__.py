"""The features of the product, one module each: what every door (REST, MCP, the admin, the pages, the
Python class `MemoryOS`, the management commands) calls, and the only layer below the doors they may
import (an import contract says so). Each module names the functions and types of its feature, wherever
the work is done (jobs/ for what runs in a worker, engine/ for the paper's ideas, store/ for persistence):

- spaces: memory users, assistants and their spaces, parameters, deletion, sizes
- conversation: a chat turn (retrieve, reply, store), and what a turn would retrieve (the inspector)
- curation: profile and knowledge entries, pages and sessions edited, deleted, reverted; their history
- transfer: imports, exports and restores
- lab: experiments (a space forked and replayed) and their comparison
- space_llm: the LLM a space uses, its endpoint checked and tested
- consolidation: moving memory between tiers, its runs, the heat timeline
- feed: what tells an open page that the memory changed
- operations: the indexes' caches and rebuilds
"""
