// sections.js - one section of docs/BENCHMARKS.md rewritten alone (`node bench/bench.js --only
// model|llama`): the text from its heading to the next "## " heading is replaced; a section the
// file does not have yet goes after the section named `after` (or at the end). keptSections: what
// a full run (markdown.js) does not write itself but keeps, the sections other commands wrote.
import fs from 'node:fs';

export function writeSection(markdownPath, heading, text, { after } = {}) {
  const doc = fs.existsSync(markdownPath) ? fs.readFileSync(markdownPath, 'utf8') : '# Benchmarks\n';
  const section = `${heading}\n\n${text}\n`;
  // where a section ends: at the newline before the next "## " heading, or at the end of the file
  const end = (from) => { const i = doc.indexOf('\n## ', from); return i < 0 ? doc.length : i; };
  const start = doc.indexOf(`${heading}\n`);
  if (start >= 0) return fs.writeFileSync(markdownPath, doc.slice(0, start) + section + doc.slice(end(start + heading.length)));
  const prev = after ? doc.indexOf(`${after}\n`) : -1;
  if (prev < 0) return fs.writeFileSync(markdownPath, `${doc.trimEnd()}\n\n${section}`);
  const at = end(prev + after.length);
  fs.writeFileSync(markdownPath, `${doc.slice(0, at).trimEnd()}\n\n${section}${doc.slice(at)}`);
}

/** A section's text as the file has it now, heading included ('' when it has none): for a full run that keeps it. */
export function readSection(markdownPath, heading) {
  const doc = fs.existsSync(markdownPath) ? fs.readFileSync(markdownPath, 'utf8') : '';
  const start = doc.indexOf(`${heading}\n`);
  if (start < 0) return '';
  const next = doc.indexOf('\n## ', start + heading.length);
  return doc.slice(start, next < 0 ? doc.length : next).trimEnd();
}

// the parts of text that start at a line beginning with `mark` ("## " or "### "), each from its heading
// to the next such heading (the text before the first is left out)
function parts(text, mark) {
  const out = [];
  for (let i = text.startsWith(mark) ? 0 : text.indexOf(`\n${mark}`); i >= 0;) {
    const from = text[i] === '\n' ? i + 1 : i, next = text.indexOf(`\n${mark}`, from);
    out.push(text.slice(from, next < 0 ? text.length : next).trimEnd());
    i = next;
  }
  return out;
}
const headingOf = (part) => part.slice(0, (part.indexOf('\n') + 1 || part.length + 1) - 1);
// a heading's first four words: the same section although a run writes its figures into the heading
const keyOf = (heading) => heading.split(/\s+/).slice(0, 4).join(' ');

/**
 * What the file has that a full run's text lacks, so that the run keeps it: each "## " section
 * whose heading (its first four words) text does not have (written by `--only` runs and other commands: threads, heads,
 * GGUF, drawHeatmap…), and each "### " part of within's section (Results) that text's does not
 * have (a profile written by hand). -> { sections: [text], within: [text] }, in the file's order.
 */
export function keptSections(markdownPath, text, within = '## Results') {
  const doc = fs.existsSync(markdownPath) ? fs.readFileSync(markdownPath, 'utf8') : '';
  const keys = new Set([...parts(text, '## '), ...parts(text, '### ')].map((p) => keyOf(headingOf(p))));
  const has = (part) => keys.has(keyOf(headingOf(part)));
  const sections = parts(doc, '## ').filter((p) => !has(p));
  const oldWithin = parts(doc, '## ').find((p) => headingOf(p) === within) ?? '';
  return { sections, within: parts(oldWithin, '### ').filter((p) => !has(p)) };
}

/**
 * text with what keptSections finds kept: Results' parts at the end of Results (before the heading
 * `next`), the other sections at the end.
 */
export function withKept(markdownPath, text, { within = '## Results', next = '## GPT-2-small multi-head attention layer' } = {}) {
  const kept = keptSections(markdownPath, text, within);
  const at = text.indexOf(`\n\n${next}\n`);
  const out = kept.within.length && at >= 0 ? `${text.slice(0, at)}\n\n${kept.within.join('\n\n')}${text.slice(at)}` : text;
  return kept.sections.length ? `${out.trimEnd()}\n\n${kept.sections.join('\n\n')}\n` : out;
}
