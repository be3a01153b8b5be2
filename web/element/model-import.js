// model-import.js - the code and data of model="…", imported only when an element has a model
// attribute: bundlers split each import() below into a chunk of its own, so an element without
// a model loads none of them.
//
// The classic-script bundles (web/dist/attention-heatmap.min.js, web/dist/page.js) cannot import
// ES modules (file:// pages). There scripts/build-model.js's esbuild plugin rewrites each import()
// below into classicImport() (classic-import.js): a <script src> beside the running bundle,
// web/dist/attnmap-model.js (all of web/model/) or web/dist/<name>.js.

/** { openModel, attentionOf, largePanel } (web/model/element-support.js, with attnmap/model). */
export const importModel = () => import('../model/element-support.js');

/**
 * The checkpoints shipped with the package, by the name model="…" gives: () => { config, vocabTxt,
 * weights }. A Map, so that "constructor" or "__proto__" is a name like any other, not shipped.
 */
export const SHIPPED = new Map([
  ['toy-zh', () => import('../models/toy-zh/toy-zh.js')],
]);
