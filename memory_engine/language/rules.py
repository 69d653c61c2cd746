"""A rule over words: one regular expression and the texts it must and must not find, written beside it.

Every pattern of the engine's language is made by `rule`, so a reader sees what a rule is for before its
syntax, and a change that breaks what it was written for fails at once: tests/unit/test_language_rules.py
runs every rule's examples, and fails on a regular expression compiled outside this package or a pattern
written inline instead of as a named rule. A pattern built at run time from data (the names a person gave)
is compiled inside a function of this package, where the data is.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["RULES", "Rule", "rule"]


@dataclass(frozen=True)
class Rule:
    """A compiled pattern, the texts it must find something in, and the texts it must not; `whole`: its callers
    read it with `fullmatch`, so its examples are whole texts it must match or not."""

    pattern: re.Pattern[str]
    finds: tuple[str, ...]
    misses: tuple[str, ...]
    whole: bool = False

    def reads(self, text: str) -> bool:
        """Whether the rule finds something in `text` as its callers read it."""
        return (self.pattern.fullmatch(text) if self.whole else self.pattern.search(text)) is not None


RULES: list[Rule] = []  # every rule made, in the order the language's modules were imported


def rule(
    pattern: str, flags: int = 0, *, finds: Iterable[str], misses: Iterable[str] = (), whole: bool = False
) -> re.Pattern[str]:
    """`pattern` compiled with `flags`, registered with its examples: texts as the rule reads them (after
    `reading.plain` where its caller reads plain text) in which it must find something, at least one, and
    texts in which it must find nothing. `whole`: the rule is read with `fullmatch`, and so are its examples."""
    examples = tuple(finds)
    if not examples:
        raise ValueError(f"a rule needs a text it finds: {pattern!r}")
    compiled = re.compile(pattern, flags)
    RULES.append(Rule(compiled, examples, tuple(misses), whole))
    return compiled
