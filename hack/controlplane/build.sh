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
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${CONTROLPLANE_VERSION:-1.37.1}"
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

if up_to_date; then
  echo "control plane v${version} is up to date in ${dest}"
  exit 0
fi

mkdir -p "$dest"
rm -f "$dest/.stamp"
export CGO_ENABLED=0 GOFLAGS="-trimpath -mod=mod"

# build MODULE_DIR PACKAGE NAME [LDFLAGS] writes to a temporary file first so
# an interrupted build never leaves a truncated binary that looks installed.
build() {
  local module="$1" pkg="$2" name="$3" ldflags="${4:-}"
  echo "building ${name} (${pkg})"
  local start=$SECONDS
  (cd "$here/$module" && go build -ldflags "-s -w ${ldflags}" -o "$dest/.${name}.tmp" "$pkg")
  mv -f "$dest/.${name}.tmp" "$dest/$name"
  echo "built ${name} in $((SECONDS - start))s"
}

# Without these the binaries report v0.0.0, which kubectl and client-go's
# discovery treat as ancient.
minor="$(echo "$version" | cut -d. -f2)"
kver="-X k8s.io/component-base/version.gitVersion=v${version}"
kver+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}"
kver+=" -X k8s.io/component-base/version.gitTreeState=clean"

build etcd go.etcd.io/etcd/server/v3 etcd
build kubernetes k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$kver"
build kubernetes k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager "$kver"
build kubernetes k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler "$kver"
build kubernetes k8s.io/kubernetes/cmd/kubectl kubectl "$kver"
build kwok sigs.k8s.io/kwok/cmd/kwok kwok

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
