import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
application = get_asgi_application()

from memory_engine import housekeeping  # noqa: E402 (needs the settings set up above)
from memory_engine.warm_up import warm_up_if_asked  # noqa: E402

warm_up_if_asked()
housekeeping.start()
