// serve.js - a tiny static file server for the page, the tests and `npm start`.
// No dependencies: `npm start` must work on a fresh clone without `npm install`.
//
// It serves a repository checkout to a browser on the same machine, so it answers only what the
// page needs (issue 11):
// - only GET and HEAD (anything else: 405 with `Allow: GET, HEAD`), without a body (413); a
//   request with a body is answered at once and its connection closed, the body never waited for;
// - only one Host header (two: 400), and only Host: localhost, 127.0.0.1 or [::1], with this
//   server's port or none (else 421: a page of another site whose name was rebound to 127.0.0.1
//   reads nothing);
// - the headers within 20 s and the request within 30 s (else 408 and the connection closed);
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

// Time limits: the headers within 20 s, the whole request within 30 s (a GET has no body; a
// request with one is answered at once and closed: see refuseBody), checked every second.
const SERVER_OPTIONS = { headersTimeout: 20000, requestTimeout: 30000, connectionsCheckingInterval: 1000 };
const NOT_FOUND_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG', 'EACCES', 'EPERM', 'EISDIR']);

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
  const site = {
    root: path.resolve(root), aliases: aliasMap(alias), allowed: allowedPath(allow), headers, port,
    realRoot: null,   // resolved once, on the first request that can
  };
  const server = http.createServer(SERVER_OPTIONS, (req, res) => {
    let p;
    try { p = handle(site, req, res); } catch (e) { p = Promise.reject(e); }
    p.catch((e) => {
      try { send(res, NOT_FOUND_CODES.has(e?.code) ? 404 : 500, {}, NOT_FOUND_CODES.has(e?.code) ? 'not found' : 'internal error'); } catch { res.destroy(); }
    });
  });
  server.on('clientError', clientError);
  return listen(server, port, fallback, site);
}

// the path rules: no segment starting with "." or empty, node_modules only when `allow` names it
function allowedPath(allow) {
  const isDefault = matcher(DEFAULT_ALLOW);
  const isExtra = matcher(allow);
  return (rel) => {
    const segments = rel.split('/');
    if (segments.some((s) => s === '' || s.startsWith('.'))) return false;
    if (isExtra(rel)) return true;
    return !segments.includes('node_modules') && isDefault(rel);
  };
}

// One request: who asks (Host), how (method, body), for what (the path), then the file.
async function handle(site, req, res) {
  const refused = hostRefusal(req, site.port);
  if (refused) return send(res, ...refused);
  const body = hasBody(req);
  if (req.method !== 'GET' && req.method !== 'HEAD') return refuseBody(res, body, 405, { allow: 'GET, HEAD' }, 'method not allowed');
  if (body) return refuseBody(res, body, 413, {}, 'a GET or HEAD request has no body');
  const target = parseTarget(req.url ?? '');
  if (target.status) return send(res, target.status, {}, target.text);
  const file = await findFile(site, target);
  if (!file) return send(res, 404, {}, 'not found');
  return sendFile(site, req, res, file, target.urlPath);
}

// [status, extra headers, text] for a Host this server does not answer to, else null: one Host
// header (two: 400, whichever the parser kept), localhost, 127.0.0.1 or [::1], with this port or none
// (else 421: a page of another site whose name was rebound to 127.0.0.1 reads nothing)
function hostRefusal(req, port) {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') count++;
  if (count > 1) return [400, {}, 'bad request: more than one Host header'];
  const host = req.headers.host;
  const m = typeof host === 'string' ? /^(\[::1\]|[^:]+)(?::(\d{1,5}))?$/.exec(host.toLowerCase()) : null;
  if (m && ALLOWED_HOSTS.has(m[1]) && (m[2] === undefined || Number(m[2]) === port)) return null;
  return [421, {}, 'misdirected request: this server answers only to localhost, 127.0.0.1 and [::1]'];
}

// a request body announced (Content-Length above 0, or Transfer-Encoding)
const hasBody = (req) => req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

// The answer at once, and with a body the connection closed after it: the body is never waited
// for (a client sending a byte every few seconds would hold the connection for minutes). The
// socket is half-closed, the rest of what arrives dropped, and destroyed a second later.
function refuseBody(res, body, status, extra, text) {
  if (!body) return send(res, status, extra, text);
  const socket = res.req.socket;
  res.on('finish', () => {
    socket.end();
    socket.on('data', () => {});
    setTimeout(() => socket.destroy(), 1000).unref();
  });
  return send(res, status, { ...extra, connection: 'close' }, text);
}

// The request target -> { urlPath, rel, segments, trailingSlash } (aliases applied), or
// { status, text } when it is malformed (400) or overlong (414).
function parseTarget(target) {
  if (target.length > MAX_URL) return { status: 414, text: 'URI too long' };
  if (!target.startsWith('/')) return { status: 400, text: 'bad request' };
  let urlPath;
  try { urlPath = decodeURIComponent(target.split(/[?#]/, 1)[0]); } catch { return { status: 400, text: 'bad request' }; }
  // NUL and control characters, backslashes (a separator on Windows): malformed, not a file name here
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f\\]/.test(urlPath)) return { status: 400, text: 'bad request' };
  const segments = urlPath.split('/').filter((s) => s !== '');
  return { urlPath, rel: segments.join('/'), segments, trailingSlash: urlPath.endsWith('/') };
}

// The file a target names, { real, rel }, or null (refused, missing or unreadable: one 404 for
// all): the name asked for and the file it really is must both be inside the root and allowed;
// a folder stands for its index.html.
async function findFile(site, { rel, segments, trailingSlash }) {
  if (!trailingSlash && site.aliases.has(rel)) { rel = site.aliases.get(rel); segments = rel.split('/'); }
  if (rel !== '' && !site.allowed(rel) && !site.allowed(`${rel}/index.html`)) return null;
  const base = (site.realRoot ??= await fs.promises.realpath(site.root));
  let real;
  try {
    real = await fs.promises.realpath(path.join(base, ...segments));
    let st = await fs.promises.stat(real);
    if (st.isDirectory()) {
      rel = rel === '' ? 'index.html' : `${rel}/index.html`;
      real = await fs.promises.realpath(path.join(real, 'index.html'));
      st = await fs.promises.stat(real);
    } else if (trailingSlash) return null;
    if (!st.isFile()) return null;
  } catch { return null; }
  const realRel = path.relative(base, real);
  if (realRel === '' || realRel.startsWith('..') || path.isAbsolute(realRel)) return null;
  if (!site.allowed(rel) || !site.allowed(realRel.split(path.sep).join('/'))) return null;
  return { real, rel };
}

// The file, streamed (never read whole), with a single `Range: bytes=` range as 206.
async function sendFile(site, req, res, { real, rel }, urlPath) {
  let fh;
  try {
    fh = await fs.promises.open(real, O_READ);
    const st = await fh.stat();
    if (!st.isFile()) { await fh.close(); return send(res, 404, {}, 'not found'); }
    if (res.destroyed || req.destroyed) { await fh.close(); return undefined; } // the client went away meanwhile
    const size = st.size;
    const h = {
      ...BASE_HEADERS,
      'content-type': TYPES[path.posix.extname(rel).toLowerCase()] || NAMES[path.posix.basename(rel)] || 'application/octet-stream',
      'accept-ranges': 'bytes',
      ...(site.headers ? site.headers(urlPath) : {}),
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

// a plain-text answer (the body left out for HEAD)
function send(res, status, extra = {}, text = '') {
  if (res.headersSent) { res.destroy(); return; }
  const body = text ? `${text}\n` : '';
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...extra });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

// requests the HTTP parser refuses (a raw NUL in the request line, oversized headers, a timeout):
// Node's own answer, but with the nosniff header too
function clientError(err, socket) {
  if (err.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) { socket.destroy(); return; }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large'
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}

// listen on 127.0.0.1 (the next ports too with fallback), then record the port for the Host check
function listen(server, port, fallback, site) {
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
        site.port = server.address().port;
        resolve({
          server, port: site.port, url: `http://localhost:${site.port}/`,
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
