"""Memory users: listed, made, read, deleted, exported whole."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from memory_engine.errors import MemoryInputError
from memory_engine.export_format import UserExport
from memory_engine.interfaces.api.access import user_for, visible_users
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.serializers.users import MemoryUserIn, MemoryUserOut
from memory_engine.interfaces.api.views.base import PAGING, MemoryApiView
from memory_engine.services import spaces
from memory_engine.services.export import user_export
from memory_engine.services.spaces import (
    owned_user_create,
    user_memory_delete,
)

# --- Memory users ----------------------------------------------------------------------------------


class UsersView(MemoryApiView):
    @extend_schema(parameters=PAGING, responses=paginated(MemoryUserOut), summary="List the memory users you may see")
    def get(self, request):
        return self.page_of(spaces.with_spaces(visible_users(request)).order_by("external_id"), MemoryUserOut)

    @extend_schema(request=MemoryUserIn, responses={201: MemoryUserOut}, summary="Create a memory user")
    def post(self, request):
        if getattr(request.user, "token", None) is not None:
            raise PermissionDenied("a token acts for its own memory user only; sign in to create users")
        data = self.valid(MemoryUserIn)
        try:
            user = owned_user_create(
                owner=request.user, user_id=data["user_id"], display_name=data["display_name"], exist_ok=False
            )
        except MemoryInputError as exc:  # not a valid id, or taken
            raise ValidationError({"user_id": [str(exc)]}) from None
        return Response(MemoryUserOut(user).data, status=status.HTTP_201_CREATED)


class UserView(MemoryApiView):
    @extend_schema(responses=MemoryUserOut, summary="A memory user and the assistants it talks to")
    def get(self, request, user_id):
        user = user_for(request, user_id)
        return Response(MemoryUserOut(spaces.with_spaces(spaces.visible_users(memory_user_id=user.pk)).get()).data)

    @extend_schema(responses={204: None}, summary="Delete all the memory of a user, and the user")
    def delete(self, request, user_id):
        user_memory_delete(user=user_for(request, user_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserExportView(MemoryApiView):
    @extend_schema(responses={200: UserExport}, summary="Everything a user's memory holds, as JSON")
    def get(self, request, user_id):
        return Response(user_export(user=user_for(request, user_id)))
