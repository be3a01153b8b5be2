// model-types.test.js - web/model/model.d.ts against a strict TypeScript consumer: what
// attnmap/model's users write (loadModel by files, path or URL, forward with chosen heads,
// generate's steps and their done, ModelFetchError), and the mistakes the types must catch.
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { root } from '../helpers.js';

test('attnmap/model\'s types: a strict consumer compiles, and its mistakes do not', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-model-types-'));
  try {
    const model = JSON.stringify(path.join(root, 'web/model/model.js'));
    fs.writeFileSync(path.join(dir, 'consumer.ts'), `
      import { loadModel, loadTokenizer, hubSize, cachedModels, deleteCachedModel, fetchCheckpoint, ModelFetchError, AttentionError, type Model, type EncoderModel, type GenerateStep, type LoadProgress, type Matrix } from ${model};
      // the LLaMA family: a folder, a File, a sharded checkpoint, a repo id with the hub's options
      const q = await loadModel('Qwen/Qwen2.5-0.5B', { revision: 'main', offline: true, cacheDir: '/tmp/hf', hubUrl: 'https://hf-mirror.com', token: 'hf_x', cache: false, signal: new AbortController().signal, onProgress: (p: LoadProgress) => { const t: number | null = p.total; void t; } });
      const fam: 'gpt2' | 'llama' = q.config.family;
      const groups: number = q.config.heads / q.config.kvHeads + q.config.headDim + q.config.layers; void fam; void groups;
      await loadModel({ config: { model_type: 'qwen3', hidden_size: 1024, intermediate_size: 3072, num_hidden_layers: 28, num_attention_heads: 16, vocab_size: 151936, max_position_embeddings: 40960 }, weights: new Blob([]), tokenizer: '{}', tokenizerConfig: {} });
      await loadModel({ config: '{}', weights: { index: '{"weight_map":{}}', shards: { 'model-00001-of-00002.safetensors': new Uint8Array(8) } } });
      const kind: 'tokenizer.json' | 'bpe' | 'wordpiece' | 'gguf' | null = q.tokenizer; void kind;
      q.encode('猫吃鱼', { specialTokens: false });
      const tok = await loadTokenizer({ tokenizer: '{}', tokenizerConfig: '{}' });
      const tids: number[] = tok.encode('猫', { specialTokens: false }); void tok.decode(tids); void tok.vocabSize;
      await loadTokenizer({ vocabTxt: '[PAD]', lowercase: false });
      const size = await hubSize('Qwen/Qwen3-0.6B', { revision: 'main' });
      const total: number = size.total + size.files[0].size; void total;
      for (const c of await cachedModels({ cacheDir: '/tmp/hf' })) {
        const b: number = c.bytes; void b;
        if (c.source === 'ollama' || c.source === 'lmstudio') { const n: string = c.name; void n; } else { const r: string = c.repo + c.revision + c.commit; void r; }
      }
      await deleteCachedModel('Qwen/Qwen3-0.6B');
      // @ts-expect-error weights: bytes, a Blob or { index, shards }, not a path
      await loadModel({ config: '{}', weights: 'model.safetensors' });
      // @ts-expect-error revision is a string
      await loadModel('Qwen/Qwen3-0.6B', { revision: 3 });
      // @ts-expect-error loadTokenizer needs the tokenizer's files
      await loadTokenizer({});
      const m: Model = await loadModel('/models/gpt2/', { files: ['config.json', 'model.safetensors'], stallMs: 10_000 });
      const files = await fetchCheckpoint('gpt2/', 'https://example.com/', { stallMs: 5 });
      await loadModel(files);
      const ids = m.encode('猫吃鱼');
      const one = m.forward(ids, { attention: { layers: [1], heads: [3] } });
      const map = one.attention?.[1]?.[3];
      if (map) { const n: number = map.shape[0]; void n; }
      const raw: unknown = m.config.raw.eos_token_id; void raw;
      // off this thread: forwardAsync, its mapAsync (issue 37), offThread at load
      const off = await loadModel('Qwen/Qwen3-0.6B', { offThread: true });
      const ran = await off.forwardAsync(ids, { heads: { repeat: 2 }, logits: false });
      const big: Matrix = await ran.mapAsync(0, 1); const ind: Float32Array = ran.heads.induction; void big; void ind;
      const flag: boolean = off.offThread; void flag;
      const eh = await (await loadModel<EncoderModel>('google-bert/bert-base-chinese')).forwardAsync([1, 2], { heads: true });
      void (await eh.mapAsync(0, 0)).shape;
      // @ts-expect-error forwardAsync's result is a promise
      off.forwardAsync(ids).logits;
      for await (const step of m.generate(ids, { maxTokens: 5, stop: false })) {
        const s: GenerateStep = step;
        const why: false | 'eos' | 'stop' | 'maxTokens' | 'context' = s.done;
        void why;
      }
      m.generate(ids, { stop: [50256] });
      try { await loadModel('x'); } catch (e) { if (e instanceof ModelFetchError) { const st: number = e.status; void st; } else if (e instanceof AttentionError) { void e.code; } }
      // BERT: an encoder, typed as such
      const b = await loadModel<EncoderModel>('google-bert/bert-base-chinese');
      const fb: 'bert' = b.config.family; void fb;
      const pair = b.encode('猫吃鱼', '鱼吃猫');
      const enc = b.forward(pair.ids, { attention: true, tokenTypes: pair.tokenTypes, mask: pair.ids.map(() => 1) });
      const lg: number | undefined = enc.logits?.shape[1]; void lg; void enc.hidden;
      for (const a of b.fillMask('猫吃[MASK]', { topK: 3 })) { const p: number = a.top[0].p; const t: string = a.top[0].text + a.top[0].token; void p; void t; void a.index; }
      // @ts-expect-error fillMask's topK is a number
      b.fillMask('猫吃[MASK]', { topK: '3' });
      void b.fillMask('猫吃[MASK]', { topK: 3, pair: '鱼吃猫' });
      // @ts-expect-error fillMask's pair is the second sentence, a string
      b.fillMask('猫吃[MASK]', { pair: 1 });
      // @ts-expect-error a decoder's forward takes no token types
      m.forward(ids, { tokenTypes: [0] });
      // @ts-expect-error attention takes true, false or { layers, heads }
      m.forward(ids, { attention: 'all' });
      // @ts-expect-error an unknown forward option
      m.forward(ids, { atention: true });
      // @ts-expect-error stop is a list of ids or false
      m.generate(ids, { stop: true });
      // @ts-expect-error a map may be null (a head not asked for)
      one.attention![0][0].shape;
      export {};`);
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: {
      module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib: ['es2022', 'dom'], skipLibCheck: false,
    }, files: ['consumer.ts'] }));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    try {
      execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
    } catch (e) {
      throw new Error(`tsc: ${e.stdout}${e.stderr}`, { cause: e });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// issue 39, item 3: a Node-only project (lib es2022 and @types/node, no DOM lib, skipLibCheck
// false) type-checks the core's and the model's types: they named WebAssembly and BufferSource,
// which only the DOM lib declares. The DOM lib's WebAssembly.Module still fits where it has one.
test('attnmap and attnmap/model\'s types compile in a Node-only project (no DOM lib) and with the DOM lib', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-node-types-'));
  const at = (p) => JSON.stringify(path.join(root, p));
  const tsc = (lib, extra = '') => {
    fs.writeFileSync(path.join(dir, 'consumer.ts'), `
      import { createAttention, type CreateAttentionOptions } from ${at('web/core/attention.js')};
      import { loadModel } from ${at('web/model/model.js')};
      import { renderHeatmap } from ${at('web/heatmap/heatmap.js')};
      const attn = await createAttention({ wasm: new Uint8Array(8) });
      const opts: CreateAttentionOptions = { wasm: new ArrayBuffer(8), relaxed: false };
      const m = await loadModel('toy-zh', { threads: 1 });
      const t: number = m.threads + m.threadsRequested;
      void attn; void opts; void t; void renderHeatmap;
      ${extra}
      export {};`);
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: {
      module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib,
      types: ['node'], typeRoots: [path.join(root, 'node_modules/@types')], skipLibCheck: false,
    }, files: ['consumer.ts'] }));
    try {
      execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
    } catch (e) {
      throw new Error(`tsc (lib ${lib.join(', ')}): ${e.stdout}${e.stderr}`, { cause: e });
    }
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  try {
    tsc(['es2022']);
    tsc(['es2022', 'dom'], 'await createAttention({ wasm: new WebAssembly.Module(new Uint8Array(8)) });');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
