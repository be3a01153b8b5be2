// progress.js - a download's progress on stderr, one line redrawn in place, for a terminal only
// (an stderr that is a file or a pipe gets nothing: logs stay clean).
//
//   const onProgress = progressBar(process.stderr);   // undefined when stderr is not a TTY
//   onProgress({ file, loaded, total });              // as loadModel calls it
const WIDTH = 24;

const mb = (n) => (n / 1e6).toFixed(1);

/** An onProgress for loadModel drawing "file  12.3 / 988.1 MB  45.2 MB/s  [####····]", or undefined. */
export function progressBar(stream, now = () => performance.now()) {
  if (!stream.isTTY) return undefined;
  let current = null, start = 0, drawn = 0;
  return ({ file, loaded, total }) => {
    const t = now();
    if (file !== current) {
      if (current !== null) stream.write('\n');
      current = file; start = t; drawn = 0;
    }
    if (loaded !== total && t - drawn < 100) return;       // at most 10 redraws a second
    drawn = t;
    const rate = t > start ? loaded / ((t - start) / 1000) : 0;
    const done = total ? Math.min(1, loaded / total) : 0, fill = Math.round(done * WIDTH);
    const bar = total ? ` [${'#'.repeat(fill)}${'·'.repeat(WIDTH - fill)}]` : '';
    stream.write(`\r${file}  ${mb(loaded)}${total ? ` / ${mb(total)}` : ''} MB  ${mb(rate)} MB/s${bar}`);
    if (total && loaded >= total) { stream.write('\n'); current = null; }
  };
}
