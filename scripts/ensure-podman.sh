#!/bin/sh
# Make sure podman, runc and mmdebstrap are here for the container tests (tests/machines/boxes).
# Idempotent and quiet when all three are already installed; installs them only as root with apt.
set -eu

if command -v podman >/dev/null 2>&1 && [ -x /usr/sbin/runc ] && command -v mmdebstrap >/dev/null 2>&1; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-podman: podman, runc or mmdebstrap is missing; install them first, e.g." >&2
    echo "    sudo apt-get install -y podman runc mmdebstrap" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
stamp=/tmp/.ensure-podman-apt-updated
if [ ! -e "$stamp" ]; then
    apt-get update -qq >/dev/null
    touch "$stamp"
fi
apt-get install -y -qq --no-install-recommends podman runc mmdebstrap uidmap >/dev/null
echo "ensure-podman: installed podman, runc and mmdebstrap" >&2
