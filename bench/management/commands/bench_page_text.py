"""What a page's vector should hold of its reply, measured on the LoCoMo dev split (bench/page_text.py).

manage.py bench_page_text
"""

from django.core.management.base import BaseCommand

from bench.page_text import measure, report


class Command(BaseCommand):
    help = "Dense evidence recall of pages embedded with the reply, without it, and with its start only."

    def add_arguments(self, parser):
        parser.add_argument("--conversations", type=int, default=None, help="the first N conversations only")

    def handle(self, *args, conversations, **options):
        self.stdout.write(report(measure(conversations=conversations)))
