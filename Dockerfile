# The server, installed the way the README does (pip install of this project).
# docker-compose.yml runs it against a `postgres` service as its sidecar.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN python -m venv /app/.venv && /app/.venv/bin/pip install --no-cache-dir /app
EXPOSE 55432
ENTRYPOINT ["/app/.venv/bin/glove-scratchpad", "serve", "--host", "0.0.0.0", "--port", "55432"]
