"""Long-term memory: profile entries and knowledge, each listed, added, edited, reverted, deleted, erased, with
its history."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from memory_engine.documents import EntryCard, ErasedDoc
from memory_engine.interfaces.api.access import entry_for, space_for
from memory_engine.interfaces.api.serializers.entries import (
    EntryEditIn,
    EntryField,
    KnowledgeIn,
    ProfileIn,
    ProfileOut,
    RevertIn,
    VersionField,
)
from memory_engine.interfaces.api.serializers.fields import paginated
from memory_engine.interfaces.api.serializers.turns import EntryEraseIn, ErasePreviewOut
from memory_engine.interfaces.api.throttling import (
    CallerRateThrottle,
    HeavyRequestThrottle,
)
from memory_engine.interfaces.api.views.base import KNOWLEDGE, PAGING, PROFILE, MemoryApiView
from memory_engine.models import (
    LongTermEntry,
)
from memory_engine.services import curation
from memory_engine.services.curation import entry_card, entry_cards, version_cards

# --- Long-term memory: profile and knowledge ----------------------------------------------------------


ENTRY_STATUS = OpenApiParameter(
    "status", str, enum=[*LongTermEntry.Status.values, "all"], description="Default: active."
)


class ProfileView(MemoryApiView):
    @extend_schema(
        responses=ProfileOut,
        summary="The user profile: attribute -> value, and its entries",
        operation_id="v1_users_spaces_profile_list",
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        entries = list(curation.entries(space, kinds=PROFILE).order_by("key"))
        profile = {entry.key: entry.value for entry in entries}
        return Response({"profile": profile, "entries": [entry_card(e) for e in entries]})

    @extend_schema(request=ProfileIn, responses={201: EntryCard}, summary="Set a profile attribute")
    def post(self, request, user_id, assistant_id):
        data = self.valid(ProfileIn)
        space = space_for(request, user_id, assistant_id, create=True)
        entry = curation.profile_entry_add(
            space=space, attribute=data["key"], value=data["value"], actor=self.actor(), cause=self.cause()
        )
        return Response(entry_card(entry), status=status.HTTP_201_CREATED)


KNOWLEDGE_KIND = OpenApiParameter("kind", str, enum=[k.value for k in KNOWLEDGE], description="Default: both.")


class KnowledgeView(MemoryApiView):
    @extend_schema(
        parameters=[*PAGING, KNOWLEDGE_KIND, ENTRY_STATUS], responses=paginated(EntryField), summary="Knowledge"
    )
    def get(self, request, user_id, assistant_id):
        space = space_for(request, user_id, assistant_id)
        kind = request.query_params.get("kind")
        if kind and kind not in KNOWLEDGE:
            raise ValidationError({"kind": ["user_knowledge or assistant_knowledge"]})
        wanted = request.query_params.get("status", LongTermEntry.Status.ACTIVE)
        entries = curation.entries(space, kinds=(kind,) if kind else KNOWLEDGE, status=wanted)
        return self.page_of(entries, cards=entry_cards)

    @extend_schema(request=KnowledgeIn, responses={201: EntryCard}, summary="Add a fact")
    def post(self, request, user_id, assistant_id):
        data = self.valid(KnowledgeIn)
        space = space_for(request, user_id, assistant_id, create=True)
        entry = curation.knowledge_entry_add(
            space=space,
            kind=data["kind"],
            topic=data["key"],
            fact=data["value"],
            actor=self.actor(),
            cause=self.cause(),
        )
        return Response(entry_card(entry), status=status.HTTP_201_CREATED)


class EntryView(MemoryApiView):
    """One profile entry (kinds = PROFILE) or knowledge entry (kinds = KNOWLEDGE)."""

    kinds: tuple[str, ...] = PROFILE

    def entry(self, user_id, assistant_id, entry_id):
        return entry_for(space_for(self.request, user_id, assistant_id), entry_id, self.kinds)

    @extend_schema(responses=EntryCard, summary="One entry")
    def get(self, request, user_id, assistant_id, entry_id):
        return Response(entry_card(self.entry(user_id, assistant_id, entry_id)))

    @extend_schema(request=EntryEditIn, responses=EntryCard, summary="Change an entry's value (recorded)")
    def patch(self, request, user_id, assistant_id, entry_id):
        data = self.valid(EntryEditIn)
        entry = self.entry(user_id, assistant_id, entry_id)
        entry = curation.entry_edit(entry=entry, value=data["value"], actor=self.actor(), cause=self.cause())
        return Response(entry_card(entry))

    @extend_schema(
        responses={200: EntryCard},  # a DELETE's single class would be documented as 204 with no body
        summary="Forget an entry: it is deleted (its history stays), and the statements it was drawn from are held "
        "out of the turns; the answer is the entry as it is now, with what it covered (`covers`)",
    )
    def delete(self, request, user_id, assistant_id, entry_id):
        entry = self.entry(user_id, assistant_id, entry_id)
        return Response(entry_card(curation.entry_delete(entry=entry, actor=self.actor(), cause=self.cause())))


class KnowledgeEntryView(EntryView):
    kinds = KNOWLEDGE


class EntryRevertView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE

    @extend_schema(
        request=RevertIn,
        responses=EntryCard,
        summary="Give an entry a value it had again, active, with the statements it was drawn from (undo a delete)",
    )
    def post(self, request, user_id, assistant_id, entry_id):
        data = self.valid(RevertIn)
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        version = curation.version_to_revert_to(entry, data.get("version_id"))
        if version is None:
            raise Http404("no version of this entry with a value to revert to")
        entry = curation.entry_revert(entry=entry, version=version, actor=self.actor(), cause=self.cause())
        return Response(entry_card(entry))


class KnowledgeRevertView(EntryRevertView):
    kinds = KNOWLEDGE


class EntryEraseView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE
    throttle_classes = [CallerRateThrottle, HeavyRequestThrottle]  # it rewrites turns and vacuums tables

    @extend_schema(
        request=EntryEraseIn,
        responses={200: ErasedDoc},
        summary="Erase an entry, its history and the statements it was drawn from, for good: irreversible (with "
        "dry_run: what it would take, as ErasePreviewOut)",
    )
    def post(self, request, user_id, assistant_id, entry_id):
        data = self.valid(EntryEraseIn)
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        if data["dry_run"]:
            return Response(ErasePreviewOut(curation.erase_preview(entry=entry)).data)
        return Response(curation.entry_erase(entry=entry))


class KnowledgeEraseView(EntryEraseView):
    kinds = KNOWLEDGE


class EntryHistoryView(MemoryApiView):
    kinds: tuple[str, ...] = PROFILE

    @extend_schema(
        parameters=PAGING, responses=paginated(VersionField), summary="Every version of an entry, oldest first"
    )
    def get(self, request, user_id, assistant_id, entry_id):
        entry = entry_for(space_for(request, user_id, assistant_id), entry_id, self.kinds)
        return self.page_of(curation.versions(entry), cards=version_cards)


class KnowledgeHistoryView(EntryHistoryView):
    kinds = KNOWLEDGE
