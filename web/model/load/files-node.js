// files-node.js - how attnmap opens a file on disk in Node (a checkpoint folder, the Hugging Face
// cache): without blocking (a FIFO does not hang the load), regular files only (a link to
// /dev/zero is refused, not read forever), and no further than the size the file reports.
//
//   const f = openRegular(file);          // { fd, size }, or undefined when absent
//   readFully(f.fd, dest, begin, file);   // bytes [begin, begin + dest.length) into dest
//   const text = readText(file);          // a text file up to MAX_TEXT_BYTES, or undefined
import fs from 'node:fs';
import { ErrorCode, AttentionError, fail, formatBytes } from '../../core/errors.js';
import { MAX_TEXT_BYTES } from './fetch-body.js';     // config and tokenizer files (tokenizer.json: a few MB)

export { MAX_TEXT_BYTES };
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

// what a stat says a path is, in words
const kindOf = (st) => (st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device'
  : st.isSocket() ? 'a socket' : st.isDirectory() ? 'a folder' : 'not a regular file');

/** An open regular file { fd, size }, or undefined when absent; refuses anything else by name. */
export function openRegular(file) {
  let fd;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    throw new AttentionError(ErrorCode.INVALID_MODEL, `${file}: cannot be opened (${e.code ?? e.message})`, { cause: e });
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile()) {
    fs.closeSync(fd);
    fail(ErrorCode.INVALID_MODEL, `${file}: is ${kindOf(st)}, not a regular file`);
  }
  return { fd, size: st.size };
}

/** Bytes [begin, begin + dest.length) of the file into dest; a file shorter than it said is broken. */
export function readFully(fd, dest, begin, file) {
  for (let done = 0; done < dest.length;) {
    const n = fs.readSync(fd, dest, done, Math.min(dest.length - done, 1 << 30), begin + done);
    if (n === 0) fail(ErrorCode.INVALID_MODEL, `${file}: ended at byte ${begin + done}, before the ${begin + dest.length} its size and header promised (it changed while being read?)`);
    done += n;
  }
}

/** A text file's contents (UTF-8), or undefined when absent; over maxBytes is TOO_LARGE. */
export function readText(file, maxBytes = MAX_TEXT_BYTES) {
  const f = openRegular(file);
  if (!f) return undefined;
  try {
    if (f.size > maxBytes) fail(ErrorCode.TOO_LARGE, `${file}: ${formatBytes(f.size)}; a config or tokenizer file is read up to ${formatBytes(maxBytes)}`);
    const bytes = new Uint8Array(f.size);
    readFully(f.fd, bytes, 0, file);
    return new TextDecoder().decode(bytes);
  } finally {
    fs.closeSync(f.fd);
  }
}
