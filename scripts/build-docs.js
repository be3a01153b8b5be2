// build-docs.js - the Markdown files the page links to, rendered to HTML beside their sources, so
// that a link opens a readable page instead of raw Markdown (issue 24, defect 16). package.json
// has no repository URL to link a rendered GitHub page to, and the page works from disk and
// offline, so the HTML is made here and committed, like web/dist/page.js.
//
//   node scripts/build-docs.js           write DOCS[*].html
//   node scripts/build-docs.js --check   exit 1 if a committed .html differs from a fresh render
//
// The Markdown is this repository's own, and the renderer knows only what it uses: # headings,
// paragraphs, ``` fenced code, | tables |, - and 1. lists (with indented continuation lines),
// **bold**, `code` and [links](href). Every text is HTML-escaped; a link to another .md file that
// is rendered here points to its .html.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCS = ['docs/MODELS.md', 'web/models/toy-zh/README.md'];

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A link's target: a rendered .md becomes its .html; anything else is kept. */
function target(href, from) {
  if (/^[a-z]+:|^#/i.test(href)) return href;
  const [file, hash = ''] = href.split('#');
  const abs = path.relative(root, path.resolve(path.dirname(path.join(root, from)), file)).split(path.sep).join('/');
  return DOCS.includes(abs) ? file.replace(/\.md$/, '.html') + (hash ? `#${hash}` : '') : href;
}

/** Inline Markdown: code spans first (their text is literal), then links, then bold. */
function inline(text, from) {
  const out = [];
  for (const [k, part] of text.split(/(`[^`]+`)/).entries()) {
    if (k % 2) { out.push(`<code>${esc(part.slice(1, -1))}</code>`); continue; }
    out.push(esc(part)
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, t, href) => `<a href="${target(href.replace(/&amp;/g, '&'), from).replace(/&/g, '&amp;')}">${t}</a>`)
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>'));
  }
  return out.join('');
}

const slug = (s) => s.toLowerCase().replace(/[`*]/g, '').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '');
const cells = (line) => line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());

/** One block starting at lines[i]: [html, next i]. */
function block(lines, i, from) {
  const line = lines[i];
  const fence = line.match(/^```(\w*)/);
  if (fence) {
    let j = i + 1;
    while (j < lines.length && !lines[j].startsWith('```')) j++;
    const lang = fence[1] ? ` class="language-${fence[1]}"` : '';
    return [`<pre><code${lang}>${esc(lines.slice(i + 1, j).join('\n'))}</code></pre>`, j + 1];
  }
  const head = line.match(/^(#{1,6})\s+(.*)$/);
  if (head) {
    const n = head[1].length;
    return [`<h${n} id="${slug(head[2])}">${inline(head[2], from)}</h${n}>`, i + 1];
  }
  if (line.startsWith('|') && /^\|?\s*:?-{3,}/.test(lines[i + 1] ?? '')) {
    const th = cells(line).map((c) => `<th>${inline(c, from)}</th>`).join('');
    let j = i + 2;
    const rows = [];
    while (j < lines.length && lines[j].startsWith('|')) rows.push(`<tr>${cells(lines[j++]).map((c) => `<td>${inline(c, from)}</td>`).join('')}</tr>`);
    return [`<table>\n<thead><tr>${th}</tr></thead>\n<tbody>\n${rows.join('\n')}\n</tbody>\n</table>`, j];
  }
  const item = /^(-|\d+\.)\s+/;
  if (item.test(line)) {
    const tag = line.startsWith('-') ? 'ul' : 'ol';
    const items = [];
    let j = i;
    while (j < lines.length && item.test(lines[j])) {
      // the item: its first line, then lines indented by 2 or more (blank ones between them too)
      const body = [lines[j++].replace(item, '')];
      const indented = (k) => /^\s{2,}\S/.test(lines[k] ?? '');
      for (;;) {
        if (indented(j)) body.push(lines[j++].replace(/^\s{2,3}/, ''));
        else if (!(lines[j] ?? 'x').trim() && indented(j + 1)) { body.push(''); j++; } else break;
      }
      const html = blocks(body, from);
      items.push(`<li>${html.length === 1 ? html[0].replace(/^<p>|<\/p>$/g, '') : html.join('\n')}</li>`);
    }
    return [`<${tag}>\n${items.join('\n')}\n</${tag}>`, j];
  }
  let j = i;
  const text = [];
  while (j < lines.length && lines[j].trim() && !/^(```|#{1,6}\s|\||-\s|\d+\.\s)/.test(lines[j])) text.push(lines[j++].trim());
  if (!text.length) text.push(lines[j++].trim());    // a line that only looked like a block
  return [`<p>${inline(text.join(' '), from)}</p>`, j];
}

/** Lines of Markdown as a list of HTML blocks. */
function blocks(lines, from) {
  const out = [];
  for (let i = 0; i < lines.length;) {
    if (!lines[i].trim()) { i++; continue; }
    const [html, next] = block(lines, i, from);
    out.push(html);
    i = next;
  }
  return out;
}

/** The Markdown file `from` (relative to the root) as a standalone HTML page. */
export function renderDoc(from) {
  const lines = fs.readFileSync(path.join(root, from), 'utf8').split('\n');
  const body = blocks(lines, from);
  const title = lines.find((l) => l.startsWith('# '))?.slice(2) ?? from;
  return `<!doctype html>
<!-- generated by scripts/build-docs.js from ${from}; do not edit -->
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${esc(title.replace(/`/g, ''))}</title>
<style>
  :root { color-scheme: light dark; }
  body { max-width: 52rem; margin: 0 auto; padding: 24px 16px 48px; font: 16px/1.6 system-ui, "Noto Sans CJK SC", sans-serif; }
  pre { overflow-x: auto; padding: 12px; border-radius: 8px; background: rgb(127 127 127 / 12%); }
  code { font: 0.9em ui-monospace, "DejaVu Sans Mono", monospace; overflow-wrap: break-word; }
  pre code { overflow-wrap: normal; }
  table { display: block; overflow-x: auto; border-collapse: collapse; margin: 12px 0; }
  th, td { padding: 4px 10px; border: 1px solid rgb(127 127 127 / 35%); text-align: left; vertical-align: top; }
</style>
</head>
<body>
<p><small>${esc(from)}</small></p>
${body.join('\n')}
</body>
</html>
`;
}

const outOf = (from) => from.replace(/\.md$/, '.html');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const from of DOCS) {
    const out = path.join(root, outOf(from)), html = renderDoc(from);
    if (!check) { fs.writeFileSync(out, html); console.log(`build-docs: wrote ${outOf(from)}`); continue; }
    if (!fs.existsSync(out) || fs.readFileSync(out, 'utf8') !== html) { stale++; console.error(`build-docs: ${outOf(from)} is stale: run node scripts/build-docs.js`); }
  }
  if (stale) process.exit(1);
}
