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
      import { loadModel, fetchCheckpoint, ModelFetchError, AttentionError, type Model, type GenerateStep } from ${model};
      const m: Model = await loadModel('/models/gpt2/', { files: ['config.json', 'model.safetensors'], stallMs: 10_000 });
      const files = await fetchCheckpoint('gpt2/', 'https://example.com/', { stallMs: 5 });
      await loadModel(files);
      const ids = m.encode('猫吃鱼');
      const one = m.forward(ids, { attention: { layers: [1], heads: [3] } });
      const map = one.attention?.[1]?.[3];
      if (map) { const n: number = map.shape[0]; void n; }
      const raw: unknown = m.config.raw.eos_token_id; void raw;
      for await (const step of m.generate(ids, { maxTokens: 5, stop: false })) {
        const s: GenerateStep = step;
        const why: false | 'eos' | 'stop' | 'maxTokens' | 'context' = s.done;
        void why;
      }
      m.generate(ids, { stop: [50256] });
      try { await loadModel('x'); } catch (e) { if (e instanceof ModelFetchError) { const st: number = e.status; void st; } else if (e instanceof AttentionError) { void e.code; } }
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
