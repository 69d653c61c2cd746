import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
django.setup(set_prefix=False)

# Django's handler, with what a request may send decided before its body is read.
from memory_engine.interfaces.asgi import GatedASGIHandler  # noqa: E402 (needs the settings set up above)

application = GatedASGIHandler()

from memory_engine import housekeeping  # noqa: E402 (needs the settings set up above)
from memory_engine.warm_up import warm_up_if_asked  # noqa: E402

warm_up_if_asked()
housekeeping.start()
