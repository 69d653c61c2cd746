"""Hostile accounts' worst files and a client's silent connections beside another account's chat, on the
production stack (see bench/hostile.py).

    manage.py bench_hostile                                    # 120 s alone, 120 s beside the attack
    manage.py bench_hostile --seconds 30 --scale 0.1 --json var/bench-hostile/figures.json

Prints the victim's reply latency and consolidation delay alone and beside the attack, each process's peak
memory, and what each attack got.
"""

import argparse
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import hostile
from bench.hostile import HostileOptions


class Command(BaseCommand):
    help = "One account sends the worst files while another chats: reply latency, consolidation delay, memory."

    def add_arguments(self, parser):
        defaults = HostileOptions()
        parser.add_argument("--seconds", type=int, default=defaults.seconds, help="each phase's length")
        parser.add_argument("--think", type=float, default=defaults.think_seconds, help="the victim's pause")
        parser.add_argument("--web-workers", type=int, default=defaults.web_workers)
        parser.add_argument("--scale", type=float, default=1.0, help="the attack's files this share of their size")
        parser.add_argument("--warmup-seconds", type=int, default=defaults.warmup_seconds)
        parser.add_argument("--work-dir", default=defaults.work_dir)
        parser.add_argument("--postgres-url", default=defaults.postgres_url)
        parser.add_argument(
            "--attacks",
            nargs="+",
            choices=hostile.ATTACKS,
            default=list(hostile.ATTACKS),
            help="the parts of the attack to run (imports alone: another account's import beside the chat)",
        )
        parser.add_argument(
            "--idle-connections", type=int, default=defaults.idle_connections, help="silent connections held (idle)"
        )
        parser.add_argument("--filers", type=int, default=defaults.filers, help="accounts bringing files (checks)")
        parser.add_argument("--json", dest="json_path", default=None, help="also write every figure to this file")
        # Internal: the steps run in a child process on the benchmark database.
        parser.add_argument("--role", choices=("prepare", "delays"), default=None, help=argparse.SUPPRESS)
        parser.add_argument("--options-json", default=None, help=argparse.SUPPRESS)
        parser.add_argument("--result", default=None, help=argparse.SUPPRESS)

    def handle(self, *args, role, options_json, result, json_path, **opts):
        if role is not None:
            given = json.loads(options_json)
            extra = {key: given.pop(key) for key in ("user", "windows") if key in given}
            options = HostileOptions(**given)
            if role == "prepare":
                found = hostile.prepare(options, self.stderr.write)
            else:
                found = hostile.consolidation_delays(extra["user"], extra["windows"])
            Path(result).write_text(json.dumps(found))
            return
        if "bench" not in opts["postgres_url"].rsplit("/", 1)[-1]:
            raise CommandError("--postgres-url must name a database whose name contains 'bench' (it is dropped)")
        options = HostileOptions(
            seconds=opts["seconds"],
            think_seconds=opts["think"],
            web_workers=opts["web_workers"],
            warmup_seconds=opts["warmup_seconds"],
            work_dir=str(Path(opts["work_dir"]).resolve()),
            postgres_url=opts["postgres_url"],
            attacks=tuple(opts["attacks"]),
            idle_connections=opts["idle_connections"],
            filers=opts["filers"],
        )
        if not 0 < opts["scale"] <= 1:
            raise CommandError("--scale is a share of the files' size, above 0 and at most 1")
        options = options.scaled(opts["scale"])
        try:
            results = hostile.run_benchmark(options, self.stderr.write)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(hostile.render_report(results))
        if json_path:
            Path(json_path).write_text(json.dumps(results, indent=2))
            self.stdout.write(f"figures written to {json_path}")
