"""The static files' storage: whitenoise's compressed copies, written once.

`scripts/serve web` runs `collectstatic` at every start. Django copies only the files that changed, but
whitenoise compressed all 550 again (gzip and Brotli): 25 s of CPU before a web process served anything,
at every start of a container or a test's web server. A file whose compressed copy was written from it as
it is now is left alone: whitenoise stamps a copy with its file's modification time, and a file copied
again by `collectstatic` gets a new one.
"""

import os

from whitenoise.compress import Compressor
from whitenoise.storage import CompressedStaticFilesStorage


class CompressedOnceStorage(CompressedStaticFilesStorage):
    def create_compressor(self, **kwargs) -> Compressor:
        return CompressorOfChangedFiles(**kwargs)


class CompressorOfChangedFiles(Compressor):
    def compress(self, path: str) -> list[str]:
        if self.compressed_already(path):
            return []
        return super().compress(path)

    def compressed_already(self, path: str) -> bool:
        """Brotli is tried first, and gzip only where Brotli compresses (whitenoise's Compressor.compress):
        the first copy it would write tells whether this file was compressed as it is now."""
        first = ".br" if self.use_brotli else ".gz"
        try:
            return os.stat(path + first).st_mtime == os.stat(path).st_mtime
        except FileNotFoundError:
            return False
