# The two commands a fresh machine needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: demo test install install-test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# Byte-compile the package once: where PYTHONDONTWRITEBYTECODE is set, Python would
# otherwise compile every module again on each `swiftnb` start (0.3 s of a 0.8 s start).
install: $(PY)
	$(PIP) install --quiet -e .
	$(PY) -m compileall -q swiftnb

# the browser tests (tests/browser) need JupyterLab and its extensions: the lab extra
install-test: $(PY)
	$(PIP) install --quiet -e '.[test,lab]'
	$(PY) -m compileall -q swiftnb

demo: install
	rm -rf build/demo && mkdir -p build/demo && cp examples/hello.swift build/demo/
	cd build/demo && ../../$(VENV)/bin/swiftnb run hello.swift
	@echo "--- build/demo/hello.txt:" && cat build/demo/hello.txt

# lint and type-check first (seconds; mypy keeps its incremental cache in .mypy_cache)
test: install-test
	$(PY) -m ruff check swiftnb tests benchmarks
	$(PY) -m mypy
	$(PY) -m swiftnb.kernel install --sys-prefix
	$(PY) -m pytest -q
	$(PY) -m pytest -q -p no:cacheprovider --nbval-lax --nbval-sanitize-with notebooks/sanitize.cfg notebooks

# the bench extra brings Parsl, the peer benchmarks/peers.py measures swiftnb against
bench: install
	$(PIP) install --quiet -e '.[bench]'
	# engine.py's part (b) is local.py, which the loop runs anyway
	for b in benchmarks/*.py; do $(PY) $$b $$([ $$b = benchmarks/engine.py ] && echo --a-only) || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
