// serve.js - a tiny static file server for the page, the tests and `npm start`.
// No dependencies: `npm start` must work on a fresh clone without `npm install`.
//
// It serves a repository checkout to a browser on the same machine, so it answers only what the
// page needs (issue 11):
// - only GET and HEAD (anything else: 405 with `Allow: GET, HEAD`);
// - only Host: localhost, 127.0.0.1 or [::1], with this server's port or none (else 421: a page
//   of another site whose name was rebound to 127.0.0.1 reads nothing);
// - only allow-listed paths: `/`, index.html, README.md, LICENSE, web/ and docs/ by default
//   (`allow` adds more); a path segment starting with "." (.git, .env, .ci, ..) never, and
//   node_modules only when an `allow` entry names it;
// - only files whose real path (symlinks resolved) is inside the real root and passes the same
//   rules; everything refused, missing or unreadable is a plain 404, malformed paths (NUL, bad
//   percent-encoding, backslash, control characters) 400, overlong ones 414;
// - files are streamed (Content-Length from fstat, single `Range: bytes=` ranges as 206), never
//   read whole into memory; the stream is destroyed when the client goes away;
// - every response has `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`.
// Nothing a request carries makes the handler throw or the process exit.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8', '.ts': 'text/plain; charset=utf-8',
};

const NAMES = { LICENSE: 'text/plain; charset=utf-8' }; // files without an extension

/** What is served by default (paths relative to the root; an entry ending in "/" is a folder). */
export const DEFAULT_ALLOW = Object.freeze(['index.html', 'README.md', 'LICENSE', 'web/', 'docs/']);

const MAX_URL = 2048; // request targets longer than this: 414
const ALLOWED_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const BASE_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };
const O_READ = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

/** { "from/path": "to/file" } (root-relative, leading "/" optional) → a Map; the target is checked like any request. */
function aliasMap(alias) {
  const entries = Object.entries(alias ?? {}).map(([from, to]) => {
    if (typeof to !== 'string') throw new TypeError('startServer: alias maps root-relative paths to root-relative files (strings)');
    return [from.replace(/^\/+/, ''), to.replace(/^\/+/, '')];
  });
  return new Map(entries);
}

/** An entry list (strings: exact file or "folder/" prefix) or a function of the relative path → a predicate. */
function matcher(allow) {
  if (typeof allow === 'function') return (rel) => Boolean(allow(rel));
  const list = [].concat(allow ?? []).map((e) => {
    if (typeof e !== 'string') throw new TypeError('startServer: allow entries are strings ("file" or "folder/") or allow is a function');
    return e.replace(/^\/+/, '');
  });
  return (rel) => list.some((e) => (e.endsWith('/') ? rel.startsWith(e) : rel === e));
}

/**
 * Serve `root` on 127.0.0.1. Resolves to { server, port, url, close() }; close() stops listening and
 * drops the connections still open (a client stalled on a large file would keep it waiting forever).
 * port 0 picks a free port; when `port` is taken and `fallback` is true, the next ones are tried.
 * headers(urlPath) may return extra response headers (tests use it for Content-Security-Policy).
 * allow widens DEFAULT_ALLOW: an array of root-relative paths ("tests/fixtures/core/" for a folder,
 * "bench/chromium.html" for one file) or a function (relativePath) => true to allow. Segments
 * starting with "." stay refused whatever `allow` says; node_modules is served only when allowed here.
 * alias maps a root-relative path to another root-relative file, served in its place under every rule
 * above (tests use it to serve web/dist/attention-heatmap.min.js at web/element/attention-heatmap.js).
 */
export function startServer({ root, port = 0, fallback = false, headers, allow, alias } = {}) {
  root = path.resolve(root);
  const aliases = aliasMap(alias);
  const isDefault = matcher(DEFAULT_ALLOW);
  const isExtra = matcher(allow);
  const allowed = (rel) => {
    const segments = rel.split('/');
    if (segments.some((s) => s === '' || s.startsWith('.'))) return false;
    if (isExtra(rel)) return true;
    return !segments.includes('node_modules') && isDefault(rel);
  };

  let realRoot; // resolved once, on the first request that can
  const getRealRoot = async () => (realRoot ??= await fs.promises.realpath(root));

  let listeningPort = port;
  const hostOk = (host) => {
    if (typeof host !== 'string') return false;
    const m = /^(\[::1\]|[^:]+)(?::(\d{1,5}))?$/.exec(host.toLowerCase());
    return !!m && ALLOWED_HOSTS.has(m[1]) && (m[2] === undefined || Number(m[2]) === listeningPort);
  };

  const send = (res, status, extra = {}, text = '') => {
    if (res.headersSent) { res.destroy(); return; }
    const body = text ? `${text}\n` : '';
    res.writeHead(status, { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...extra });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };

  async function handle(req, res) {
    if (!hostOk(req.headers.host)) return send(res, 421, {}, 'misdirected request: this server answers only to localhost, 127.0.0.1 and [::1]');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { allow: 'GET, HEAD' }, 'method not allowed');
    const target = req.url ?? '';
    if (target.length > MAX_URL) return send(res, 414, {}, 'URI too long');
    if (!target.startsWith('/')) return send(res, 400, {}, 'bad request');
    const rawPath = target.split(/[?#]/, 1)[0];
    let urlPath;
    try { urlPath = decodeURIComponent(rawPath); } catch { return send(res, 400, {}, 'bad request'); }
    // NUL and control characters, backslashes (a separator on Windows): malformed, not a file name here
    if (/[\x00-\x1f\x7f\\]/.test(urlPath)) return send(res, 400, {}, 'bad request');

    let segments = urlPath.split('/').filter((s) => s !== '');
    const trailingSlash = urlPath.endsWith('/');
    const notFound = () => send(res, 404, {}, 'not found');
    let rel = segments.join('/');
    if (!trailingSlash && aliases.has(rel)) { rel = aliases.get(rel); segments = rel.split('/'); }
    if (rel !== '' && !allowed(rel) && !allowed(`${rel}/index.html`)) return notFound();

    const base = await getRealRoot();
    let real;
    try {
      real = await fs.promises.realpath(path.join(base, ...segments));
      let st = await fs.promises.stat(real);
      if (st.isDirectory()) {
        rel = rel === '' ? 'index.html' : `${rel}/index.html`;
        real = await fs.promises.realpath(path.join(real, 'index.html'));
        st = await fs.promises.stat(real);
      } else if (trailingSlash) return notFound();
      if (!st.isFile()) return notFound();
    } catch { return notFound(); }
    // the name asked for and the file it really is must both be inside the root and allowed
    const realRel = path.relative(base, real);
    if (realRel === '' || realRel.startsWith('..') || path.isAbsolute(realRel)) return notFound();
    if (!allowed(rel) || !allowed(realRel.split(path.sep).join('/'))) return notFound();

    let fh;
    try {
      fh = await fs.promises.open(real, O_READ);
      const st = await fh.stat();
      if (!st.isFile()) { await fh.close(); return notFound(); }
      if (res.destroyed || req.destroyed) { await fh.close(); return undefined; } // the client went away meanwhile
      const size = st.size;
      const h = {
        ...BASE_HEADERS,
        'content-type': TYPES[path.posix.extname(rel).toLowerCase()] || NAMES[path.posix.basename(rel)] || 'application/octet-stream',
        'accept-ranges': 'bytes',
        ...(headers ? headers(urlPath) : {}),
      };
      let start = 0, end = size - 1, status = 200;
      const range = req.headers.range;
      if (range !== undefined && req.headers['if-range'] === undefined) {
        const r = parseRange(range, size);
        if (r === 'unsatisfiable') {
          await fh.close();
          return send(res, 416, { 'content-range': `bytes */${size}` }, 'range not satisfiable');
        }
        if (r) { [start, end] = r; status = 206; h['content-range'] = `bytes ${start}-${end}/${size}`; }
      }
      h['content-length'] = end - start + 1;
      res.writeHead(status, h);
      if (req.method === 'HEAD' || end < start) { await fh.close(); res.end(); return undefined; }
      const stream = fh.createReadStream({ start, end, autoClose: true });
      fh = null; // the stream owns (and closes) it now
      // pipeline destroys the file stream when the response closes early (the client went away)
      pipeline(stream, res, (err) => { if (err && !res.destroyed) res.destroy(); });
      return undefined;
    } catch (e) {
      if (fh) await fh.close().catch(() => {});
      throw e;
    }
  }

  const server = http.createServer((req, res) => {
    let p;
    try { p = handle(req, res); } catch (e) { p = Promise.reject(e); }
    p.catch((e) => {
      try {
        if (['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EACCES', 'EPERM', 'EISDIR'].includes(e?.code)) send(res, 404, {}, 'not found');
        else send(res, 500, {}, 'internal error');
      } catch { res.destroy(); }
    });
  });
  // requests the HTTP parser refuses (a raw NUL in the request line, oversized headers): Node's own
  // answer, but with the nosniff header too
  server.on('clientError', (err, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) { socket.destroy(); return; }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });
  return new Promise((resolve, reject) => {
    const tryListen = (p, left) => {
      const onError = (e) => {
        if (e.code === 'EADDRINUSE' && fallback && left > 0) tryListen(p + 1, left - 1); else reject(e);
      };
      server.once('error', onError);
      server.listen(p, '127.0.0.1', () => {
        server.removeListener('error', onError);
        // errors after listening (e.g. EMFILE on accept) must not end the process
        server.on('error', (e) => console.error(`attnmap serve: ${e.message}`));
        listeningPort = server.address().port;
        resolve({
          server, port: listeningPort, url: `http://localhost:${listeningPort}/`,
          close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections?.(); }),
        });
      });
    };
    tryListen(port, 20);
  });
}

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` → [start, end]; anything else (several ranges too) → null: send it all. */
function parseRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(String(header).trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start, end;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    start = Math.max(0, size - n); end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return null; // invalid: ignore the header
  }
  if (!Number.isSafeInteger(start) || start >= size || end < start) return 'unsatisfiable';
  return [start, end];
}
