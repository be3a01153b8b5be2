// long-functions.js - list the functions longer than a screen (80 lines by default) in the
// hand-written sources: JavaScript in web/, bench/, bin/ and scripts/, C in c_src/.
//
//   node scripts/long-functions.js [--max 80] [DIR ...]
//
// A function starts at a line that opens a function (a `function` declaration or expression,
// an arrow function whose body is a block, a class method, or a C function definition; a
// class is listed like a function, as a whole) and
// ends where its braces close; nested functions are listed too, each with its own length.
// Generated files (web/wasm/, web/dist/, *-wasm.js) and data tables are not functions.
// Exits 0; it informs, it does not judge.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const maxAt = args.indexOf('--max');
const MAX = maxAt >= 0 ? Number(args.splice(maxAt, 2)[1]) : 80;
const dirs = args.length ? args : ['web', 'bench', 'bin', 'scripts', 'c_src'];

const GENERATED = /(^|\/)(dist|wasm|node_modules)\/|-wasm\.js$/;

function files(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (GENERATED.test(rel + (e.isDirectory() ? '/' : ''))) continue;
    if (e.isDirectory()) out.push(...files(rel));
    else if (/\.(m?js|c|h)$/.test(e.name)) out.push(rel);
  }
  return out;
}

// strip strings, template literals, regexes (roughly) and comments so braces can be counted
function code(line, state) {
  let out = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i], n = line[i + 1];
    if (state.block) { if (c === '*' && n === '/') { state.block = false; i++; } continue; }
    if (state.quote) {
      if (c === '\\') { i++; continue; }
      if (c === state.quote) state.quote = null;
      continue;
    }
    if (c === '/' && n === '*') { state.block = true; i++; continue; }
    if (c === '/' && n === '/') break;
    if (c === '"' || c === "'" || c === '`') { state.quote = c; continue; }
    out += c;
  }
  if (state.quote !== '`') state.quote = null;   // only template literals span lines
  return out;
}

const JS_START = /^\s*(export\s+)?(default\s+)?class\b|^\s*(export\s+)?(async\s+)?function\b|=>\s*\{\s*$|^\s*(static\s+|async\s+|get\s+|set\s+)*[A-Za-z_$][\w$]*\s*\([^;]*\)\s*\{\s*$|\bfunction\s*\*?\s*[\w$]*\s*\(/;
const C_START = /^[A-Za-z_][\w\s\*]*\b([a-z_]\w*)\s*\([^;]*$/;

function longFunctions(file) {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const isC = /\.[ch]$/.test(file);
  const state = { block: false, quote: null };
  const open = [];   // { name, line, depth }
  const found = [];
  let depth = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const text = code(raw, state);
    const starts = isC ? C_START.test(raw) && depth === 0 && !/^\s*(return|if|for|while|switch)\b/.test(raw) : JS_START.test(text) && !/^\s*(if|for|while|switch|catch)\b/.test(text);
    if (starts && text.includes('{')) {
      const name = (isC ? C_START.exec(raw)?.[1] : /(?:class\s+([\w$]+))|(?:function\s*\*?\s*([\w$]+))|([\w$]+)\s*(?:=|:)\s*(?:async\s*)?(?:function|\()|^\s*(?:static\s+|async\s+|get\s+|set\s+)*([\w$]+)\s*\(/.exec(text)?.slice(1).find(Boolean)) || '(anonymous)';
      open.push({ name, line: i + 1, depth });
    } else if (starts && isC) {
      // a C definition whose brace is on a later line
      open.push({ name: C_START.exec(raw)[1], line: i + 1, depth, pending: true });
    }
    for (const c of text) {
      if (c === '{') { depth++; const top = open[open.length - 1]; if (top?.pending) { top.pending = false; top.depth = depth - 1; } }
      else if (c === '}') {
        depth--;
        while (open.length && !open[open.length - 1].pending && open[open.length - 1].depth === depth) {
          const f = open.pop();
          const length = i + 1 - f.line + 1;
          if (length > MAX) found.push({ file, name: f.name, line: f.line, length });
        }
      }
    }
    if (isC && open.length && open[open.length - 1].pending && /;\s*$/.test(text)) open.pop();   // a prototype
  }
  return found;
}

const all = dirs.flatMap((d) => (fs.existsSync(path.join(root, d)) ? files(d) : [])).flatMap(longFunctions);
all.sort((a, b) => b.length - a.length);
console.log(`functions over ${MAX} lines in ${dirs.join(', ')}: ${all.length}`);
for (const f of all) console.log(`${String(f.length).padStart(5)}  ${f.file}:${f.line}  ${f.name}`);
