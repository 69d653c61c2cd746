"""An entry's change from one version to the next, word by word: one diff for every door that shows
history (the admin's page renders it as HTML, the API gives it to the chat page as data)."""

import difflib

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe


def word_changes(before: str | None, after: str | None) -> list[list[str]]:
    """[kind, words] runs, in order: "same", "del" (only in `before`) or "ins" (only in `after`). Pure."""
    old, new = (before or "").split(), (after or "").split()
    runs = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            runs.append(["same", " ".join(old[i1:i2])])
        if op in ("delete", "replace"):
            runs.append(["del", " ".join(old[i1:i2])])
        if op in ("insert", "replace"):
            runs.append(["ins", " ".join(new[j1:j2])])
    return runs


def word_diff(before: str | None, after: str | None) -> SafeString:
    """The change as HTML: removed words in <del>, added in <ins>, everything escaped."""
    tags = {"same": "{}", "del": "<del>{}</del>", "ins": "<ins>{}</ins>"}
    parts = [format_html(tags[kind], words) for kind, words in word_changes(before, after)]
    return mark_safe(" ".join(parts))  # noqa: S308 - every part was escaped by format_html
