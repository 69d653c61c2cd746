"""Files brought to import are kept as their working copy (a line a turn), their conversations listed in a
table of their own, and an import goes on from a byte of it. Uploads kept before are deleted (a file is
kept a day; their files are removed by the workers' sweep as orphans), and the imports still reading one
are failed, saying to bring the file again."""

from django.db import migrations, models
from django.db.models import deletion
from django.utils import timezone


def forget_uploads(apps, schema_editor):
    ImportJob = apps.get_model("memory_engine", "ImportJob")
    ImportUpload = apps.get_model("memory_engine", "ImportUpload")
    ImportJob.objects.filter(upload__isnull=False, status__in=["queued", "running"]).update(
        status="failed",
        error="the file was kept in a form this version no longer reads; bring it again",
        finished_at=timezone.now(),
    )
    ImportUpload.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("memory_engine", "0020_imports_from_files")]

    operations = [
        migrations.RunPython(forget_uploads, migrations.RunPython.noop),
        migrations.RemoveField(model_name="importupload", name="listing"),
        migrations.AddField(
            model_name="importupload",
            name="kept_bytes",
            field=models.PositiveBigIntegerField(default=0, help_text="Bytes of its working copy."),
        ),
        migrations.AddField(
            model_name="importupload", name="conversation_count", field=models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(
            model_name="importupload",
            name="facts",
            field=models.PositiveIntegerField(default=0, help_text="Memories to store as knowledge."),
        ),
        migrations.AddField(model_name="importupload", name="turns", field=models.PositiveIntegerField(default=0)),
        migrations.AddField(
            model_name="importupload",
            name="cut",
            field=models.PositiveIntegerField(default=0, help_text="Turns with a message shortened to the limit."),
        ),
        migrations.AlterField(
            model_name="importupload",
            name="path",
            field=models.CharField(max_length=300, help_text="Its working copy's name, under MEMORYOS_IMPORT_DIR."),
        ),
        migrations.AlterField(
            model_name="importupload", name="size", field=models.PositiveBigIntegerField(help_text="Bytes brought.")
        ),
        migrations.AddField(
            model_name="importjob",
            name="offset",
            field=models.PositiveBigIntegerField(
                default=0, help_text="Where the next turn is in its upload's working copy: each chunk starts there."
            ),
        ),
        migrations.CreateModel(
            name="UploadConversation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("place", models.PositiveIntegerField(help_text="Its place in the file, from 0.")),
                ("key", models.CharField(help_text="Its id in the file, or its place there.", max_length=200)),
                ("title", models.CharField(blank=True, max_length=200)),
                ("created", models.DateTimeField(blank=True, null=True)),
                ("last", models.DateTimeField(blank=True, null=True)),
                ("messages", models.PositiveIntegerField()),
                ("turns", models.PositiveIntegerField()),
                ("start", models.PositiveBigIntegerField(help_text="Its turns' first byte in the working copy.")),
                ("end", models.PositiveBigIntegerField(help_text="The byte after its last turn.")),
                (
                    "upload",
                    models.ForeignKey(
                        on_delete=deletion.CASCADE, related_name="conversations", to="memory_engine.importupload"
                    ),
                ),
            ],
            options={"ordering": ["upload", "place"]},
        ),
        migrations.AddConstraint(
            model_name="uploadconversation",
            constraint=models.UniqueConstraint(fields=("upload", "place"), name="upload_conversation_place"),
        ),
        migrations.AddConstraint(
            model_name="uploadconversation",
            constraint=models.UniqueConstraint(fields=("upload", "key"), name="upload_conversation_key"),
        ),
    ]
