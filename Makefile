# Every target is idempotent: the virtual environment is created once and reused.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-pure lint bench clean

$(STAMP): pyproject.toml setup.py $(wildcard src/fissure/_*.pyx src/fissure/*/_*.pyx src/fissure/*/_*.pxi)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# The CPU build of torch on this machine's disk; an unpinned torch pulls a multi-GB GPU build.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,embed,onnx,store,eval,bench,postgres,ray,ocr,serve,serve-test]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/fissure ingest samples --store .fissure/demo
	$(BIN)/fissure query "how do geologists measure a fault?" -k 3 --store .fissure/demo

test: setup
	# Headless Chromium for the visualiser's browser test; the test skips, saying why, without it.
	sh scripts/install-chromium.sh || echo "chromium not installed: the browser test will skip"
	# unshare, runuser, ip, ss for the PostgreSQL and Ray tests (network namespace, unprivileged user).
	sh scripts/install-scale.sh || echo "scale tools not installed: the Ray cluster test will skip"
	# Tesseract for scanned PDF pages; the OCR tests skip, saying why, without it.
	sh scripts/install-tesseract.sh || echo "tesseract not installed: the OCR tests will skip"
	$(BIN)/python -m pytest -q

# The invariant, snapshot and corpus suites once more with every compiled twin off: the pure
# Python path must make the same chunks (tests/test_compiled.py checks the switch itself).
PURE_SUITES := tests/split/test_invariants.py tests/split/test_levels.py tests/split/test_tables.py \
	tests/split/test_windowed.py tests/size tests/test_structural_integrity.py tests/test_chunker.py \
	tests/test_corpus_snapshots.py tests/parse/test_corpus_formats.py

test-pure: setup
	FISSURE_PURE_PYTHON=1 $(BIN)/python -m pytest -q $(PURE_SUITES)

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

bench: setup
	$(BIN)/python -m bench.run

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info src/fissure/_*.c src/fissure/_*.so src/fissure/*/_*.c src/fissure/*/_*.so
