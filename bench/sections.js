// sections.js - one section of docs/BENCHMARKS.md rewritten alone (`node bench/bench.js --only
// model|llama`): the text from its heading to the next "## " heading is replaced; a section the
// file does not have yet goes after the section named `after` (or at the end).
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
