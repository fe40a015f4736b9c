FROM python:3.11-slim
WORKDIR /app
# Dependencies first, from the hashed lock, so a code change does not reinstall them.
COPY requirements/app.txt requirements/app.txt
RUN pip install --no-cache-dir --require-hashes -r requirements/app.txt
COPY . .
# Non-editable: the image carries the package with its templates and static files, like any install.
RUN pip install --no-cache-dir --no-deps . && rm -rf /app/build
EXPOSE 8000
ENV BOTFLOW_LOG_FORMAT=json
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
CMD ["botflow", "serve", "--host", "0.0.0.0", "--port", "8000"]
