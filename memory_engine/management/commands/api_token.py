"""Make, list and revoke API tokens: `manage.py api_token create alice --name my-agent` prints the secret
once; `api_token list [alice]`; `api_token revoke <prefix>`. An id that a playground account holds is
refused, unless `--take-over`, which makes it the operator's and is recorded (models.OwnerChange)."""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from memory_engine.errors import MemoryInputError
from memory_engine.services.spaces import user_create, user_named, user_take_over
from memory_engine.services.tokens import active_tokens_starting, token_create, token_revoke, tokens


class Command(BaseCommand):
    help = "Manage the API tokens that let programs use one memory user's memory (REST API and MCP)."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="make a token for a memory user (created if new)")
        create.add_argument("user_id")
        create.add_argument("--name", default="", help="what the token is for")
        create.add_argument("--expires-in-days", type=float, help="the token stops working after this long")
        create.add_argument(
            "--take-over",
            action="store_true",
            help="if a playground account holds this id, make it the operator's (recorded); without it, refused",
        )
        listing = actions.add_parser("list", help="list tokens")
        listing.add_argument("user_id", nargs="?")
        revoke = actions.add_parser("revoke", help="stop a token working")
        revoke.add_argument("prefix", help="the first characters of the token, as `list` shows them")

    def handle(self, *args, action, **options):
        if action == "create":
            try:
                if options["take_over"] and user_named(options["user_id"]) is not None:
                    user_take_over(user_id=options["user_id"], by="manage.py api_token create --take-over")
                user = user_create(user_id=options["user_id"])
            except MemoryInputError as exc:
                raise CommandError(str(exc)) from None
            days = options["expires_in_days"]
            if days is not None and days <= 0:
                raise CommandError("--expires-in-days must be more than 0")
            expires_at = timezone.now() + timedelta(days=days) if days is not None else None
            token, secret = token_create(memory_user=user, name=options["name"], expires_at=expires_at)
            self.stderr.write(f"token {token.prefix}... for {user.external_id}; the secret is shown only now:")
            self.stdout.write(secret)
        elif action == "list":
            for token in tokens(user_id=options["user_id"]):
                if token.revoked_at:
                    state = f"revoked {token.revoked_at:%Y-%m-%d}"
                elif token.expires_at and token.expires_at <= timezone.now():
                    state = f"expired {token.expires_at:%Y-%m-%d}"
                else:
                    state = f"active to {token.expires_at:%Y-%m-%d}" if token.expires_at else "active"
                used = f"last used {token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never used"
                self.stdout.write(
                    f"{token.prefix}  {token.memory_user.external_id:20}  {state:18}  {used}  {token.name}"
                )
        else:
            matches = active_tokens_starting(options["prefix"])
            if len(matches) != 1:
                raise CommandError(f"{len(matches)} active tokens start with {options['prefix']!r}; give one exactly")
            token_revoke(token=matches[0])
            self.stdout.write(f"revoked {matches[0].prefix}")
