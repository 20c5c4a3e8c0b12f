# rlconform: the dashboard, REST API and runner in one image (compose runs both of its services from it).
#   docker build -t rlconform . && docker run -p 8080:8080 -v rlconform-data:/data rlconform
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/rlconform
# Dependencies first, from pyproject.toml alone: a code edit reuses this layer instead of reinstalling them.
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); \
print('\n'.join(p['build-system']['requires'] + p['project']['dependencies'] \
+ p['project']['optional-dependencies']['postgres']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt
COPY . .
# Editable, so templates/, static/ and SPEC.md are found beside the code; no dependency is fetched here.
RUN pip install --no-deps --no-build-isolation -e . \
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
