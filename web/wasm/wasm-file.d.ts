// Types of the subpaths `attnmap/attention.wasm` and `attnmap/attention-relaxed.wasm`.
//
// These are WebAssembly files, not JavaScript modules. What they are for: a host that loads the
// core itself gets the file's bytes, a `Response` for it, or a compiled `WebAssembly.Module`,
// and passes that to `createAttention({ wasm })` (type `WasmInput` below):
//
//   // Node, any version: the bytes
//   const wasm = fs.readFileSync(new URL(import.meta.resolve('attnmap/attention.wasm')));
//   // Vite: the file's URL (the `?url` specifier is typed by vite/client, not here)
//   import wasmUrl from 'attnmap/attention.wasm?url';
//   const attn = await createAttention({ wasm: fetch(wasmUrl) });
//
// No value is declared, because a plain `import` of the file gives none that hosts agree on:
// Node 24's `import * as m from 'attnmap/attention.wasm'` fails (the module imports Emscripten's
// `env` hook, which only the core's loader provides), Vite refuses a bare `.wasm` import, and
// webpack, Rollup and esbuild each need a plugin or rule whose output they define. Node 24's
// source-phase import, `import source mod from 'attnmap/attention.wasm'`, does give a
// `WebAssembly.Module` that `createAttention({ wasm: mod })` takes, but TypeScript 5.9 has no
// syntax for it. So a default or namespace import of these subpaths is a type error, on purpose.

/** What `createAttention({ wasm })` accepts for these files: the module, its bytes, or a `Response` for it. */
export type WasmInput = NonNullable<import('../core/attention.js').CreateAttentionOptions['wasm']>;
