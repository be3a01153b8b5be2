// patch-relaxed.js - build.sh's last step for the relaxed-SIMD build:
//
//   node scripts/patch-relaxed.js web/wasm/attention-relaxed.wasm
//
// clang 14 (Debian's emcc 3.1.6) emits __builtin_wasm_fma_f32x4 as the pre-standard opcode
// 0xfd 0xaf 0x01 ("f32x4.fma" of the relaxed-SIMD drafts), which today's engines reject. The
// standard f32x4.relaxed_madd is 0xfd 0x85 0x02: as long (three bytes), the same three f32x4
// operands in the same order, a·b + c. c_src/attention.c passes them in that order, so the
// rewrite is a byte swap, made only inside the code section. To be sure that no immediate or
// other byte run was taken for an instruction, the number of rewritten places must equal the
// number of such instructions that binaryen's disassembler (wasm-dis) finds; otherwise the
// build fails. Then the module must validate where the engine has relaxed SIMD.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';

const file = process.argv[2];
const bytes = fs.readFileSync(file);
const die = (msg) => { console.error(`patch-relaxed: ${msg}`); process.exit(1); };

function leb(buf, at) {
  let result = 0, shift = 0, b;
  do { b = buf[at++]; result |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
  return [result >>> 0, at];
}

// the code section (id 10)
let at = 8, code = null;
while (at < bytes.length) {
  const id = bytes[at];
  const [size, body] = leb(bytes, at + 1);
  if (id === 10) code = [body, body + size];
  at = body + size;
}
if (!code) die(`${file} has no code section`);

const OLD = [0xfd, 0xaf, 0x01], NEW = [0xfd, 0x85, 0x02];
const places = [];
for (let i = code[0]; i + 3 <= code[1]; i++) {
  if (bytes[i] === OLD[0] && bytes[i + 1] === OLD[1] && bytes[i + 2] === OLD[2]) places.push(i);
}
const text = execFileSync('wasm-dis', ['--enable-simd', '--enable-relaxed-simd', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
const instructions = (text.match(/\(f32x4\.relaxed_fma\b/g) ?? []).length;
if (instructions === 0) die(`${file} holds no fused multiply-add: was it built with -DATTN_RELAXED -mrelaxed-simd?`);
if (places.length !== instructions) die(`${places.length} byte runs look like the old opcode but wasm-dis finds ${instructions} instructions`);
for (const i of places) bytes.set(NEW, i);
fs.writeFileSync(file, bytes);

// validate where this Node can (V8 ships relaxed SIMD from 11.4; Node 20 has it behind a flag)
const check = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', '-e',
  `const fs = require('fs'); process.exit(WebAssembly.validate(fs.readFileSync(${JSON.stringify(file)})) ? 0 : 3)`], { encoding: 'utf8' });
if (check.status === 3) die(`${file} does not validate after the rewrite`);
console.log(`patch-relaxed: ${places.length} fused multiply-adds rewritten to f32x4.relaxed_madd in ${file}` +
  (check.status === 0 ? ' (validated)' : ` (not validated: this Node cannot run relaxed SIMD: ${check.stderr.trim().split('\n')[0]})`));
