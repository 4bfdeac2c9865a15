#!/bin/sh
# Renders the PNG sizes of the icon from the SVG (committed; rerun after editing the SVG).
# Needs rsvg-convert (Debian: librsvg2-bin).
set -eu
cd "$(dirname "$0")"
for s in 16 22 24 32 48 64 128 256 512; do
  mkdir -p "$s"
  rsvg-convert -w "$s" -h "$s" org.exlstudio.ExlStudio.svg -o "$s/org.exlstudio.ExlStudio.png"
done
