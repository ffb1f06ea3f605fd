#!/usr/bin/env bash
# The tests of tables on Azure run Azurite, an npm package: they need Node.js 18 or newer and
# npm. Install them with apt-get when we run as root; otherwise say exactly what to install.
set -euo pipefail

node_major() {
  node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'
}

if command -v npm >/dev/null 2>&1 && [ "$(node_major)" -ge 18 ] 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Node.js and npm (for Azurite, the Azure Storage emulator of the tests)..."
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  exit 0
fi
echo "The tests need Node.js 18 or newer and npm (for Azurite), and they are missing or older." >&2
echo "Install them, e.g.: sudo apt-get install nodejs npm (Debian/Ubuntu), brew install node" >&2
echo "(macOS), then run make again." >&2
exit 1
