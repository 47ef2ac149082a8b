#!/usr/bin/env bash
# Headless Chromium for tests/browser: Debian's `chromium` package, installed once.
# Idempotent: does nothing when /usr/bin/chromium already exists. Fails loudly otherwise.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  "$CHROMIUM" --version
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: $CHROMIUM is missing and apt-get is unavailable; install Debian's chromium package (owner: developer machine)" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x "$CHROMIUM" ]; then
  echo "error: apt-get install chromium finished but $CHROMIUM does not exist (owner: developer machine)" >&2
  exit 1
fi
"$CHROMIUM" --version
