// classic-import.js - import() for the classic-script bundles (web/dist/attention-heatmap.min.js,
// web/dist/page.js), which run where ES modules cannot load (file://). scripts/build-model.js's
// esbuild plugin rewrites the model's dynamic imports into calls of classicImport (the ES modules
// never use this file):
//   import('../model/element-support.js')  -> classicImport('attnmap-model.js', '__attnmapModel')
//   import('../models/toy-zh/toy-zh.js')   -> classicImport('toy-zh.js', '__attnmapModels', 'toy-zh')
// Each adds one <script src> for a file beside the running bundle (allowed by script-src 'self',
// and on file://) and resolves to the global that file sets (globalThis.__attnmapModel, or
// globalThis.__attnmapModels['toy-zh']). Each file is requested once per bundle and page; after a
// failure, the next call tries again.

import { scriptUrl } from './trusted.js';

// The bundle's own URL, read while it runs (afterwards currentScript is another script or null);
// loaded as a module it has none: then the <script> whose src ends in the bundle's file name (self).
const own = globalThis.document?.currentScript?.src;
const pending = {};

export function classicImport(file, global, key, self) {
  const base = own || [...document.scripts].find((s) => s.src.split(/[?#]/)[0].endsWith(`/${self}`))?.src;
  const src = new URL(file, base || document.baseURI).href;
  return pending[src] ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.onload = () => resolve(key ? globalThis[global]?.[key] : globalThis[global]);
    script.onerror = () => {
      delete pending[src];       // the next call tries again
      reject(new Error(`${src} did not load (it belongs beside ${self})`));
    };
    script.src = scriptUrl(src);      // under Trusted Types, through the attnmap policy
    document.head.append(script);
  });
}
