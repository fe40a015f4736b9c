# syntax=docker/dockerfile:1
# The Botflow server image: `docker build --build-arg VERSION=0.1.0 -t botflow:0.1.0 .`
# (.github/workflows/image.yml builds and tags it for each release). tools/image_steps.sh runs the same
# build steps without Docker, in a fresh virtual environment, and starts the result.

# Stage 1: wheels for the locked dependencies (hashes checked) and for Botflow itself.
FROM python:3.11-slim AS build
WORKDIR /src
COPY requirements/app.txt requirements/app.txt
RUN pip wheel --no-cache-dir --disable-pip-version-check --require-hashes --wheel-dir /wheels -r requirements/app.txt
# Only what the package is built from: no tests, benchmarks, CI scripts or tools.
COPY pyproject.toml README.md LICENSE ./
COPY static static
COPY flows flows
COPY server server
COPY web web
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps --wheel-dir /wheels .

# Stage 2: the runtime, with the installed wheels and nothing else from the repository.
FROM python:3.11-slim
ARG VERSION=dev
ARG SOURCE=""
ARG REVISION=""
LABEL org.opencontainers.image.title="Botflow" \
      org.opencontainers.image.description="Design, test and run messenger-bot dialogs as finite state machines" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    BOTFLOW_LOG_FORMAT=json
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --disable-pip-version-check --no-index --find-links /wheels botflow \
    && useradd --system --uid 10001 --user-group --home-dir /app --create-home --shell /usr/sbin/nologin botflow
# The working directory is the user's own: a SQLite database (BOTFLOW_DATABASE_URL's default) lands there.
WORKDIR /app
USER botflow
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]
CMD ["botflow", "serve", "--host", "0.0.0.0", "--port", "8000"]
