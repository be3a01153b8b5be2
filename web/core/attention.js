// attention.js - the JavaScript face of the C core (c_src/attention.c and c_src/mha.c, built
// by build.sh); the package's "." export.
//
//   import { createAttention, AttentionError } from 'attnmap';
//   const attn = await createAttention();
//   const { weights } = attn.attention({ q, k, v });
//
// The wrapper owns wasm memory: every call lays out one block, writes the inputs, calls C
// and copies the results out. Nothing returned is a view into wasm memory. Every bad input
// becomes an AttentionError before C sees it. The parts, in the order a call meets them:
//   load.js      createAttention: the wasm compiled, instantiated and checked (exports.js)
//   ops.js       the operations, each a recipe: check, copy in, call, collect
//   args.js      reading and checking the arguments
//   memory.js    the block, the copies in and out, the C status as an error
//   errors.js    AttentionError, its codes and the text of its messages
export { createAttention, hasRelaxedSimd } from './load.js';
export { ErrorCode, AttentionError } from './errors.js';
export { toRows } from './args.js';
