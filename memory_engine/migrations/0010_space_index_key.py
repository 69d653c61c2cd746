import uuid

from django.db import migrations, models


def give_each_space_a_key(apps, schema_editor):
    MemorySpace = apps.get_model("memory_engine", "MemorySpace")
    for space in MemorySpace.objects.only("pk"):
        MemorySpace.objects.filter(pk=space.pk).update(index_key=uuid.uuid4())


class Migration(migrations.Migration):
    """A random key per space, which its index files carry; added empty, filled one by one (a default
    would give every existing space the same key), then made unique and required."""

    dependencies = [
        ("memory_engine", "0009_imports_stored_once_and_never_stuck"),
    ]

    operations = [
        migrations.AddField(model_name="memoryspace", name="index_key", field=models.UUIDField(null=True)),
        migrations.RunPython(give_each_space_a_key, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="memoryspace",
            name="index_key",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
    ]
