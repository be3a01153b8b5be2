// text-files.js - what every reader of a checkpoint's text files (vocab.json, merges.txt,
// vocab.txt, config.json) does to the text first.

/** The text without one leading byte order mark (U+FEFF), as editors on Windows save it. */
export const stripBom = (text) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
