#!/usr/bin/env bash
# A stand-in for the official python:3.10-slim-bookworm image, for machines that reach Debian's
# packages but no container registry (`make image-base`). Same layout as the official image:
# Debian 12 (mmdebstrap, minbase), Python 3.10 under /usr/local (python, python3, pip), LANG C.UTF-8,
# ca-certificates. The Python is this machine's pyenv 3.10 (.python-version); its RUNPATH and
# sysconfig name pyenv's prefix, which is kept as a link to /usr/local. The image trusts this
# machine's CA bundle (a TLS-terminating egress proxy's CA included, where there is one).
#
#   kubeflow/base_image.sh TAG
set -euo pipefail
tag=${1:?usage: kubeflow/base_image.sh TAG}
prefix=$(cd "$(dirname "$0")/.." && pyenv prefix "$(cat .python-version)")
for tool in mmdebstrap docker; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing (apt-get install docker.io mmdebstrap)" >&2; exit 2; }
done
# What the official image's Python links against (ldd of its lib-dynload), and what pip needs.
packages=ca-certificates,netbase,tzdata,libssl3,libsqlite3-0,libffi8,libbz2-1.0,liblzma5,libreadline8,libncursesw6,libuuid1,zlib1g,libexpat1,libgdbm6,libnsl2,libtirpc3,libcrypt1
echo "base image: Debian bookworm (minbase) + Python from $prefix -> $tag"
mmdebstrap --quiet --variant=minbase --include="$packages" \
  --customize-hook="tar -C '$prefix' --exclude=./lib/python3.10/test --exclude='*.pth' --exclude=__pycache__ -c . | tar -C \"\$1/usr/local\" -x" \
  --customize-hook="mkdir -p \"\$1$(dirname "$prefix")\" && ln -s /usr/local \"\$1$prefix\"" \
  --customize-hook="cp /etc/ssl/certs/ca-certificates.crt \"\$1/etc/ssl/certs/ca-certificates.crt\"" \
  --customize-hook='chroot "$1" ldconfig' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm - |
  docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]' \
    - "$tag" >/dev/null
docker run --rm "$tag" python -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, readline, uuid; import sys; print("base image:", sys.version.split()[0], "ok")'
