#!/bin/sh
# Photographs the PR comment of four cases as GitHub renders it
# (docs/report.md, "The first screen"). Needs node/npm and chromium
# (apt-get install -y chromium fonts-noto-color-emoji fonts-noto-cjk).
# Run from the repository root.
set -eu
out=docs/report
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
INGEST_REPORT_SCREENSHOTS=$PWD/$out go test ./ingest/report -run TestFirstScreenScreenshots -count=1
npm install --silent --no-audit --no-fund --prefix "$tools" marked@18 marked-alert@2
cp $out/render.mjs "$tools/"
node "$tools/render.mjs" $out/*.md
for md in $out/*.md; do
	name=${md%.md}
	chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=900,760 \
		--screenshot="$name.png" "file://$PWD/$name.html" 2>/dev/null
	rm -f "$name.html" "$md"
done
