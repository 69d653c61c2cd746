"""The engine's language: every rule over a person's words (and a model's), pure, below the engine, the
store and the LLM boundary, so each is written once and read alike by all of them. A newcomer looking for
why a sentence was read one way finds it here, and nowhere else (tests/unit/test_language_rules.py fails on
a regular expression compiled in engine/, llm/ or store/).

- rules.py: `rule`, a pattern made with the texts it must and must not find.
- text.py: apostrophes, straightened once.
- word_lists.py: the words the rules use, as data.
- keywords.py: tokens, stems and keywords (what BM25, topics and matching count).
- reading.py: a message's plain form, its sentences, whether it speaks of the speaker, tells or asks.
- asked.py: what a question asks for (a name, a date, a number, whose).
- whose.py: a question about the person's own things ("what's my ...", "the name of my ...").
- intent.py: what a message wants of the assistant (the intent table).
- memory_requests.py: "remember this", "forget that", "what do you know about me".
- things_named.py: what a spoken request to forget names ("the thing I said about ...").
- profile_attributes.py: the person's attributes a statement gives ("my sister is Ann").
- names.py: a name given: the person naming themselves or a thing of theirs.
- values.py: values in what was said: numbers, dates, clock times, a value changed.
- temporal.py: dates and relative times in what was said.
- small_talk.py: greetings, thanks, goodbyes, speaking of oneself or to the other.
- clauses.py: where a sentence's clauses join and end, for curation's rewriting of a turn.
- replies.py: what a model's reply looks like: fenced JSON, an error, a loop, a claimed name.
"""
