# snaked: see README.md. Every target works on a fresh clone.
GO      ?= go
BIN     ?= bin
ADDR    ?= :2222
# Loadtest defaults (make loadtest N=1000 DURATION=60s).
N        ?= 500
RAMP     ?= 10s
DURATION ?= 30s

.PHONY: all build run test bench lint loadtest clean

all: build

build:
	$(GO) build -o $(BIN)/snaked ./cmd/snaked
	$(GO) build -o $(BIN)/loadtest ./cmd/loadtest

run: build
	$(BIN)/snaked -addr $(ADDR)

# The README's test command: vet (here and for macOS, so nothing in the tests
# is Linux-only by accident), then every test under the race detector.
test:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

# Every package's benchmarks, 5 runs each (for benchstat). About 20 min on
# the 2-core machine, 15 of them in ./render (its scenario runs and the
# 2,500-session FrameMix variants), hence the timeout above go test's 10m.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# Starts a local daemon, runs a modest swarm against it and prints the report.
loadtest: build
	./loadtest/run.sh $(N) $(RAMP) $(DURATION)

clean:
	rm -rf $(BIN)
