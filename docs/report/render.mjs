// Renders Markdown files as GitHub renders a PR comment (GFM with alerts,
// the essentials of its comment stylesheet) into HTML beside them.
// Usage: node render.mjs FILE.md… (with marked and marked-alert installed).
import { readFileSync, writeFileSync } from "node:fs";
import { Marked } from "marked";
import markedAlert from "marked-alert";

const css = `
body { margin: 0; padding: 16px; background: #fff; color: #1f2328;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Noto Color Emoji"; }
.comment { max-width: 860px; border: 1px solid #d1d9e0; border-radius: 6px; padding: 16px; }
p, ul, table, blockquote, details, .markdown-alert { margin: 0 0 16px; }
ul { padding-left: 2em; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: rgba(129,139,152,.12);
  padding: .2em .4em; border-radius: 6px; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; } tr:nth-child(2n) { background: #f6f8fa; }
a { color: #0969da; text-decoration: none; }
summary { cursor: pointer; }
.markdown-alert { padding: 8px 16px; border-left: .25em solid; }
.markdown-alert > :last-child { margin-bottom: 0; }
.markdown-alert-title { display: flex; align-items: center; gap: 8px; font-weight: 500; margin-bottom: 4px; }
.markdown-alert-title svg { fill: currentColor; }
.markdown-alert-warning { border-color: #9a6700; } .markdown-alert-warning .markdown-alert-title { color: #9a6700; }
.markdown-alert-caution { border-color: #cf222e; } .markdown-alert-caution .markdown-alert-title { color: #d1242f; }
.markdown-alert-note { border-color: #0969da; } .markdown-alert-note .markdown-alert-title { color: #0969da; }
`;

const marked = new Marked({ gfm: true }).use(markedAlert());
for (const file of process.argv.slice(2)) {
  const html = marked.parse(readFileSync(file, "utf8"));
  writeFileSync(file.replace(/\.md$/, ".html"),
    `<!doctype html><meta charset="utf-8"><style>${css}</style><div class="comment">${html}</div>\n`);
}
