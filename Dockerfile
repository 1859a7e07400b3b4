# The server, installed the way the README does (pip install of this project), as a
# user of its own, in an image with no compiler or build tool.
#
#   docker build -t glove-scratchpad .
#   docker build -t glove-scratchpad --build-arg WHEELHOUSE=wheels .   # with no network
#
# BASE_IMAGE: the image to build on (any with python3 3.11+ and its venv module).
# WHEELHOUSE: a folder of this build context holding this project's wheel and all of
# its dependencies' wheels (`pip wheel . -w wheels`); when set, nothing is fetched
# from the index. Empty (the default): installed from the index.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
ARG WHEELHOUSE=
# With a wheelhouse, only its wheels: the source comes as this project's wheel, and
# a change elsewhere in the context does not rebuild the image.
COPY ${WHEELHOUSE:-.} /src
RUN python3 -m venv /opt/glove-scratchpad \
 && if [ -n "$WHEELHOUSE" ]; then \
      /opt/glove-scratchpad/bin/pip install --no-cache-dir --no-index \
        --find-links /src glove-scratchpad; \
    else \
      /opt/glove-scratchpad/bin/pip install --no-cache-dir /src; \
    fi \
 && /opt/glove-scratchpad/bin/pip uninstall --yes --quiet pip setuptools

# Only the installed venv is carried over: not the source, nor pip and setuptools.
FROM ${BASE_IMAGE}
RUN useradd --system --user-group --uid 10001 --create-home --home-dir /home/glove glove
COPY --from=build /opt/glove-scratchpad /opt/glove-scratchpad
ENV PATH="/opt/glove-scratchpad/bin:$PATH" \
    GLOVE_SCRATCHPAD_HOST=0.0.0.0 \
    GLOVE_SCRATCHPAD_PORT=55432 \
    GLOVE_SCRATCHPAD_METRICS_PORT=9187
# The embedded sidecar (when no DSN is given) keeps its data in the user's home.
USER 10001:10001
WORKDIR /home/glove
EXPOSE 55432
HEALTHCHECK --interval=5s --timeout=5s --retries=12 CMD ["glove-scratchpad", "ping", "--ready"]
ENTRYPOINT ["glove-scratchpad"]
CMD ["serve"]
