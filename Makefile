# Kubernetes version of the control plane the tests and `make run` use, and of
# the kubectl the deployment targets run: the one place it is set (build.sh,
# internal/controlplane and the docs take it from here; `make
# controlplane-gomod` points hack/controlplane/kubernetes/go.mod at it). It is
# built from source (hack/controlplane) because setup-envtest cannot download
# binaries here and kind needs a docker engine.
ENVTEST_K8S_VERSION ?= 1.37.1
# Image to build and deploy.
IMG ?= myapp-operator:latest
# VERSION and COMMIT are stamped into the manager (its
# myapp_operator_build_info metric) by `make build` and `make docker-build`.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
MANAGER_LDFLAGS = -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# Binaries go to GOBIN, or to GOPATH/bin when GOBIN is unset.
ifeq (,$(shell go env GOBIN))
GOBIN=$(shell go env GOPATH)/bin
else
GOBIN=$(shell go env GOBIN)
endif

# Recipes run in bash with errexit and pipefail, so a failing step in a pipe
# fails the target.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and the RBAC role from kubebuilder markers.
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd paths="./..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods from kubebuilder markers, and docs/flags.md from the manager's flags.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt" paths="./..."
	go run ./cmd/manager --print-flags-markdown > docs/flags.md.tmp && mv docs/flags.md.tmp docs/flags.md

.PHONY: fmt
fmt: ## Run go fmt against code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet against code.
	go vet ./...

.PHONY: lint
lint: golangci-lint cross-vet ## Run golangci-lint, and build and vet for CROSS_GOOS.
	"$(GOLANGCI_LINT)" run

# CROSS_GOOS are the other systems contributors build on. Linux-only process
# attributes (the parent-death signal) live behind build tags
# (internal/controlplane/sysproc_*.go); this keeps it so.
CROSS_GOOS ?= darwin

.PHONY: cross-vet
cross-vet: ## Build and vet every package, tests and the alerts module included, for each of CROSS_GOOS.
	@for goos in $(CROSS_GOOS); do \
		echo "GOOS=$$goos go build ./... && go vet ./... (and test/alerts)"; \
		GOOS=$$goos go build ./... || exit 1; \
		GOOS=$$goos go vet ./... || exit 1; \
		(cd test/alerts && GOOS=$$goos go vet ./...) || exit 1; \
	done

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply its fixes.
	"$(GOLANGCI_LINT)" run --fix

# FUZZTIME, when set, is how long every fuzz target runs in `make fuzz` (a
# count of executions such as 50000x, or a duration); unset, each runs the
# count FUZZ_TARGETS gives it. The seeds always run as ordinary tests.
FUZZTIME ?=
# GO_TEST_FLAGS are passed to every go test run, e.g. GO_TEST_FLAGS=-race.
GO_TEST_FLAGS ?=

.PHONY: test
test: manifests generate fmt vet test-tools helm-lint ## Run all tests on the locally built control plane (the alert rules' module too, the fuzz targets' seeds, and the Helm 4 --wait test with bin/helm4).
	MYAPP_REQUIRE_SERVERS=1 HELM4="$(HELM4)" KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test $(GO_TEST_FLAGS) ./... -coverprofile cover.out
	cd test/alerts && KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test $(GO_TEST_FLAGS) ./...

# TEST_TOOLS are what `make test` needs besides the project's code: the
# control plane and the tools and servers its tests run. They are built side
# by side, TEST_TOOLS_JOBS at a time, so the tools' module downloads and
# builds overlap the control plane's, whose six binaries build one after the
# other (hack/controlplane/build.sh). Each target's output is held and
# printed whole when it ends (--output-sync), so the logs do not interleave;
# a failure of any fails `make test` with its output, once the builds already
# running have ended. bind9 and pdns both run apt-get, which holds a lock, so
# they share one job (apt-servers).
TEST_TOOLS ?= controlplane versitygw external-dns-webhook helm helm4 kustomize apt-servers
TEST_TOOLS_JOBS ?= 3

.PHONY: test-tools
test-tools: ## Build the control plane and the tools make test needs (TEST_TOOLS), TEST_TOOLS_JOBS at a time.
	@echo "Building $(TEST_TOOLS), $(TEST_TOOLS_JOBS) at a time; each one's output shows when it ends"
	@$(MAKE) -f $(firstword $(MAKEFILE_LIST)) --no-print-directory -j$(TEST_TOOLS_JOBS) --output-sync=target $(TEST_TOOLS)

# UNIT_PKGS are the packages whose tests need no control plane, no BIND and
# no built binary: the planners (backupplan, dnsplan, restoreplan), pass,
# the contract, the external HTTP clients and the simulator (on in-process
# servers), the Argo CD health checks and the docs' links. They run with
# -short, which skips the S3 client's tests against versitygw (a built
# binary); make test runs those.
UNIT_PKGS ?= ./internal/reconcile/pass/... ./internal/reconcile/backupconfig/backupplan/... \
	./internal/reconcile/myapp/dnsplan/... ./internal/reconcile/restore/restoreplan/... \
	./internal/contract/... ./internal/external \
	./internal/external/backup/... ./internal/external/dns ./internal/external/internal/... \
	./internal/external/dns/httpdns ./internal/simulator/... ./internal/health/... ./test/docs/...

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane (the planners, pass, the contract, the external clients, the simulator), in under two minutes on 2 cores; make test runs them too.
	go test -short $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: fuzz
fuzz: ## Run each fuzz target for its count of executions in FUZZ_TARGETS (or FUZZTIME); make test runs only their seeds.
	@for target in $(FUZZ_TARGETS); do \
		pkg=$${target%%:*}; rest=$${target#*:}; name=$${rest%%:*}; fuzztime="$(FUZZTIME)"; \
		[ -n "$$fuzztime" ] || fuzztime="$${rest#*:}x"; \
		echo "go test $$pkg -run '^$$' -fuzz '^$$name$$' -fuzztime $$fuzztime"; \
		go test "$$pkg" -run '^$$' -fuzz "^$$name$$" -fuzztime "$$fuzztime" || exit 1; \
	done

# RELIABILITY_TIMEOUT bounds the whole campaign. On 2 cores on 2026-12-02
# family 1 alone took 43 minutes (19 lifecycles, 6 of them on the S3 path
# and 6 for the deletion orders), and the whole campaign ran past 60.
RELIABILITY_TIMEOUT ?= 150m

.PHONY: test-reliability
test-reliability: manifests generate controlplane ## Run the whole reliability campaign (docs/reliability.md); the full log goes to reliability.out.
	RELIABILITY_FULL=1 KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./test/reliability -count=1 -v \
		-timeout $(RELIABILITY_TIMEOUT) > reliability.out 2>&1 || { grep -E '^\s*--- FAIL|RESULT|EXPECTED FAILURE' reliability.out; \
		echo "The campaign failed; see reliability.out"; exit 1; }
	@grep -E 'RESULT|EXPECTED FAILURE' reliability.out

# FUZZ_TARGETS lists package:FuzzName:executions run by `make fuzz`, each
# count about 10 s of fuzzing on the project's 2-core machine. A count, not
# a duration: at a -fuzztime duration's end, Go 1.26's fuzzing coordinator
# can fail a target with "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27), as FuzzDecodeResponse did here when
# `make test` ran this target. It no longer does: its first, instrumented
# build took most of 10 minutes of a cold `.ci/run`, so it is a campaign of
# its own, as test-reliability is; the seeds run in `make test`.
FUZZ_TARGETS ?= ./internal/external:FuzzDecodeResponse:15000 \
	./internal/external/dns/rfc2136:FuzzDecodeDNSAnswer:8000 \
	./internal/reconcile/myapp:FuzzBuildChildren:2500

.PHONY: chart
chart: manifests ## Regenerate the Helm chart's CRDs, manager ClusterRole and alerts from config/.
	hack/chart.sh

.PHONY: helm-lint
helm-lint: chart helm ## Lint the Helm chart with its default values, with every option on, and with each DNS and backup provider.
	"$(HELM)" lint --strict charts/myapp-operator
	"$(HELM)" lint --strict charts/myapp-operator -f charts/myapp-operator/ci/all-options-values.yaml
	"$(HELM)" lint --strict charts/myapp-operator --set prometheus.rules.enable=true \
		--set externalServices.tokenSecret.create=true,externalServices.tokenSecret.token=t \
		--set externalServices.caBundle=pem,manager.logLevel=debug,manager.maxConcurrentReconciles=8,manager.maxRetryAfter=2m
	"$(HELM)" lint --strict charts/myapp-operator --set dnsProvider=rfc2136 \
		--set rfc2136.server=ns1.example.com:53,rfc2136.zone=example.com,rfc2136.timeout=5s \
		--set 'rfc2136.nameservers={ns1.example.com:53,ns2.example.com:53}' \
		--set rfc2136.tsigKey.secretName=dns-tsig,rfc2136.tsigKey.secretKey=key \
		--set externalServices.tokenSecret.create=true,externalServices.tokenSecret.token=t
	"$(HELM)" lint --strict charts/myapp-operator --set backupProvider=s3 \
		--set s3.endpoint=https://s3.example.com,s3.bucket=backups,s3.region=eu-west-1,s3.pathStyle=true \
		--set s3.prefix=team-a/prod,s3.credentialsSecret.name=s3-keys,s3.credentialsSecret.sessionTokenKey=session-token \
		--set s3.caBundle=pem,externalServices.tokenSecret.create=true,externalServices.tokenSecret.token=t
	"$(HELM)" lint --strict charts/myapp-operator --set dnsProvider=rfc2136,backupProvider=s3 \
		--set rfc2136.server=ns1.example.com:53,rfc2136.zone=example.com,rfc2136.tsigKey.secretName=dns-tsig \
		--set s3.bucket=backups,s3.credentialsSecret.name=s3-keys
	"$(HELM)" lint --strict charts/myapp-operator --set dnsProvider=webhook \
		--set webhook.zone=example.com,webhook.image.repository=registry.k8s.io/external-dns/external-dns,webhook.image.tag=v0.23.0 \
		--set 'webhook.args={--webhook-server,--provider=aws,--source=service,--metrics-address=:8080,--domain-filter=example.com}' \
		--set webhook.singleWriter=true,webhook.timeout=20s,webhook.readInterval=30s,webhook.maxBodySize=67108864 \
		--set externalServices.tokenSecret.create=true,externalServices.tokenSecret.token=t
	@for bad in "/webhook/zone:webhook.image.repository=r,webhook.image.tag=t" \
		"/webhook/image/repository:webhook.zone=example.com,webhook.image.tag=t" \
		"/webhook/image/tag:webhook.zone=example.com,webhook.image.repository=r" \
		"/webhook/readInterval:webhook.zone=example.com,webhook.image.repository=r,webhook.image.tag=t,webhook.readInterval=soon" \
		"/webhook/maxBodySize:webhook.zone=example.com,webhook.image.repository=r,webhook.image.tag=t,webhook.maxBodySize=-1"; do \
		want=$${bad%%:*}; set=$${bad#*:}; \
		out=$$("$(HELM)" lint --strict charts/myapp-operator --set dnsProvider=webhook --set "$$set" 2>&1) && \
			{ echo "helm lint accepted dnsProvider=webhook with $$set"; exit 1; }; \
		echo "$$out" | grep -q "$$want" || { echo "helm lint refused $$set without saying $$want:"; echo "$$out"; exit 1; }; \
	done

.PHONY: verify
verify: manifests generate chart ## Regenerate everything (the chart too) and fail if the tree is not clean.
	go mod tidy
	cd test/alerts && go mod tidy
	cd hack/controlplane/kubernetes && go mod tidy
	cd hack/controlplane/etcd && go mod tidy
	cd hack/controlplane/kwok && go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "The tree is not clean after regenerating; commit these changes:"; \
		git status --porcelain; git --no-pager diff; exit 1; \
	fi

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager, the simulator and devenv (behind `make run`) into bin/.
	go build -o bin/manager -ldflags "$(MANAGER_LDFLAGS)" ./cmd/manager
	go build -o bin/simulator ./cmd/simulator
	go build -o bin/devenv ./cmd/devenv

# LOCAL_CLUSTER=true makes `make run` start a local cluster even when the
# current kubeconfig context reaches one. ARGS are extra manager flags.
# DEVENV is the devenv binary `make run` probes the cluster with and runs.
DEVENV ?= bin/devenv
# DNS_PROVIDER=rfc2136 keeps the records in a local BIND (named) instead of
# the simulator, so `dig` shows what the operator wrote; DNS_PROVIDER=webhook
# in external-dns's webhook server with its inmemory provider (built by
# `make external-dns-webhook`), so `curl` shows them as external-dns reads them.
DNS_PROVIDER ?= http
# BACKUP_PROVIDER=s3 keeps the backups in a bucket of a local S3 server
# (versitygw, built by `make versitygw`) instead of the simulator, so `find`
# shows the file of each backup.
BACKUP_PROVIDER ?= http

# `make run` builds the control plane only when devenv, asked first, says it
# will start a local cluster: against a reachable current context it needs
# just bin/manager and devenv (which serves the simulator). The probe line
# holds $(MAKE), so `make -n run` runs it too and shows the decision
# (cmd/devenv's TestMakeBuildsTheControlPlaneOnlyForALocalCluster).
.PHONY: run
run: build $(if $(filter rfc2136,$(DNS_PROVIDER)),bind9) $(if $(filter webhook,$(DNS_PROVIDER)),external-dns-webhook) $(if $(filter s3,$(BACKUP_PROVIDER)),versitygw) ## Run the operator in the foreground: on a local cluster with the simulator when no cluster is reachable (or LOCAL_CLUSTER=true), else against the current context.
	@cluster=$$("$(DEVENV)" --which-cluster); \
	if [ "$$cluster" = local ]; then $(MAKE) --no-print-directory controlplane; fi
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" VERSITYGW="$(VERSITYGW)" EXTERNAL_DNS_WEBHOOK="$(EXTERNAL_DNS_WEBHOOK)" \
		"$(DEVENV)" --manager bin/manager \
		--dns-provider=$(DNS_PROVIDER) --backup-provider=$(BACKUP_PROVIDER) -- $(ARGS)

.PHONY: demo
demo: build controlplane ## Walk through the whole lifecycle on a local cluster; exits non-zero if a step does not happen.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" KUBECTL="$(if $(KUBECTL_DEP),$(ENVTEST_ASSETS)/kubectl,$(KUBECTL))" hack/demo.sh

# BENCH_N lists the sizes `make bench` measures; BENCH_ARGS are extra flags
# of test/bench (go run ./test/bench -h lists them), e.g.
#   make bench BENCH_N=10000 BENCH_ARGS='--operators operator'   # no baseline at 10,000
#   make bench BENCH_N=1000 BENCH_ARGS='--operators operator --phases floor,failover'
#   make bench BENCH_N=100 BENCH_ARGS='--operators operator --phases priority --priority-edits 10'
BENCH_N ?= 100 1000
BENCH_ARGS ?=

.PHONY: bench
bench: build controlplane ## Measure the operator against a tutorial-style baseline and the cluster floor at BENCH_N MyApps (docs/benchmarks.md); not part of `make test`.
	go build -o bin/bench ./test/bench
	for n in $(BENCH_N); do \
		KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" bin/bench -n $$n --manager bin/manager $(BENCH_ARGS) || exit $$?; \
	done

# Container tool used to build the image; there is none on the project's
# build machines, so this target is for machines that have one.
CONTAINER_TOOL ?= docker

.PHONY: docker-build
docker-build: ## Build the manager image IMG with CONTAINER_TOOL.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

.PHONY: build-installer
build-installer: manifests generate kustomize ## Write dist/install.yaml: the CRDs, RBAC and manager Deployment for IMG in one file.
	mkdir -p dist
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=$(IMG)
	"$(KUSTOMIZE)" build config/default > dist/install.yaml

##@ Deployment

# Tools are installed into LOCALBIN.
LOCALBIN ?= $(shell pwd)/bin

# kubectl for install, uninstall, deploy and undeploy, of the control plane's
# version: the control plane's own when it is built, else kubectl alone built
# from the same pinned source (`make kubectl`, about half a minute), so these
# targets work against an existing cluster on a fresh machine. KUBECTL=kubectl
# uses the one on your PATH instead (kubectl supports one minor version of
# skew with the cluster); nothing is built then.
KUBECTL ?= $(LOCALBIN)/kubectl-v$(ENVTEST_K8S_VERSION)
# KUBECTL_DEP is the default KUBECTL, for the targets to build; empty when
# KUBECTL is given.
KUBECTL_DEP = $(if $(filter file,$(origin KUBECTL)),$(KUBECTL))
# (The prerequisite lists below expand KUBECTL_DEP as make reads them, so it
# is defined first.)

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize $(KUBECTL_DEP) ## Install the CRDs into the cluster of the current kubeconfig context.
	"$(KUSTOMIZE)" build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize $(KUBECTL_DEP) ## Remove the CRDs. Call with ignore-not-found=true to ignore missing ones.
	"$(KUSTOMIZE)" build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize $(KUBECTL_DEP) ## Deploy the manager to the cluster of the current kubeconfig context.
	cd config/manager && "$(KUSTOMIZE)" edit set image controller=$(IMG)
	"$(KUSTOMIZE)" build config/default | $(KUBECTL) apply --server-side -f -

# UNDEPLOY_TIMEOUT bounds how long `make undeploy` waits for the custom
# resources' cleanup before it gives up and leaves the manager running.
UNDEPLOY_TIMEOUT ?= 5m

# Deleting the CRDs deletes every MyApp and BackupConfig, whose finalizers
# need the manager the same delete removes: they would be stranded. So the
# custom resources go first, while the manager runs, MyApps before
# BackupConfigs so that final backups are taken; a cleanup that does not
# finish stops the target with the manager still running.
.PHONY: undeploy
undeploy: kustomize $(KUBECTL_DEP) ## Delete every MyApp and BackupConfig while the manager runs, then remove the manager and CRDs. Call with ignore-not-found=true to ignore missing resources.
	@for kind in myapps.apps.myapp.dev backupconfigs.backup.myapp.dev; do \
		if $(KUBECTL) get crd "$$kind" >/dev/null 2>&1; then \
			echo "Deleting every $$kind, waiting up to $(UNDEPLOY_TIMEOUT) for the manager to clean up"; \
			$(KUBECTL) delete "$$kind" --all --all-namespaces --wait --timeout=$(UNDEPLOY_TIMEOUT); \
		fi; \
	done
	"$(KUSTOMIZE)" build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ Control plane

# The control plane lives in setup-envtest's store outside the repository, so
# a fresh clone on the same machine reuses it.
ENVTEST_STORE ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/kubebuilder-envtest
ENVTEST_ASSETS = $(ENVTEST_STORE)/k8s/$(ENVTEST_K8S_VERSION)-$(shell go env GOOS)-$(shell go env GOARCH)

.PHONY: controlplane
controlplane: setup-envtest $(LOCALBIN) ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok from source once per machine.
	ENVTEST_STORE="$(ENVTEST_STORE)" CONTROLPLANE_VERSION=$(ENVTEST_K8S_VERSION) hack/controlplane/build.sh
	@"$(SETUP_ENVTEST)" use $(ENVTEST_K8S_VERSION) --installed-only --bin-dir "$(ENVTEST_STORE)" -p path >/dev/null
	@ln -sf "$(ENVTEST_ASSETS)/kubectl" "$(LOCALBIN)/kubectl"

# After changing ENVTEST_K8S_VERSION, point the control plane's source at it.
.PHONY: controlplane-gomod
controlplane-gomod: ## Point hack/controlplane/kubernetes/go.mod at ENVTEST_K8S_VERSION (needs the module proxy); make controlplane refuses a version go.mod does not pin.
	hack/controlplane/gen-kubernetes-gomod.sh $(ENVTEST_K8S_VERSION)

##@ Dependencies

# The RFC 2136 DNS tests and `make run DNS_PROVIDER=rfc2136` run BIND 9's
# named. Debian's package is installed when it is missing and this user can
# (root with apt-get); otherwise those tests are skipped, saying how to
# install it (controlplane.RequireBIND).
.PHONY: bind9
bind9: ## Install BIND 9 (named, nsupdate, dig) with apt-get when named is missing.
	@if command -v named >/dev/null || [ -x /usr/sbin/named ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing bind9 and bind9-dnsutils with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bind9 bind9-dnsutils; \
	else \
		echo "named (BIND 9) is missing and cannot be installed here: the RFC 2136 tests will be skipped; to run them: sudo apt-get install -y bind9 bind9-dnsutils"; \
	fi

# The webhook DNS provider's tests run external-dns's pdns provider against
# PowerDNS (pdns_server with its sqlite3 backend), installed like BIND;
# without it those tests are skipped, saying how to install it.
.PHONY: pdns
pdns: ## Install PowerDNS (pdns_server, pdnsutil, the sqlite3 backend) with apt-get when pdns_server is missing.
	$(install-pdns)

# install-pdns is pdns's recipe, which apt-servers runs too.
define install-pdns
@if command -v pdns_server >/dev/null || [ -x /usr/sbin/pdns_server ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing pdns-server and pdns-backend-sqlite3 with apt-get"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pdns-server pdns-backend-sqlite3 sqlite3; \
	else \
		echo "pdns_server (PowerDNS) is missing and cannot be installed here: the webhook provider's pdns tests will be skipped; to run them: sudo apt-get install -y pdns-server pdns-backend-sqlite3 sqlite3"; \
	fi
endef

# apt-servers installs BIND, then PowerDNS, in one job of `make test-tools`:
# two apt-get runs at once would fail on dpkg's lock.
.PHONY: apt-servers
apt-servers: bind9 ## Install BIND 9, then PowerDNS, with apt-get when they are missing (make bind9 and make pdns).
	$(install-pdns)

$(LOCALBIN):
	mkdir -p "$(LOCALBIN)"

KUSTOMIZE ?= $(LOCALBIN)/kustomize
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
SETUP_ENVTEST ?= $(LOCALBIN)/setup-envtest
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
HELM ?= $(LOCALBIN)/helm
HELM4 ?= $(LOCALBIN)/helm4

# kustomize v5.8.3 needs Go 1.27; v5.8.1 is the newest that builds with 1.26.
KUSTOMIZE_VERSION ?= v5.8.1
CONTROLLER_TOOLS_VERSION ?= v0.23.0
SETUP_ENVTEST_VERSION ?= v0.25.1
GOLANGCI_LINT_VERSION ?= v2.15.0
# helm v3.22.0 builds with Go 1.26 (its go.mod asks for 1.26.0).
HELM_VERSION ?= v3.22.0
# helm v4.3.1 builds with Go 1.26 too; only the Helm 4 --wait test uses it.
HELM4_VERSION ?= v4.3.1

.PHONY: kubectl
kubectl: $(LOCALBIN)/kubectl-v$(ENVTEST_K8S_VERSION) ## Provide bin/kubectl-vENVTEST_K8S_VERSION: the control plane's, else kubectl built alone.
$(LOCALBIN)/kubectl-v$(ENVTEST_K8S_VERSION): | $(LOCALBIN)
ifneq (,$(wildcard $(ENVTEST_ASSETS)/kubectl))
	ln -sf "$(ENVTEST_ASSETS)/kubectl" "$@"
else
	CONTROLPLANE_VERSION=$(ENVTEST_K8S_VERSION) hack/controlplane/build.sh --kubectl "$@"
endif

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Install kustomize into bin/.
$(KUSTOMIZE): $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN): $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: setup-envtest
setup-envtest: $(SETUP_ENVTEST) ## Install setup-envtest into bin/.
$(SETUP_ENVTEST): $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT): $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

.PHONY: helm4
helm4: $(HELM4) ## Install helm v4 into bin/helm4, for the Helm 4 --wait test (TestHelm4WaitReturnsOnlyOnceTheMyAppIsReady).
$(HELM4): $(LOCALBIN)
	@[ -f "$(HELM4)-$(HELM4_VERSION)" ] || { set -e; tmp=$$(mktemp -d); \
	  GOBIN=$$tmp go install helm.sh/helm/v4/cmd/helm@$(HELM4_VERSION); \
	  mv "$$tmp/helm" "$(HELM4)-$(HELM4_VERSION)"; rm -rf "$$tmp"; }
	ln -sf "$$(basename "$(HELM4)-$(HELM4_VERSION)")" "$(HELM4)"

# versitygw is the S3 server the S3 provider's tests run against (on
# loopback, with a directory backend; internal/controlplane/s3.go starts it).
# internal/controlplane.VersityGWVersion names the same release. Its cold
# build (every module downloaded, an empty build cache) took 4m48s of CPU
# (user) and 21 min of wall time on a 2-core machine under a load average of
# 18-20 (docs/benchmarks-results.md).
VERSITYGW ?= $(LOCALBIN)/versitygw
VERSITYGW_VERSION ?= v1.8.0

.PHONY: versitygw
versitygw: $(VERSITYGW) ## Build the versitygw S3 server into bin/, for the S3 provider's tests.
$(VERSITYGW): $(LOCALBIN)
	$(call go-install-tool,$(VERSITYGW),github.com/versity/versitygw/cmd/versitygw,$(VERSITYGW_VERSION))
# external-dns's webhook server with the inmemory, rfc2136 and pdns providers
# (hack/external-dns-webhook), for the webhook DNS provider's tests against the
# real server (internal/external/dns/webhook; controlplane.StartWebhookServer
# finds it in bin/). The external-dns version is pinned in go.mod.pinned; it
# needs Go 1.27, which GOTOOLCHAIN fetches from the module proxy, so the module
# is built in a temporary directory rather than kept as a go.mod in the tree,
# where tools running this repository's Go would trip on it. The full
# external-dns binary cannot be built from the module proxy (some of its
# providers' modules are not served), and would take far longer.
EXTERNAL_DNS_WEBHOOK ?= $(LOCALBIN)/external-dns-webhook
EXTERNAL_DNS_VERSION := $(shell awk '$$1 == "sigs.k8s.io/external-dns" {print $$2}' hack/external-dns-webhook/go.mod.pinned)
EXTERNAL_DNS_GOTOOLCHAIN ?= go1.27.4

.PHONY: external-dns-webhook
external-dns-webhook: $(EXTERNAL_DNS_WEBHOOK)-$(EXTERNAL_DNS_VERSION) ## Build external-dns's webhook server (inmemory, rfc2136, pdns) into bin/, for the webhook DNS provider's tests.
	ln -sf "$$(basename "$<")" "$(EXTERNAL_DNS_WEBHOOK)"
$(EXTERNAL_DNS_WEBHOOK)-$(EXTERNAL_DNS_VERSION): hack/external-dns-webhook/main.go hack/external-dns-webhook/go.mod.pinned hack/external-dns-webhook/go.sum.pinned | $(LOCALBIN)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp hack/external-dns-webhook/main.go "$$tmp/main.go"; \
	cp hack/external-dns-webhook/go.mod.pinned "$$tmp/go.mod"; \
	cp hack/external-dns-webhook/go.sum.pinned "$$tmp/go.sum"; \
	echo "Building external-dns $(EXTERNAL_DNS_VERSION)'s webhook server with $(EXTERNAL_DNS_GOTOOLCHAIN)"; \
	cd "$$tmp" && GOTOOLCHAIN=$(EXTERNAL_DNS_GOTOOLCHAIN) GOFLAGS=-mod=readonly go build -trimpath -o "$@" main.go

.PHONY: helm
helm: $(HELM) ## Install helm into bin/.
$(HELM): $(LOCALBIN)
	$(call go-install-tool,$(HELM),helm.sh/helm/v3/cmd/helm,$(HELM_VERSION))

# go-install-tool installs a versioned tool into bin/ as NAME-VERSION and links
# NAME to it, so changing a pinned version reinstalls it.
# $1 - target path with name of binary, $2 - package url, $3 - version
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)" 2>/dev/null)" = "$$(basename "$(1)-$(3)")" ] || { \
set -e; \
package=$(2)@$(3) ;\
echo "Installing $${package}" ;\
rm -f "$(1)" ;\
GOBIN="$(LOCALBIN)" go install $${package} ;\
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)" ;\
} ;\
ln -sf "$$(basename "$(1)-$(3)")" "$(1)"
endef
