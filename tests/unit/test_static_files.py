"""`collectstatic` compresses a static file once, and again only when the file changes
(playground/static_files.py): every web process start runs it."""

import os

import brotli
import pytest
from django.core.management import call_command


@pytest.fixture
def collect(settings, tmp_path, capsys):
    """collectstatic over one folder of sources into STATIC_ROOT; returns what it printed."""
    sources = tmp_path / "sources"
    sources.mkdir()
    settings.STATICFILES_DIRS = [sources]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATIC_ROOT = tmp_path / "root"

    def run() -> str:
        capsys.readouterr()
        call_command("collectstatic", interactive=False, verbosity=1)
        return capsys.readouterr().out

    run.sources = sources
    run.root = settings.STATIC_ROOT
    return run


def test_a_file_is_compressed_once_and_again_when_it_changes(collect):
    script = collect.sources / "app.js"
    script.write_text("let memory = 'kept';\n" * 400)
    assert "1 static file copied" in collect() and (collect.root / "app.js.gz").is_file()

    again = collect()
    assert "1 unmodified" in again
    assert "post-processed" not in again  # whitenoise alone compressed every file again: "2 post-processed"

    script.write_text("let memory = 'changed';\n" * 400)
    later = script.stat().st_mtime + 10  # a later time than the copy's, however coarse the file system's clock
    os.utime(script, (later, later))
    assert "2 post-processed" in collect()
    assert brotli.decompress((collect.root / "app.js.br").read_bytes()).decode() == script.read_text()
