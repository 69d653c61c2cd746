import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
application = get_wsgi_application()

from memory_engine.warm_up import warm_up_if_asked  # noqa: E402 (needs the settings set up above)

warm_up_if_asked()
