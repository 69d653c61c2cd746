"""Every rule over words lives in the engine's language (memory_engine/language/), each with the texts it
must and must not find, and every rule passes its own examples."""

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import memory_engine.language
from memory_engine.language.names import GIVES_OWN_NAME, SELF_NAMING, names_in
from memory_engine.language.profile_attributes import values_in
from memory_engine.language.reading import ends_no_sentence, plain, split_sentences
from memory_engine.language.replies import name_claim
from memory_engine.language.rules import RULES, rule
from memory_engine.language.word_lists import NAMING_ONESELF

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = ROOT / "memory_engine/language"
# Where a regular expression may not be compiled: the layers that use the language. (formats/ parses import
# files, not a person's words; models.py reads a summary's own tag.)
USERS_OF_LANGUAGE = ("memory_engine/engine", "memory_engine/llm", "memory_engine/store", "memory_engine/services")
RE_CALLS = frozenset({"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"})

for module in pkgutil.iter_modules(memory_engine.language.__path__):
    importlib.import_module(f"memory_engine.language.{module.name}")


def _re_calls(source: str) -> list[tuple[ast.Call, bool]]:
    """Each call of a function of `re` in `source`, and whether it is inside a function."""
    tree = ast.parse(source)
    calls: list[tuple[ast.Call, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "re"
                and child.func.attr in RE_CALLS
            ):
                calls.append((child, in_function))
            visit(child, inside)

    visit(tree, False)
    return calls


def _misplaced(source: str, *, in_language: bool) -> list[int]:
    """Lines of `source` with a pattern where the rule says none may be: outside the language, any call of
    `re`; inside it, a pattern written inline (a literal given to `re` rather than a named rule) or one
    compiled at import time without its examples (not through `rule`). A pattern built at run time from data
    (an f-string or a join of what a person said) is compiled inside a function of the language."""
    lines = []
    for call, in_function in _re_calls(source):
        literal = bool(call.args) and isinstance(call.args[0], ast.Constant)
        if not in_language or literal or (call.func.attr == "compile" and not in_function):
            lines.append(call.lineno)
    return lines


@pytest.mark.parametrize("rule_made", RULES, ids=lambda made: made.pattern.pattern[:60])
def test_every_rule_finds_what_it_was_written_for_and_nothing_it_was_not(rule_made):
    assert [text for text in rule_made.finds if not rule_made.reads(text)] == []
    assert [text for text in rule_made.misses if rule_made.reads(text)] == []


def test_no_regular_expression_is_compiled_outside_the_language_or_without_examples():
    misplaced = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in (*USERS_OF_LANGUAGE, "memory_engine/language")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "rules.py"
        for line in _misplaced(path.read_text(), in_language=folder == "memory_engine/language")
    ]
    assert misplaced == [], "make these patterns with language.rules.rule, in memory_engine/language/:\n" + "\n".join(
        misplaced
    )


def test_the_check_sees_a_pattern_in_the_engine_an_inline_one_and_one_without_examples():
    assert _misplaced("import re\nX = re.compile(r'a')\n", in_language=False) == [2]
    assert _misplaced("import re\ndef f(t):\n    return re.search(r'\\bmy\\b', t)\n", in_language=True) == [3]
    assert _misplaced("import re\nX = re.compile(r'a')\n", in_language=True) == [2]
    built = "import re\ndef names(found):\n    return re.compile(rf\"\\b(?:{'|'.join(found)})\")\n"
    assert _misplaced(built, in_language=True) == []  # built from data at run time, where the data is


def test_a_rule_without_a_text_it_finds_is_refused():
    with pytest.raises(ValueError):
        rule(r"\bmy\b", finds=())


@pytest.mark.parametrize("naming", NAMING_ONESELF)
def test_every_reader_of_a_name_given_reads_the_same_words(naming):
    said = f"{naming[0].upper()}{naming[1:]} Ines."
    assert GIVES_OWN_NAME.search(plain(said))  # recall: no answer to "what's my GP's name?" from it
    assert SELF_NAMING.search(said).group(1) == "Ines"  # the prompt: the assistant never claims it
    assert ("name", "Ines") in values_in(said)  # the profile
    assert name_claim(said, ["Ines"])  # a model's reply that claims it is refused


def test_the_person_and_the_model_are_split_into_sentences_alike():
    assert split_sentences("I saw Dr. Okafor today. He said e.g. rest.") == [
        "I saw Dr. Okafor today.",
        "He said e.g. rest.",
    ]
    assert ends_no_sentence("Dr") and ends_no_sentence("J") and not ends_no_sentence("today")


def test_a_title_and_a_sentence_opener_are_told_apart_when_names_are_read():
    assert names_in("Thank you, I'll ask Dr. Okafor next time.") == ["Okafor"]  # not "Dr": it names no one
    assert names_in("A Mr. Dunleavy lives next door. Then Sam came.") == ["Dunleavy", "Sam"]  # "Then" opens one
    assert names_in(". Sam came") == []  # a full stop with no word before it opens a sentence
    assert names_in("I met Sam's sister and Ana\u2019s dog.") == ["Sam", "Ana"]  # either apostrophe
    assert names_in("Then SAM'S van came.") == ["SAM"]
