#!/usr/bin/env bash
# kaleido (plotly's PNG export) needs a Chrome. Install Debian's chromium when we can; otherwise say how.
set -u
for b in chromium chromium-browser google-chrome google-chrome-stable; do
  command -v "$b" >/dev/null 2>&1 && exit 0
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for PNG export of plotly figures (apt-get, ~60 s)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && exit 0
fi
echo "WARNING: no Chrome/Chromium found; PNG export of figures will fail." >&2
echo "         Install one (Debian/Ubuntu: sudo apt-get install chromium) and re-run." >&2
exit 1
