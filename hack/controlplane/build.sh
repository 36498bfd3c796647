#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl and kwok) from source through the Go module proxy and
# installs it into setup-envtest's store, keyed by Kubernetes version, so that
# `setup-envtest use --installed-only` and the test harness find it.
#
# setup-envtest cannot download binaries on machines without internet access,
# and kind needs a docker engine; building from source needs only the module
# proxy. The store lives outside the repository so a fresh clone on the same
# machine reuses it: a second run with everything present takes about a second.
# Builds on one machine take a lock beside the store (flock), so a second one
# started meanwhile (a `make run` and a `make demo` in two terminals) waits for
# the first and then finds everything built.
#
# With `--kubectl FILE` it builds kubectl alone into FILE (about half a
# minute): `make install`, `make deploy` and `make undeploy` need nothing
# more against an existing cluster.
#
# CONTROLPLANE_VERSION is the Makefile's ENVTEST_K8S_VERSION, the one place
# the version is set; kubernetes/go.mod must pin that version's source
# (hack/controlplane/gen-kubernetes-gomod.sh rewrites it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${CONTROLPLANE_VERSION:?set CONTROLPLANE_VERSION, or run make controlplane (the Makefile sets it: ENVTEST_K8S_VERSION)}"
only_kubectl=""
if [[ "${1:-}" == "--kubectl" ]]; then
  only_kubectl="${2:?--kubectl needs the file to write}"
fi

# The binaries are stamped with version, so the source must be that
# version's: refuse to stamp v1.36.0 on a v1.37.1 build.
pinned="$(awk '$1 == "k8s.io/kubernetes" { sub(/^v/, "", $2); print $2 }' "$here/kubernetes/go.mod")"
if [[ "$pinned" != "$version" ]]; then
  echo "hack/controlplane/kubernetes/go.mod pins k8s.io/kubernetes v${pinned}, not v${version}:" >&2
  echo "run hack/controlplane/gen-kubernetes-gomod.sh ${version} (make controlplane-gomod) first" >&2
  exit 1
fi
goos="$(go env GOOS)"
goarch="$(go env GOARCH)"
store="${ENVTEST_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/kubebuilder-envtest}"
dest="${store}/k8s/${version}-${goos}-${goarch}"

# The stamp covers every input of the build, so editing a pinned version or
# this script rebuilds, and nothing else does.
stamp="$(cat "$here/build.sh" "$here"/*/go.mod "$here"/*/go.sum | sha256sum | cut -d' ' -f1)"
binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)

up_to_date() {
  [[ -f "$dest/.stamp" && "$(cat "$dest/.stamp")" == "$stamp" ]] || return 1
  for b in "${binaries[@]}"; do [[ -x "$dest/$b" ]] || return 1; done
  [[ -f "$dest/kwok-stages.yaml" ]]
}

export CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod"

# build MODULE_DIR PACKAGE FILE [LDFLAGS] writes to a temporary file first so
# an interrupted build never leaves a truncated binary that looks installed.
# The temporary file's name is its own, so two builds of kubectl alone into
# one file (which take no lock) cannot move each other's away.
build() {
  local module="$1" pkg="$2" out="$3" ldflags="${4:-}"
  local tmp
  tmp="$(mktemp "$(dirname "$out")/.$(basename "$out").tmp.XXXXXX")"
  echo "building $(basename "$out") (${pkg})"
  local start=$SECONDS
  (cd "$here/$module" && go build -ldflags "-s -w ${ldflags}" -o "$tmp" "$pkg")
  mv -f "$tmp" "$out"
  echo "built $(basename "$out") in $((SECONDS - start))s"
}

# Without these the binaries report v0.0.0, which kubectl and client-go's
# discovery treat as ancient.
minor="$(echo "$version" | cut -d. -f2)"
kver="-X k8s.io/component-base/version.gitVersion=v${version}"
kver+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
kver+=" -X k8s.io/component-base/version.gitTreeState=clean"

if [[ -n "$only_kubectl" ]]; then
  mkdir -p "$(dirname "$only_kubectl")"
  build kubernetes k8s.io/kubernetes/cmd/kubectl "$only_kubectl" "$kver"
  exit 0
fi

# One build at a time per store and version: the lock file lives beside the
# store's version directory and is held until this script exits, however it
# exits, so a build that was interrupted never leaves the next one waiting.
# A second build waits for the first, then finds its stamp and returns.
mkdir -p "$(dirname "$dest")"
lock="$(dirname "$dest")/.${version}-${goos}-${goarch}.lock"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$lock"
  if ! flock -n 9; then
    echo "waiting for another build of the control plane to finish (lock ${lock})"
    flock 9
  fi
else
  echo "flock (util-linux) is not installed: this build does not wait for another one started meanwhile" >&2
fi

if up_to_date; then
  echo "control plane v${version} is up to date in ${dest}"
  exit 0
fi

mkdir -p "$dest"
rm -f "$dest/.stamp"

build etcd go.etcd.io/etcd/server/v3 "$dest/etcd"
build kubernetes k8s.io/kubernetes/cmd/kube-apiserver "$dest/kube-apiserver" "$kver"
build kubernetes k8s.io/kubernetes/cmd/kube-controller-manager "$dest/kube-controller-manager" "$kver"
build kubernetes k8s.io/kubernetes/cmd/kube-scheduler "$dest/kube-scheduler" "$kver"
build kubernetes k8s.io/kubernetes/cmd/kubectl "$dest/kubectl" "$kver"
build kwok sigs.k8s.io/kwok/cmd/kwok "$dest/kwok"

# kwok refuses to start without stages. Its module ships them; these make a
# node Ready with a heartbeat lease, and pods Running and Ready right away.
stages="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
{
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$stages/$f"
  done
} > "$dest/kwok-stages.yaml"

echo "$stamp" > "$dest/.stamp"
echo "control plane v${version} installed in ${dest}"
