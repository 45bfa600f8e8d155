#!/usr/bin/env bash
# Builds the Ensemble image. Where the Rust toolchain image is present (or can be pulled, with
# ENSEMBLE_PULL=1), through docker/Dockerfile (cargo-chef); otherwise from a release binary
# built here, through docker/Dockerfile.host. The runtime base comes from docker/base-image.sh
# when it is not present. Prints the image's size.
#   bash docker/build-image.sh [tag]          (default ensemble:local)
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-ensemble:local}"
rust_image="rust:1.95-slim-bookworm"
bash docker/base-image.sh
if [ "${ENSEMBLE_PULL:-0}" = 1 ]; then docker pull "$rust_image" || true; fi
if docker image inspect "$rust_image" >/dev/null 2>&1; then
  docker build -f docker/Dockerfile -t "$tag" .
else
  target="${CARGO_TARGET_DIR:-target}"
  cargo build --release --locked --bin ensemble
  context="$(mktemp -d)"
  trap 'rm -rf "$context"' EXIT
  cp "$target/release/ensemble" "$context/ensemble"
  strip "$context/ensemble" 2>/dev/null || true
  cp -r config "$context/config"
  cp docker/Dockerfile.host "$context/Dockerfile"
  docker build -t "$tag" "$context"
fi
echo "image $tag: $(docker image inspect "$tag" --format '{{.Size}}') bytes"
