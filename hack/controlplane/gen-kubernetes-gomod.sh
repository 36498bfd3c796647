#!/usr/bin/env bash
# Points hack/controlplane/kubernetes/go.mod at Kubernetes VERSION, the
# Makefile's ENVTEST_K8S_VERSION (`make controlplane-gomod` runs it with that
# value): it requires k8s.io/kubernetes vVERSION and replaces every staging
# module that k8s.io/kubernetes replaces with a local path (which its module
# zip does not hold) with the published module of the same release,
# v0.MINOR.PATCH. build.sh refuses to build a version go.mod does not pin.
#
# Needs the Go module proxy. Run with the current version, it changes nothing.
set -euo pipefail

version="${1:?usage: gen-kubernetes-gomod.sh VERSION, e.g. 1.37.1 (make controlplane-gomod)}"
staging="v0.${version#*.}" # 1.37.1 -> v0.37.1
cd "$(dirname "${BASH_SOURCE[0]}")/kubernetes"

upstream="$(go mod download -json "k8s.io/kubernetes@v${version}" | awk -F'"' '$2 == "GoMod" { print $4 }')"
mapfile -t modules < <(awk '$2 == "=>" && $3 ~ /^\.\/staging\// { print $1 }' "$upstream" | sort -u)
if [[ ${#modules[@]} -eq 0 ]]; then
  echo "k8s.io/kubernetes v${version}'s go.mod replaces no staging module: $upstream" >&2
  exit 1
fi

edits=(-require="k8s.io/kubernetes@v${version}")
# Replaces of modules the new release no longer has go; the rest are
# rewritten in place.
for old in $(go mod edit -json | awk -F'"' '$2 == "Old" { getline; print $4 }'); do
  if ! printf '%s\n' "${modules[@]}" | grep -qxF "$old"; then
    edits+=(-dropreplace="$old")
  fi
done
for m in "${modules[@]}"; do
  edits+=(-replace="${m}=${m}@${staging}")
done
go mod edit "${edits[@]}"
go mod tidy
echo "hack/controlplane/kubernetes/go.mod: k8s.io/kubernetes v${version}, ${#modules[@]} staging modules at ${staging}"
