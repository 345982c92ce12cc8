# Causeway. The two commands of the quick start are `make demo` and
# `make test`; both install what they need first.

SHELL := /bin/bash
GO ?= go
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT := $(shell git rev-parse --verify -q HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/causeway/causeway/internal/version.Version=$(VERSION) -X github.com/causeway/causeway/internal/version.Commit=$(COMMIT)
# Every go command the targets run, and those the tests run in turn, builds
# with -trimpath. Without it Go's build cache keys each of Causeway's
# packages by the clone's directory, so a fresh clone compiles all of them
# again, for vet, for the tests with and without the race detector, and for
# each binary the tiers build; with it a fresh clone on a used machine
# reuses them (compiling and linking tier 1's test binaries: 171 s in a
# fresh clone without it, 82 s with it). File names in stack traces read
# github.com/causeway/causeway/... instead of the clone's path.
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
# Tests that need nginx, the API server, network namespaces or podman fail instead
# of skipping when these are set, so a missing install step cannot hide.
# The tests' nginx (and Angie) keep 16 MiB at the top of glibc's heap. nginx
# parses each `map` block with about 1.2 MB of hash arrays that it frees at
# once, and glibc gives the heap's top back to the kernel at each free, so
# the next map faults every page in again: about 7 ms a map on the test
# machine, and a test's configuration has some twenty. With the pad, `nginx -t`
# of such a configuration takes a third of the time, and the integration tier
# a third less CPU (README, Tests). Tests only: the benchmarks measure nginx
# as the controller runs it, and the image's nginx, which has a file
# capability, ignores the variable (glibc's secure mode).
TEST_GLIBC_TUNABLES ?= glibc.malloc.top_pad=16777216
TEST_ENV := CAUSEWAY_REQUIRE_NGINX=1 CAUSEWAY_REQUIRE_TESTENV=1 CAUSEWAY_REQUIRE_NETNS=1 CAUSEWAY_REQUIRE_IMAGE=1 \
	GLIBC_TUNABLES=$(TEST_GLIBC_TUNABLES)

.PHONY: bench-dynamic bench-scale all build deps demo image test test-image test-unit test-integration test-integration-angie test-e2e test-netns test-cluster test-unit-local test-unit-kube cache lint clean kube-apiserver testenv angie helm controller-gen generate cluster-images cluster-up cluster-down gateway-api-images test-gateway-conformance

all: build

# The tools the tiers build (the Kubernetes binaries, helm, controller-gen,
# Angie, the image's root filesystem) go to .cache, which is a link to a
# cache shared by every clone on this machine: each is rebuilt only when
# its stamp (its pinned inputs) changes, so a fresh clone builds none again.
CAUSEWAY_CACHE ?= $(HOME)/.cache/causeway
cache:
	@if [ ! -e .cache ]; then mkdir -p "$(CAUSEWAY_CACHE)" && ln -s "$(CAUSEWAY_CACHE)" .cache; fi

deps: cache
	@hack/install-deps.sh

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/causeway ./cmd/causeway
	$(GO) build -o bin/echo ./hack/echo

demo: deps build
	@hack/demo.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@# Build outputs are never committed: no tracked file is an ELF binary.
	@out=$$(git ls-files -z | perl -0ne 'chomp; open(my $$f, "<", $$_) or next; read($$f, my $$b, 4); print "$$_\n" if $$b eq "\x7fELF"'); \
		if [ -n "$$out" ]; then echo "compiled binaries are tracked:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Tier 1: package tests. Pure unit tests, plus the packages whose tests
# start their own nginx (internal/balancer) or loopback tunnels; the
# tunnel's Lease tests (internal/tunnel/loopback) need kube-apiserver, so
# make test runs them once it is built.
KUBE_UNIT_PKGS := ./internal/tunnel/loopback/...
test-unit: test-unit-local test-unit-kube
test-unit-local: deps
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 10m \
		$$($(GO) list ./internal/... ./cmd/... ./bench/... ./test/testcert/... | grep -v '/internal/tunnel/loopback')
test-unit-kube: deps kube-apiserver
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 10m $(KUBE_UNIT_PKGS)

# Tier 2: the real causeway binary, real nginx, echo backends on 127.0.0.x.
# Each test has its own addresses, ports and state directory, and spends
# most of its time waiting for nginx: three run at once.
test-integration: deps
	$(TEST_ENV) $(GO) test -race -count=1 -parallel 3 -timeout 25m ./test/integration/...

# Tier 2 again, on Angie built from ../shared/vendor (make angie): the same
# tests, with the binary, its modules and its lua-resty-core from the
# environment (test/integration/dataplane_test.go), and the Lua balancer's
# own tests (internal/balancer), whose Lua module is a newer one there.
# Without the race detector: the Go code paths are the nginx tier's, which
# runs them with it; here the data plane is what differs.
ANGIE := $(CURDIR)/.cache/angie
test-integration-angie: deps angie
	$(TEST_ENV) CAUSEWAY_NGINX=$(ANGIE)/sbin/angie CAUSEWAY_NGINX_MODULES=$(ANGIE)/modules \
		CAUSEWAY_LUA_PACKAGE_PATH='$(ANGIE)/lualib/?.lua;;' \
		$(GO) test -count=1 -timeout 25m ./internal/balancer/ ./test/integration/...

# Tier 3: a real etcd and kube-apiserver; the controller runs as deploy/'s
# ServiceAccount with real nginx; backends live in a network namespace
# (the API refuses loopback endpoints), so this needs root.
test-e2e: deps kube-apiserver helm controller-gen
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 20m ./test/testenv/... ./test/e2e/...

# Tier 4: the tunnel across network namespaces (needs root).
test-netns: deps kube-apiserver
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 10m ./test/netns/...

# The container image (make image) loaded into podman: served through as
# deploy/ runs it and on ports below 1024, then built twice from scratch
# and compared (needs root and Debian's mirror; about 2 minutes).
test-image: deps image
	@hack/install-deps.sh podman runc
	$(TEST_ENV) $(GO) test -race -count=1 -timeout 20m ./test/image/...

# Tier 5: a real single-node cluster (test/cluster) built here: the chart
# and image installed with helm as users do, real Pods behind real
# Services, churn and upgrades under load (needs root; test/node).
test-cluster: deps kube-apiserver helm cluster-images image gateway-api-images
	@hack/install-deps.sh $(CLUSTER_PACKAGES)
	@rm -f bin/tier5-report.txt
	$(TEST_ENV) CAUSEWAY_REQUIRE_CLUSTER=1 CAUSEWAY_TIER5_REPORT=$(CURDIR)/bin/tier5-report.txt \
		$(GO) test -race -count=1 -timeout 30m ./test/cluster/... ./test/node/...
	@cat bin/tier5-report.txt

# Every tier, with the tools of the later ones built in the background
# meanwhile (hack/test.sh).
test: deps
	@hack/test.sh

# The single-node cluster of tier 5, for use by hand (docs/testenv.md):
# cluster-up starts it in the background with Causeway's image, the echo
# backend's and the sandbox image imported, and prints a kubeconfig;
# cluster-down stops it and removes everything it made on the host.
CLUSTER_PACKAGES := containerd runc containernetworking-plugins conntrack iptables iproute2
cluster-up: deps kube-apiserver helm cluster-images image
	@hack/install-deps.sh $(CLUSTER_PACKAGES)
	@$(GO) build -o bin/cluster ./hack/cluster
	@bin/cluster up -image bin/echo-image.tar -image bin/causeway-image.tar

cluster-down:
	@$(GO) build -o bin/cluster ./hack/cluster
	@bin/cluster down

# The images the cluster runs besides Causeway's: its sandbox (hack/pause)
# and the echo backend (hack/echo), static binaries in scratch images
# (hack/scratchimage), since no registry is reachable.
cluster-images:
	@mkdir -p bin
	@CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/pause ./hack/pause
	@CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/echo-static ./hack/echo
	@$(GO) run ./hack/scratchimage -o bin/pause-image.tar -ref causeway.test/pause:1 -entrypoint /pause bin/pause=/pause >/dev/null
	@$(GO) run ./hack/scratchimage -o bin/echo-image.tar -ref causeway.test/echo:1 -entrypoint /echo -port 8080/tcp bin/echo-static=/echo >/dev/null

# The Gateway API conformance suite's backends, built from the pinned
# modules (hack/gateway-api, hack/coredns) into .cache/bin and packed as
# the images its manifests name: bin/echo-basic-image.tar (every
# registry.k8s.io/gateway-api/echo-basic tag the suite uses) and
# bin/coredns-image.tar (hack/build-gateway-api.sh).
gateway-api-images:
	@hack/build-gateway-api.sh

# The Gateway API conformance suite (hack/gateway-api, v1.6.3) against
# Causeway installed by its chart in tier 5's cluster (make cluster-up's
# if one runs), with the pinned CRDs; the report goes to docs/conformance/
# (make test writes it to bin/test-logs/ instead, the tree stays clean).
# CONFORMANCE_FLAGS: -channel standard, -set K=V, -report FILE, -- -run-test NAME.
test-gateway-conformance: deps kube-apiserver helm cluster-images image gateway-api-images
	@hack/install-deps.sh $(CLUSTER_PACKAGES)
	$(GO) run ./hack/gateway-conformance $(CONFORMANCE_FLAGS)

# The pinned kube-apiserver for end-to-end tests, built from the Go module
# proxy into .cache/bin (skipped when the cached binary matches).
kube-apiserver:
	@hack/build-kube-apiserver.sh

# Angie 1.12.1 with the Lua module, built from the tarballs in
# ../shared/vendor (or $$CAUSEWAY_VENDOR) into .cache/angie; skipped when
# the cached build matches. See docs/angie.md.
angie:
	@hack/build-angie.sh

# The pinned Helm (hack/helm) for the chart's tests, built from the Go
# module proxy into .cache/bin (skipped when the cached binary matches).
helm:
	@hack/build-helm.sh

# The pinned controller-gen (hack/controller-gen) for make generate, built
# from the Go module proxy into .cache/bin (skipped when the cached binary
# matches).
controller-gen:
	@hack/build-controller-gen.sh

# Files generated from one source: deploy/rbac.yaml is the chart's RBAC
# rendered for release causeway in causeway-system (TestDeployRBACIsTheChart
# checks it is current); the deepcopy functions of internal/apis and the
# CustomResourceDefinitions in deploy/crds, copied into the chart's crds/
# (TestGeneratedCRDsAreCurrent checks both).
generate: helm controller-gen
	.cache/bin/helm template causeway charts/causeway --namespace causeway-system --show-only templates/rbac.yaml > deploy/rbac.yaml
	.cache/bin/controller-gen object paths=./internal/apis/...
	rm -f deploy/crds/*_*.yaml
	.cache/bin/controller-gen crd paths=./internal/apis/... output:crd:artifacts:config=deploy/crds
	mkdir -p charts/causeway/crds
	rm -f charts/causeway/crds/*.yaml
	cp deploy/crds/*_*.yaml charts/causeway/crds/

# etcd + kube-apiserver in the foreground, with an admin kubeconfig; Ctrl-C
# stops and cleans up. See docs/testenv.md.
testenv: deps kube-apiserver
	$(GO) run ./hack/testenv -kubeconfig .cache/testenv/admin.kubeconfig

# Reload-free update benchmark (bench/dynamic/README.md): real binary,
# nginx and echo backends on 127.0.0.0/8; prints Markdown tables.
# BENCH_FLAGS=-quick for a short run. Not part of make test.
bench-dynamic: deps build
	$(GO) run ./bench/dynamic -out bin/bench-dynamic.md $(BENCH_FLAGS)

# 10,000 Ingresses, Services and EndpointSlices against a test API server;
# prints a table (needs root). Not part of make test.
bench-scale: deps kube-apiserver
	$(GO) run ./bench/scale $(BENCH_FLAGS)

# The OCI image, built without pulling a base image: a Debian root
# filesystem from mmdebstrap (cached in .cache/image) and the static
# binary, packed by umoci into bin/causeway-image.tar; prints the tag.
# FORCE=1 rebuilds the root filesystem. See docs/install.md.
image:
	@VERSION=$(VERSION) COMMIT=$(COMMIT) hack/build-image.sh

clean:
	rm -rf bin
