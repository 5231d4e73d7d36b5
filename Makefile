# snaked: see README.md. Every target works on a fresh clone.
GO      ?= go
BIN     ?= bin
ADDR    ?= :2222
# make run's status page; HTTP_ADDR= turns it off.
HTTP_ADDR ?= 127.0.0.1:8080
# The commit built from, linked in for -version and the status page (Go's
# own VCS stamp is missing in a git worktree or under -buildvcs=false).
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED := $(shell git status --porcelain 2>/dev/null | grep -q . && echo true || echo false)
LDFLAGS  := -X main.revision=$(REVISION) -X main.modified=$(MODIFIED)
# make image: podman, else docker.
CONTAINER ?= $(shell command -v podman 2>/dev/null || command -v docker 2>/dev/null)
IMAGE     ?= snaked:latest
# Loadtest defaults (make loadtest N=1000 DURATION=60s).
N        ?= 500
RAMP     ?= 10s
DURATION ?= 30s

.PHONY: all build run cluster test bench grind lint loadtest scale image clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/snaked ./cmd/snaked
	$(GO) build -o $(BIN)/loadtest ./cmd/loadtest

run: build
	$(BIN)/snaked -addr $(ADDR) $(if $(HTTP_ADDR),-http-addr $(HTTP_ADDR))

# A cluster on one machine (README, "Running a cluster"): a simulation
# with an embedded NATS on loopback and two SSH gateways on ports 2222 and
# 2223, sharing one host key; Ctrl-C stops all three.
NATS_ADDR ?= 127.0.0.1:4222
cluster: build
	@trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM; \
	$(BIN)/snaked -role sim -nats-embed $(NATS_ADDR) & \
	sleep 1; \
	$(BIN)/snaked -role gateway -nats nats://$(NATS_ADDR) -addr :2222 -http-addr 127.0.0.1:8080 & \
	sleep 1; \
	$(BIN)/snaked -role gateway -nats nats://$(NATS_ADDR) -addr :2223 -http-addr 127.0.0.1:8081 & \
	sleep 1; \
	echo "cluster: sim with NATS on $(NATS_ADDR), gateways on :2222 and :2223 (one host key, pages on 127.0.0.1:8080 and :8081); Ctrl-C stops them"; \
	wait

# The README's test command: vet (here and for macOS, so nothing in the tests
# is Linux-only by accident), then every test under the race detector, then
# the allocation counts without it (under it sync.Pool drops items, so the
# frame path's counts are skipped there).
test:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocs' ./render ./sshserver

# Every package's benchmarks, 5 runs each (for benchstat). About 20 min on
# the 2-core machine, 15 of them in ./render (its scenario runs and the
# 2,500-session FrameMix variants), hence the timeout above go test's 10m.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m ./...

# The crowd frame's instructions (BenchmarkCrowdFrame's timed draws only),
# counted by callgrind: steady where wall time on a shared machine is not.
# Needs valgrind; about a minute. Valgrind 3.19 sometimes dies on the Go
# runtime's RDTSCP (SIGILL), hence the retries.
grind:
	$(GO) test -c -o $(BIN)/render.test ./render/
	for i in 1 2 3 4 5 6; do GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind \
	  --toggle-collect='*loadCrowd*.measure' --callgrind-out-file=$(BIN)/crowd.callgrind \
	  $(BIN)/render.test -test.run '^$$' -test.bench CrowdFrame -test.benchtime 20x && break; done
	callgrind_annotate $(BIN)/crowd.callgrind 2>/dev/null | sed -n '/PROGRAM TOTALS/p;/file:function/,$$p' | \
	  sed 's| \[.*||' | head -32

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# Starts a local daemon, runs a modest swarm against it and prints the report.
loadtest: build
	./loadtest/run.sh $(N) $(RAMP) $(DURATION)

# One world for 100,000 players on this machine (loadtest/scale.sh): a
# simulation with 100,000 snakes, two gateways (regions, whole deltas) with
# a swarm, headless region followers for more gateways, a late gateway.
# Under 5 minutes; prints the tick, bytes, CPU and frame gaps.
scale:
	loadtest/scale.sh

# The container image (deploy/Containerfile): a static snaked, non-root,
# its state in a volume. Needs podman or docker.
image:
	@test -n "$(CONTAINER)" || { echo "make image: neither podman nor docker is installed (apt-get install podman, or docker.io)"; exit 1; }
	$(CONTAINER) build -f deploy/Containerfile --build-arg REVISION=$(REVISION) --build-arg MODIFIED=$(MODIFIED) -t $(IMAGE) .

clean:
	rm -rf $(BIN)
