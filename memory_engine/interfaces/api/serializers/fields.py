"""The API's own fields: text the engine checks, a page of a list, a retrieval and an export inside an answer."""

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from memory_engine.documents import AnswerDoc, QuotedDoc, RetrievalDoc


class EngineTextField(serializers.CharField):
    """Text that the engine checks (memory_engine/inputs.py: length, NUL, broken unicode), so a refusal
    reads the same through the API, MCP and the library; kept exactly as sent. DRF's own NUL and
    surrogate checks are left out: they would answer differently."""

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_blank", True)
        super().__init__(trim_whitespace=False, **kwargs)
        self.validators = [
            v
            for v in self.validators
            if not isinstance(v, ProhibitNullCharactersValidator | ProhibitSurrogateCharactersValidator)
        ]


_PAGES: dict[str, type] = {}


def card_field(model: type, card) -> type[serializers.Field]:
    """A field holding a row as every door gives it: `card(row)`'s payload (services.curation's entry_card,
    page_card, ...), documented by the pydantic `model` it is (documents.py; the OpenAPI document's schema is
    the model's, interfaces/api/openapi.py). A dict is taken as already made."""

    @extend_schema_field(model)
    class CardField(serializers.DictField):
        def to_representation(self, value):
            return value if isinstance(value, dict) else card(value)

    CardField.__name__ = CardField.__qualname__ = f"{model.__name__}Field"
    CardField.model = model
    return CardField


def paginated(serializer_class) -> type:
    """The shape of one page of `serializer_class` rows, as a list view answers (views.MemoryApiView.page_of):
    how many rows in all, the links to the next and previous pages, and this page's rows."""
    model = getattr(serializer_class, "model", None)  # a card_field: named after its model
    name = f"Paginated{(model or serializer_class).__name__}List"
    if name not in _PAGES:
        results = serializers.ListField(child=serializer_class()) if model else serializer_class(many=True)
        fields = {
            "count": serializers.IntegerField(help_text="Rows in all."),
            "next": serializers.URLField(allow_null=True, help_text="The next page; null on the last."),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page; null on the first."),
            "results": results,
        }
        _PAGES[name] = type(name, (serializers.Serializer,), {"__module__": __name__, **fields})
    return _PAGES[name]


@extend_schema_field(
    {
        "anyOf": [{"$ref": "#/components/schemas/SpaceExport"}, {"$ref": "#/components/schemas/UserExport"}],
        "description": "A space's export (GET .../export/), or a user's holding it: memory_engine/export_format.py, "
        "published as docs/export.schema.json. Checked whole by the restore, which says where a value is wrong.",
    }
)
class ExportField(serializers.DictField):
    """An export document, taken as JSON: the restore checks it (export_format.parse_space), so that a bad
    value is refused with where it is, as at every other door."""


@extend_schema_field(RetrievalDoc)
class RetrievalField(serializers.DictField):
    """A retrieval inside another answer (a chat reply, an inspection): documents.RetrievalDoc's payload,
    made from the engine's Retrieval when given one."""

    def to_representation(self, value):
        return value if isinstance(value, dict) else RetrievalDoc.of(value).payload()


@extend_schema_field(QuotedDoc)
class QuotedField(serializers.DictField):
    """A statement a reply quotes: documents.QuotedDoc's payload, made from recall's Statement."""

    def to_representation(self, value):
        return QuotedDoc.of(value).payload()


@extend_schema_field(AnswerDoc)
class AnswerField(serializers.DictField):
    """A reply made of the person's words, inside an inspection: documents.AnswerDoc's payload."""
