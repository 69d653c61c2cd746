"""Settings for the MemoryOS playground.

Every setting comes from the environment with a safe default; docs/settings.md and docs/deploying.md list them all.
The helpers below fail loudly on a malformed value instead of silently falling back.
"""

import importlib.util
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from memory_engine.config import envbool, envchoice, envfloat, envint, envstr, from_environment
from playground.databases import database_from_url

BASE_DIR = Path(__file__).resolve().parent.parent


# --- Core -------------------------------------------------------------------------------------

# DEBUG is off unless the development commands (scripts/play, scripts/test) turn it on. Without DEBUG
# the secret key must come from the environment: a missing key, or one of the known placeholders, stops
# the process instead of signing sessions with a key anyone can read here.
DEBUG = envbool("DEBUG", False)
DEVELOPMENT_SECRET_KEY = "dev-only-insecure-key-change-me"
KNOWN_SECRET_KEYS = {DEVELOPMENT_SECRET_KEY, "change-me-in-production", "change-me", "secret"}
SECRET_KEY = envstr("SECRET_KEY", "") or (DEVELOPMENT_SECRET_KEY if DEBUG else "")
if not DEBUG and (not SECRET_KEY or SECRET_KEY in KNOWN_SECRET_KEYS):
    raise ImproperlyConfigured(
        "SECRET_KEY must be set to a long random value when DEBUG is off (for development, DEBUG=true); "
        'make one with: python -c "import secrets; print(secrets.token_urlsafe(50))"'
    )
# Every MEMORYOS_* setting the code reads (the engine's, the doors', the processes'), typed, each with its
# variable, default and meaning: memory_engine/config.py (read as memory_settings()).
MEMORYOS = from_environment(debug=DEBUG)
ALLOWED_HOSTS = [h for h in envstr("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]

# --- Behind a TLS proxy (MEMORYOS_HTTPS=true) ----------------------------------------------------
# The site is served over HTTPS by a proxy that terminates TLS and sets X-Forwarded-Proto: Django then
# redirects plain HTTP, marks its cookies secure and sends HSTS. Each part can be set on its own.
HTTPS = envbool("MEMORYOS_HTTPS", False)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # the docs page's scripts, served from here: no CDN
    "memory_engine",
]
# The benchmark and evaluation commands (bench/) where the checkout holds them; the production image does not
# (.dockerignore), nor their packages (requirements-bench.txt).
if importlib.util.find_spec("bench") is not None:
    INSTALLED_APPS.append("bench")

MIDDLEWARE = [
    "memory_engine.interfaces.health.HealthCheckMiddleware",  # /healthz, before host checks and redirects
    "memory_engine.admission.AdmissionMiddleware",  # at most WEB_REQUESTS_AT_ONCE requests at work
    "django.middleware.security.SecurityMiddleware",
    "memory_engine.interfaces.headers.SecurityHeadersMiddleware",  # Content-Security-Policy
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files, with DEBUG off too (STATIC_ROOT)
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Requests a web process works on at once (memory_engine/admission.py; 0: no limit), and how long one
# waits for its turn before it is answered 503.
WEB_REQUESTS_AT_ONCE = envint("WEB_REQUESTS_AT_ONCE", 3)
WEB_QUEUE_TIMEOUT_SECONDS = envfloat("WEB_QUEUE_TIMEOUT_SECONDS", 60.0)
# A request holding its place longer than this is stuck (work in a request is bounded: a file's check stops
# at MEMORYOS_UPLOAD_CHECK_SECONDS): /healthz answers 503, and under gunicorn the process is replaced.
WEB_STUCK_SECONDS = envfloat("WEB_STUCK_SECONDS", 600.0)
# What a connection may hold of a web or MCP process (memory_engine/interfaces/connections.py): its request
# line and headers within WEB_HEADER_TIMEOUT_SECONDS, else it is closed; at most WEB_MAX_CONNECTIONS open (the
# one idle longest makes room for a new one); at most WEB_MAX_REQUESTS requests in progress (one more: 503).
WEB_HEADER_TIMEOUT_SECONDS = envfloat("WEB_HEADER_TIMEOUT_SECONDS", 10.0)
WEB_MAX_CONNECTIONS = envint("WEB_MAX_CONNECTIONS", 1000)
WEB_MAX_REQUESTS = envint("WEB_MAX_REQUESTS", 1000)
# A body (but a file brought to import, which streams: MEMORYOS_UPLOAD_IDLE_SECONDS) must arrive at this many
# bytes a second on average, after WEB_HEADER_TIMEOUT_SECONDS of grace (interfaces/asgi.py), else it is cut off.
WEB_SLOWEST_BODY_BYTES_PER_SECOND = envint("WEB_SLOWEST_BODY_BYTES_PER_SECOND", 8192)

ROOT_URLCONF = "playground.urls"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"
WSGI_APPLICATION = "playground.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "memory_engine.interfaces.signin.signup_open",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------------
# SQLite in var/ is the embedded default; PostgreSQL via postgres://user:pass@host:port/name.

DATABASES = {
    "default": database_from_url(
        envstr("DATABASE_URL", "sqlite:///var/db.sqlite3"),
        sqlite_synchronous=envchoice("SQLITE_SYNCHRONOUS", "normal", ("normal", "full")),
        pool_size=envint("DATABASE_POOL_SIZE", 10),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Static files, i18n -----------------------------------------------------------------------

# Served by whitenoise from STATIC_ROOT, which `collectstatic` fills (the image build and `scripts/serve
# web` run it); compressed copies, written once a file (playground/static_files.py), are served to
# clients that accept them.
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "var" / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "playground.static_files.CompressedOnceStorage"},
}
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Celery -----------------------------------------------------------------------------------

CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
# Tasks are idempotent (they read pending work from the database), so a message is acknowledged only
# after the task ran, and a task whose worker died is delivered again.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Two queues, which every worker takes from by turns: consolidation after a chat turn ("celery") and bulk
# work ("bulk": imports and replays, in chunks; restores and comparisons), so one account's import never
# holds up another's turn.
# A worker started with -Q takes only the queues named.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery"), Queue("bulk"))
CELERY_TASK_ROUTES = {
    "memory_engine.run_import": {"queue": "bulk"},
    "memory_engine.run_background_job": {"queue": "bulk"},
}
CELERY_BROKER_CONNECTION_TIMEOUT = envfloat("CELERY_BROKER_CONNECTION_TIMEOUT", 2.0)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # An unacknowledged task comes back after this long (a worker killed mid-task); the sweep
    # usually finds its work much sooner.
    "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 3600),
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}
# Celery's Django fix-up closes every database connection before and after each task and, in a prefork
# worker, the connection pool with them: each task then opened a new PostgreSQL backend. With this set it
# closes them only every this many tasks; playground/celery.py returns each task's connection to the
# pool instead, as a web request does.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_SOFT_TIME_LIMIT = envint("CELERY_TASK_SOFT_TIME_LIMIT", 1500)
CELERY_TASK_TIME_LIMIT = envint("CELERY_TASK_TIME_LIMIT", 1800)
CELERY_BEAT_SCHEDULE = {
    "sweep-pending-consolidation": {
        "task": "memory_engine.sweep_pending",
        "schedule": envfloat("MEMORYOS_SWEEP_SECONDS", 60.0),
    },
}

# --- REST API and MCP server --------------------------------------------------------------------
# Programs authenticate with an API token (one memory user each); the playground's pages with the
# signed-in session. Rate limits count per token or account in the cache: set CACHE_URL (e.g.
# redis://127.0.0.1:6379/1) when several processes serve the API, so they share the counts.

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memory_engine.interfaces.api.tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "memory_engine.interfaces.api.openapi.MemoryAutoSchema",
    "DEFAULT_THROTTLE_RATES": {
        "api": envstr("MEMORYOS_API_RATE", "600/min"),
        "chat": envstr("MEMORYOS_API_CHAT_RATE", "30/min"),
    },
    "EXCEPTION_HANDLER": "memory_engine.interfaces.api.errors.exception_handler",
}
# Django's own cap on a body it reads (2.5 MiB by default) would come first: the API's views check theirs
# (the two above) before reading, so Django's is the larger of them.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(MEMORYOS["API_MAX_BODY_BYTES"], MEMORYOS["API_MAX_EXPORT_BYTES"])
SPECTACULAR_SETTINGS = {
    "TITLE": "MemoryOS Playground API",
    "DESCRIPTION": "Three-tier memory for LLM assistants: turns, retrieval, profile and knowledge with history.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "EntryStatusEnum": "memory_engine.models.LongTermEntry.Status",
        "SessionStatusEnum": "memory_engine.models.MidTermSession.Status",
        "JobStatusEnum": "memory_engine.models.JobStatus",
        "StatementMarkKindEnum": "memory_engine.models.StatementMark.Kind",
        # the same sets in the export document's schema (memory_engine/export_format.py), which has no labels
        "ExportEntryStatusEnum": "memory_engine.export_format.ENTRY_STATUSES",
        "ExportSessionStatusEnum": "memory_engine.export_format.SESSION_STATUSES",
        "ExportEntryKindEnum": "memory_engine.export_format.ENTRY_KINDS",
        "ExportVersionCauseEnum": "memory_engine.export_format.VERSION_CAUSES",
        "ExportHeatCauseEnum": "memory_engine.export_format.HEAT_CAUSES",
    },
}
CACHE_URL = envstr("CACHE_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# --- Logging ----------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    # One handler, the root's: a Celery worker puts its own there instead (worker_hijack_root_logger), so
    # each line is written once (with a handler of its own as well, memory_engine's were written twice).
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "memory_engine": {"level": envstr("LOG_LEVEL", "INFO")},
        # The development server's line a request: only the refused and the failed (4xx, 5xx).
        "django.server": {"level": "WARNING"},
        # A server error's traceback, with DEBUG off too (Django's own console handler needs DEBUG).
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}
