"""The engine's language: every rule over a person's words (and a model's), pure, below the engine, the
store and the LLM boundary, so each is written once and read alike by all of them. A newcomer looking for
why a sentence was read one way finds it here, and nowhere else (tests/unit/test_language_rules.py fails on
a regular expression compiled in engine/, llm/ or store/).

- text.py: apostrophes, straightened once.
- word_lists.py: the words the rules use, as data.
- keywords.py: tokens, stems and keywords (what BM25, topics and matching count).
- reading.py: a message's plain form, its sentences, whether it speaks of the speaker, tells or asks.
- asked.py: what a question asks for (a name, a date, a number, whose).
- intent.py: what a message wants of the assistant (the intent table).
- memory_requests.py: "remember this", "forget that", "what do you know about me".
- profile_attributes.py: the person's attributes a statement gives ("my sister is Ann").
- temporal.py: dates and relative times in what was said.
"""
