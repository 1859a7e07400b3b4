# The build context as the engine receives it (.dockerignore applied): its size in KB,
# then every path in it.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY . /context
WORKDIR /context
RUN { du -sk . | cut -f1; find . -mindepth 1; } > /listing
CMD ["cat", "/listing"]
