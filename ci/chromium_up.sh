#!/usr/bin/env bash
# Install headless Chromium (Debian package `chromium`) when no Chromium binary is on PATH.
# Used before `make test` so that tests/workflow/test_report_browser.py can render the shared run's report.
# Idempotent; needs root (or sudo) and a reachable apt mirror only when Chromium is missing.
set -euo pipefail

for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then
        echo "chromium_up: found $(command -v "$name"): $("$name" --version 2>/dev/null || echo 'version unknown')"
        exit 0
    fi
done

if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium_up: no Chromium on PATH and no apt-get to install it; install the 'chromium' package by hand" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "chromium_up: installing Chromium needs root (or sudo)" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium_up: installed $(command -v chromium): $(chromium --version 2>/dev/null || echo 'version unknown')"
