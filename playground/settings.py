"""Settings for the MemoryOS playground.

Every setting comes from the environment with a safe default; docs/settings.md and docs/deploying.md list them all.
The helpers below fail loudly on a malformed value instead of silently falling back.
"""

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
    "bench",  # benchmark and evaluation commands (bench/)
]

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
# web` run it); compressed copies are served to clients that accept them.
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "var" / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
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
# A worker runs at this niceness (0: as started): consolidation and imports share the machine with the
# web process, whose replies a person is waiting for (memory_engine/jobs/tasks.py).
MEMORYOS_WORKER_NICE = envint("MEMORYOS_WORKER_NICE", 10)
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
# The chat page's memory feed (GET .../events/): a stream lasts this long, then the page reconnects (and is
# told what changed meanwhile). A restart does not wait for it: an open stream ends when the server stops.
MEMORYOS_EVENTS_STREAM_SECONDS = envfloat("MEMORYOS_EVENTS_STREAM_SECONDS", 300.0)
# Memory feeds a web process keeps open, in all and for one account (a feed holds no database connection
# while it waits; each holds a thread or a task and a socket).
MEMORYOS_EVENTS_MAX_STREAMS = envint("MEMORYOS_EVENTS_MAX_STREAMS", 200)
MEMORYOS_EVENTS_MAX_STREAMS_PER_ACCOUNT = envint("MEMORYOS_EVENTS_MAX_STREAMS_PER_ACCOUNT", 8)
# A space's own LLM (models.SpaceLLM): the key that encrypts its API key at rest (one or more passphrases of
# 32+ characters, comma-separated, the first encrypting), and the hosts an owner may point a space at
# besides public HTTPS addresses (host or host:port, comma-separated; * for any).
MEMORYOS_SECRETS_KEY = envstr("MEMORYOS_SECRETS_KEY", "")
MEMORYOS_LLM_ALLOWED_HOSTS = envstr("MEMORYOS_LLM_ALLOWED_HOSTS", "")


def local_llm_servers(raw: str) -> list[tuple[str, str]]:
    """`Name=http://host:port/v1,...` as (name, base URL) pairs; fails loudly on a malformed entry."""
    servers = []
    for entry in (part.strip() for part in raw.split(",")):
        name, _, url = entry.partition("=")
        if not entry:
            continue
        if not name.strip() or not url.strip().startswith(("http://", "https://")):
            raise ImproperlyConfigured(f"MEMORYOS_LLM_LOCAL_SERVERS: {entry!r} is not Name=http://host:port/v1")
        servers.append((name.strip(), url.strip().rstrip("/")))
    return servers


# LLM servers people run on their own machine, offered in a space's model form when they answer, and
# allowed as its endpoint like MEMORYOS_LLM_ALLOWED_HOSTS. In development (DEBUG) the usual ports of Ollama,
# LM Studio and llama.cpp's server; in production none unless listed.
LOCAL_LLM_SERVERS_IN_DEVELOPMENT = (
    "Ollama=http://127.0.0.1:11434/v1,LM Studio=http://127.0.0.1:1234/v1,llama.cpp=http://127.0.0.1:8080/v1"
)
MEMORYOS_LLM_LOCAL_SERVERS = local_llm_servers(
    envstr("MEMORYOS_LLM_LOCAL_SERVERS", LOCAL_LLM_SERVERS_IN_DEVELOPMENT if DEBUG else "")
)
MEMORYOS_API_MAX_BODY_BYTES = envint("MEMORYOS_API_MAX_BODY_BYTES", 256 * 1024)
# A file's body must keep arriving: a client that sends nothing this long is cut off (interfaces/asgi.py).
MEMORYOS_UPLOAD_IDLE_SECONDS = envfloat("MEMORYOS_UPLOAD_IDLE_SECONDS", 60.0)
# A space's export restored (POST .../restore/, or an experiment made from one): a LoCoMo conversation's
# is 0.2-0.4 MB.
MEMORYOS_API_MAX_EXPORT_BYTES = envint("MEMORYOS_API_MAX_EXPORT_BYTES", 8 * 1024 * 1024)
# Django's own cap on a body it reads (2.5 MiB by default) would come first: the API's views check theirs
# (the two above) before reading, so Django's is the larger of them.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(MEMORYOS_API_MAX_BODY_BYTES, MEMORYOS_API_MAX_EXPORT_BYTES)
# Sign-up (the operator may close it; accounts made per client address an hour) and sign-in attempts (the
# playground's page and the admin's): see memory_engine/interfaces/signin.py.
MEMORYOS_SIGNUP_OPEN = envbool("MEMORYOS_SIGNUP_OPEN", True)
MEMORYOS_SIGNUPS_PER_ADDRESS = envint("MEMORYOS_SIGNUPS_PER_ADDRESS", 5)
MEMORYOS_SIGNIN_FREE_FAILURES = envint("MEMORYOS_SIGNIN_FREE_FAILURES", 5)
MEMORYOS_SIGNIN_FREE_FAILURES_PER_ADDRESS = envint("MEMORYOS_SIGNIN_FREE_FAILURES_PER_ADDRESS", 50)
MEMORYOS_SIGNIN_FIRST_DELAY_SECONDS = envfloat("MEMORYOS_SIGNIN_FIRST_DELAY_SECONDS", 2.0)
MEMORYOS_SIGNIN_MAX_DELAY_SECONDS = envfloat("MEMORYOS_SIGNIN_MAX_DELAY_SECONDS", 900.0)
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
MCP_USER_ID = envstr("MEMORYOS_MCP_USER_ID", "")
MCP_ASSISTANT_ID = envstr("MEMORYOS_MCP_ASSISTANT_ID", "mcp")

# --- Logging ----------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "memory_engine": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
        # A server error's traceback, with DEBUG off too (Django's own console handler needs DEBUG).
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}

# --- MemoryOS engine --------------------------------------------------------------------------
# Defaults are the paper's values. Capacities and heat constants are the defaults of a new memory
# space; each space keeps its own copy, which the playground lets you change.

# Load the embedder and the offline LLM in the background when a web server process starts (its ASGI
# or WSGI entry point; scripts/play and compose set it), so that the first reply does not wait for them.
MEMORYOS_WARM_UP = envbool("MEMORYOS_WARM_UP", False)

# The memory engine's settings (tiers, heat, retrieval, consolidation, files, the LLM, chat sampling), typed,
# each with its variable, default and meaning: memory_engine/config.py.
MEMORYOS = from_environment()
