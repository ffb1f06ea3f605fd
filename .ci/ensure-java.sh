#!/usr/bin/env bash
# PySpark 4 needs Java 17 or newer. Install it with apt-get when we run as root; otherwise
# say exactly what to install.
set -euo pipefail

java_major() {
  java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}

if command -v java >/dev/null 2>&1 && [ "$(java_major)" -ge 17 ] 2>/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Java 17 (openjdk-17-jre-headless) for PySpark..."
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  exit 0
fi
echo "dbt-hoodie needs Java 17 or newer for PySpark 4, and 'java' is missing or older." >&2
echo "Install it, e.g.: sudo apt-get install openjdk-17-jre-headless (Debian/Ubuntu)," >&2
echo "brew install openjdk@17 (macOS), then run make again." >&2
exit 1
