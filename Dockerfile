# rlconform: the dashboard, REST API and runner in one container.
#   docker build -t rlconform . && docker run -p 8080:8080 -v rlconform-data:/data rlconform
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/rlconform
COPY . .
# Editable, so templates/, static/ and SPEC.md are found beside the code.
RUN pip install -e ".[postgres]" \
    && useradd --create-home --uid 10001 rlconform \
    && mkdir -p /data && chown rlconform /data

USER rlconform
ENV RLCONFORM_DATABASE_URL=sqlite:////data/rlconform.db \
    RLCONFORM_PORT=8080
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('RLCONFORM_PORT', '8080'), timeout=4)"]
CMD ["rlconform", "serve", "--host", "0.0.0.0"]
