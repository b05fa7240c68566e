#!/bin/sh
# Headless Chromium for the visualiser's browser test (tests/test_viz.py).
# Idempotent: installs only when /usr/bin/chromium is missing. Debian/Ubuntu (apt) only;
# the test skips itself, with the reason, where Chromium is absent.
set -eu

if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: no apt-get here; install Chromium by hand (the browser test skips without it)" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium chromium-driver
