# The server, installed the way the README does (pip install of this project).
# docker-compose.yml runs it against a `postgres` service as its sidecar.
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN python -m venv /app/.venv && /app/.venv/bin/pip install --no-cache-dir /app
ENV PATH="/app/.venv/bin:$PATH" \
    GLOVE_SCRATCHPAD_HOST=0.0.0.0 \
    GLOVE_SCRATCHPAD_PORT=55432 \
    GLOVE_SCRATCHPAD_METRICS_PORT=9187
EXPOSE 55432
HEALTHCHECK --interval=5s --timeout=5s --retries=12 CMD ["glove-scratchpad", "ping", "--ready"]
ENTRYPOINT ["glove-scratchpad"]
CMD ["serve"]
