"""Train the reranker of engine/reranker.py on the project's chat sets (bench/reranker.py) and write it, as an
int8 ONNX graph with the record of how it was made, to a folder MEMORYOS_RERANKER can name.

    manage.py train_reranker --out var/reranker                        every chat set
    manage.py train_reranker --out var/r1 --leave-out chat_holdout10   without a set, to measure on it

Deterministic for a seed on one thread (--threads 1); about 20 minutes on one core of the 2-core machine.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import reranker as training


class Command(BaseCommand):
    help = "Train the reranker on the chat sets and write it as int8 ONNX."

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, help="the folder to write (model.onnx, reranker.json, ...)")
        parser.add_argument("--leave-out", nargs="*", default=[], help="chat sets not to train on, by name")
        parser.add_argument("--data", default=str(training.DATA), help="the folder of the chat sets (chat_*.json)")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--epochs", type=int, default=2)
        parser.add_argument("--threads", type=int, default=1, help="torch threads (1: reproducible)")

    def handle(self, *args, out, leave_out, data, seed, epochs, threads, **options):
        sets = training.chat_sets(Path(data))
        if not sets:
            raise CommandError(f"no chat sets (chat_*.json) in {data}")
        known = {path.stem for path in sets}
        unknown = sorted({name.removesuffix(".json") for name in leave_out} - known)
        if unknown:
            raise CommandError(f"no such chat set: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        left_out = {name.removesuffix(".json") for name in leave_out}
        kept = [path for path in sets if path.stem not in left_out]
        if not kept:
            raise CommandError("every chat set is left out: nothing to train on")
        if Path(out).exists() and not Path(out).is_dir():
            raise CommandError(f"--out {out} is a file, not a folder")  # said before the training, not after
        trained = training.train(kept, seed=seed, epochs=epochs, threads=threads, log=self.stdout.write)
        trained.record["command"] = (
            f"manage.py train_reranker --out {out} --seed {seed} --epochs {epochs} --threads {threads}"
            + (f" --data {data}" if Path(data) != training.DATA else "")
            + (f" --leave-out {' '.join(sorted(left_out))}" if left_out else "")
        )
        folder = training.export(trained, Path(out))
        self.stdout.write(f"written: {folder} ({trained.record['training seconds']} s of training)")
