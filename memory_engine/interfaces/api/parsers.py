"""Request bodies: JSON whose every string is valid unicode, nested within reason. JSON may escape a lone
surrogate ("\\ud800"), which Python decodes but no database can store; such a body is refused with 400
here, before anything reads it, and so is one nested too deep to decode."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, JSONParser


def _check_text(value) -> None:
    """Refuse a lone surrogate anywhere in the decoded body (walked without recursion)."""
    stack = [(value, "body")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ParseError(f"{where} is not valid unicode (it holds a lone surrogate)") from None
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, where))
                stack.append((child, key if where == "body" else f"{where}.{key}"))
        elif isinstance(item, list):
            stack.extend((child, where) for child in item)


class UnicodeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None
        _check_text(data)
        return data


class RawBodyParser(BaseParser):
    """A file sent as the body, of any type, left unread: the view reads it a chunk at a time (an import
    file may be hundreds of megabytes). DRF's session authentication asks for the parsed body (its CSRF
    check looks for a form token), so a view taking a file must parse it as something."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream
