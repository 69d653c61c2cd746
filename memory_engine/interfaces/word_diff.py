"""An entry's change from one version to the next as HTML, for the admin's history (the doors give it as
data: services.curation.word_changes)."""

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memory_engine.services.curation import word_changes


def word_diff(before: str | None, after: str | None) -> SafeString:
    """The change as HTML: removed words in <del>, added in <ins>, everything escaped."""
    tags = {"same": "{}", "del": "<del>{}</del>", "ins": "<ins>{}</ins>"}
    parts = [format_html(tags[kind], words) for kind, words in word_changes(before, after)]
    return mark_safe(" ".join(parts))  # noqa: S308 - every part was escaped by format_html
