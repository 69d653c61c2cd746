"""Request bodies: JSON whose every string is valid unicode. JSON may escape a lone surrogate
("\\ud800"), which Python decodes but no database can store; such a body is refused with 400 here,
before anything reads it."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _check_text(value, where: str = "body") -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError(f"{where} is not valid unicode (it holds a lone surrogate)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, where)
            _check_text(item, f"{key}" if where == "body" else f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            _check_text(item, where)


class UnicodeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        _check_text(data)
        return data
