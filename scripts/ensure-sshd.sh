#!/bin/sh
# Make sure OpenSSH's server and client are here for the SSH tests (DESIGN §12).
# Idempotent and quiet when both are already installed; installs them only as root with apt.
set -eu

if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-sshd: /usr/sbin/sshd or ssh is missing; install OpenSSH first, e.g." >&2
    echo "    sudo apt-get install -y openssh-server openssh-client" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# One `apt-get update` per boot is plenty: the stamp lives in /tmp so a reboot refreshes it.
stamp=/tmp/.ensure-sshd-apt-updated
if [ ! -e "$stamp" ]; then
    apt-get update -qq >/dev/null
    touch "$stamp"
fi
apt-get install -y -qq --no-install-recommends openssh-server openssh-client >/dev/null
# The tests start their own sshd on loopback; a system-wide one is not wanted.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl disable --now ssh >/dev/null 2>&1 || true
fi
echo "ensure-sshd: installed openssh-server and openssh-client" >&2
