// serve.js - a tiny static file server for the page, the tests and `npm start`.
// No dependencies: `npm start` must work on a fresh clone without `npm install`.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8', '.ts': 'text/plain; charset=utf-8',
};

/**
 * Serve `root` on 127.0.0.1. Resolves to { server, port, url, close() }.
 * port 0 picks a free port; when `port` is taken and `fallback` is true, the next ones are tried.
 * headers(urlPath) may return extra response headers (tests use it for Content-Security-Policy).
 */
export function startServer({ root, port = 0, fallback = false, headers } = {}) {
  root = path.resolve(root);
  const server = http.createServer((req, res) => {
    let urlPath;
    try { urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { res.writeHead(400).end(); return; }
    let file = path.join(root, urlPath);
    if (file !== root && !file.startsWith(root + path.sep)) { res.writeHead(403).end('forbidden'); return; }
    fs.stat(file, (err, st) => {
      if (!err && st.isDirectory()) { file = path.join(file, 'index.html'); }
      fs.readFile(file, (err2, body) => {
        if (err2) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
        res.writeHead(200, {
          'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
          'cache-control': 'no-store',
          ...(headers ? headers(urlPath) : {}),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      });
    });
  });
  return new Promise((resolve, reject) => {
    const tryListen = (p, left) => {
      server.once('error', (e) => {
        if (e.code === 'EADDRINUSE' && fallback && left > 0) tryListen(p + 1, left - 1); else reject(e);
      });
      server.listen(p, '127.0.0.1', () => {
        const actual = server.address().port;
        resolve({ server, port: actual, url: `http://localhost:${actual}/`, close: () => new Promise((r) => server.close(r)) });
      });
    };
    tryListen(port, 20);
  });
}
