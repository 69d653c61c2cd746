"""How the OpenAPI document is made (settings.REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS is MemoryAutoSchema).

A list view answers a page (views.MemoryApiView.page_of, serializers.paginated): its operation is named a
list, as drf-spectacular names a list of rows.

The export document's schema and the doors' documents (a retrieval, what a reply used): each is defined
once, as pydantic models (memory_engine/export_format.py, memory_engine/documents.py), whose JSON Schema is
2020-12; the API's OpenAPI document is 3.0, where "may be null" is `nullable: true`, not a union with
{"type": "null"}. These extensions give drf-spectacular the models' schema in that dialect (its own pydantic
extension passes the 2020-12 one through unchanged)."""

from drf_spectacular.drainage import set_override
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent

NULL = {"type": "null"}


def openapi30(node):
    """A JSON Schema fragment with each union with null written as OpenAPI 3.0's `nullable`. Pure."""
    if isinstance(node, list):
        return [openapi30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: openapi30(value) for key, value in node.items()}
    options = node.get("anyOf")
    if options and NULL in options:
        rest = [option for option in options if option != NULL]
        del node["anyOf"]
        if len(rest) == 1 and "$ref" not in rest[0]:
            node = {**rest[0], **node}
        else:
            node["anyOf" if len(rest) > 1 else "allOf"] = rest
        node["nullable"] = True
    return node


class ExportDocumentSchema(OpenApiSerializerExtension):
    target_class = "memory_engine.export_format.ExportPart"
    match_subclasses = True
    priority = 1  # over drf-spectacular's own pydantic extension

    def get_name(self, auto_schema, direction):
        # A model is registered by its class as a response and by its name inside another's $defs (UserExport
        # holds SpaceExport): the same schema, which drf-spectacular would report as a collision.
        set_override(self.target, "suppress_collision_warning", True)
        return self.target.__name__

    def map_serializer(self, auto_schema, direction):
        schema = self.target.model_json_schema(ref_template="#/components/schemas/{model}", mode="serialization")
        for name, part in schema.pop("$defs", {}).items():
            component = ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=openapi30(part))
            auto_schema.registry.register_on_missing(component)
        return openapi30(schema)


class DocumentSchema(ExportDocumentSchema):
    """The doors' documents (memory_engine/documents.py), mapped as the export's models are."""

    target_class = "memory_engine.documents.Document"


class MemoryAutoSchema(AutoSchema):
    def get_operation_id(self):
        operation_id = super().get_operation_id()
        response = self.get_response_serializers()
        page = getattr(response, "__name__", "").startswith("Paginated")
        if self.method == "GET" and page and operation_id.endswith("_retrieve"):
            return operation_id.removesuffix("_retrieve") + "_list"
        return operation_id
