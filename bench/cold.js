// cold.js - one cold start, in a fresh process: node bench/cold.js ours|ort|tf
//
// Times, from this script's first statement: importing the implementation, creating it
// (compiling and instantiating its wasm; for onnxruntime-web, also the session of the bare
// attention graph) and its first forward at n = 3, d = 8. createAndFirst (import, create and
// first call, without this script's own imports) is the cold start that issue 4 sets at 15 ms. Nothing is imported statically:
// static imports would run before the first statement. Also reports performance.now() at the
// end, whose origin (performance.timeOrigin) is the start of the Node process, so it includes
// Node's own start-up. Prints one JSON line.
const t0 = performance.now();
const which = process.argv[2];
const { loaders } = await import('./impls.js');
const { makeInputs } = await import('./lib.js');
const inputs = makeInputs(3, 8);
const t1 = performance.now();
const impl = await loaders[which]();
if (which === 'ort') await impl.session(8);
const t2 = performance.now();
const out = await impl.forward(inputs);
const t3 = performance.now();
if (!(out instanceof Float32Array) || out.length !== 24) throw new Error(`cold ${which}: unexpected output`);
console.log(JSON.stringify({
  impl: which, fromScript: t3 - t0, fromProcessStart: t3, importAndCreate: t2 - t1, first: t3 - t2, createAndFirst: t3 - t1,
}));
process.exit(0);   // do not wait for the peers' idle handles: the measurement is done
