#!/usr/bin/env bash
# Makes the runtime base image the Dockerfiles name (debian:bookworm-slim) from the Debian
# archive apt already uses, for machines that reach no public image registry: mmdebstrap
# builds bookworm's essential packages plus CA certificates (for https RPC endpoints), the
# files a service never uses are left out (documentation, locales, the Perl library the
# certificate tools pulled in, character-set converters), and `docker import` turns the
# root into an image. Does nothing when the image exists.
#   bash docker/base-image.sh [tag]
set -euo pipefail
tag="${1:-debian:bookworm-slim}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base image $tag exists"
  exit 0
fi
command -v mmdebstrap >/dev/null || { echo "needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
# The archive apt uses: the first deb URI of the system's sources.
mirror="$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null | grep -m1 -v security || true)"
mirror="${mirror:-http://deb.debian.org/debian/}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mmdebstrap --variant=essential --include=ca-certificates \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --customize-hook='rm -rf "$1"/usr/share/perl "$1"/usr/lib/x86_64-linux-gnu/perl "$1"/usr/lib/x86_64-linux-gnu/gconv "$1"/usr/share/info "$1"/var/cache/* "$1"/var/lib/apt/lists/*' \
  bookworm "$work/rootfs.tar" "$mirror"
docker import "$work/rootfs.tar" "$tag"
docker image ls "$tag"
