#!/usr/bin/env node
// ref.js: the reference tokenizers behind one command line, for tokbench
// conform (ids per line) and the throughput experiment (--bench).
//
//   node scripts/ref/ref.js hf FILE            Hugging Face tokenizers, npm
//                                              @anush008/tokenizers
//   node scripts/ref/ref.js hf-official FILE   the same through Hugging Face's
//                                              own binding (npm tokenizers)
//   node scripts/ref/ref.js tiktoken FILE|NAME tiktoken, encode_ordinary; FILE
//                                              is the npm JSON or a plain
//                                              NAME.tiktoken rank file
//   ... [--bench N] [--piece B]               time encodes of stdin cut into
//                                              pieces of at most B bytes
//   hf|hf-official FILE --add-special          encode(text, addSpecialTokens)
//   hf|hf-official FILE --decode [--skip-special]
//                                              each stdin line is ids; prints
//                                              decode(ids, skipSpecialTokens)
//                                              as one JSON string per line
//   tiktoken FILE|NAME --allowed-special all   encode(text, "all"): special
//                                              tokens in the text are parsed
//   hf|hf-official FILE --pair [--add-special] each stdin line is A TAB B
//                                              (cut at the first tab);
//                                              prints encode(A, B)'s ids, a
//                                              tab, and its type ids
//
// Without --bench, stdin is split into lines on "\n" only ("\r" stays in
// the line) and each line's ids are printed, space-separated, on one output
// line; an empty line gives an empty output line.  A final "\n" ends the
// last line rather than starting an empty one.  Unless the flags above say
// otherwise, no special tokens are added (HF: addSpecialTokens false;
// tiktoken: encode_ordinary, so special-token text is encoded as ordinary
// text).
//
// With --bench N, stdin is cut into pieces as tokbench's tokenize experiment
// cuts it (--piece B, default 65536: each piece ends at the last "\n" within
// B bytes, a longer line is a piece of its own), and each piece is encoded
// by a call of its own, one after another on one thread.  A pass encodes
// every piece once.  N first passes each get a tokenizer loaded afresh (an
// empty cache; the load is not timed); then N warm passes run on the last
// of them.  One JSON object is printed:
//   {"bytes": B, "pieces": P, "first": [t1, ..., tN], "seconds": [t1, ..., tN]}
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  if (msg) process.stderr.write(`ref.js: ${msg}\n`);
  process.stderr.write(
    'usage: node ref.js hf|hf-official FILE [--bench N [--piece B]]\n' +
    '       node ref.js tiktoken FILE.json|NAME [--bench N [--piece B]]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { kind: null, file: null, bench: 0, piece: 65536, addSpecial: false,
                 decode: false, skipSpecial: false, allowedSpecial: false,
                 pair: false };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--bench') {
      opts.bench = Number(argv[++i]);
      if (!Number.isInteger(opts.bench) || opts.bench < 1)
        usage('--bench wants a positive integer');
    } else if (argv[i] === '--piece') {
      opts.piece = Number(argv[++i]);
      if (!Number.isInteger(opts.piece) || opts.piece < 1)
        usage('--piece wants a positive integer');
    } else if (argv[i] === '--add-special') {
      opts.addSpecial = true;
    } else if (argv[i] === '--pair') {
      opts.pair = true;
    } else if (argv[i] === '--decode') {
      opts.decode = true;
    } else if (argv[i] === '--skip-special') {
      opts.skipSpecial = true;
    } else if (argv[i] === '--allowed-special') {
      if (argv[++i] !== 'all') usage('--allowed-special takes only "all"');
      opts.allowedSpecial = true;
    } else if (argv[i] === '-h' || argv[i] === '--help') {
      usage();
    } else {
      rest.push(argv[i]);
    }
  }
  if (rest.length !== 2) usage('want a kind and a file');
  [opts.kind, opts.file] = rest;
  const hf = opts.kind !== 'tiktoken';
  if (hf && opts.allowedSpecial) usage('--allowed-special is for tiktoken');
  if (!hf && (opts.addSpecial || opts.decode || opts.pair))
    usage('--add-special, --decode and --pair are for hf');
  if (opts.pair && (opts.decode || opts.bench)) usage('--pair encodes lines only');
  if (opts.skipSpecial && !opts.decode) usage('--skip-special goes with --decode');
  return opts;
}

// Each loader returns an encoder: async (array of strings) -> array of id
// arrays, in the same order.
// Both Hugging Face bindings have the same Tokenizer API.
function hfEncoder(file, binding, opts) {
  const { Tokenizer } = require(binding);
  const tok = Tokenizer.fromFile(file);
  if (opts.decode) {
    // The "texts" are lines of ids; the results are the decoded strings.
    return async (lines) => Promise.all(lines.map((l) => tok.decode(
      l.split(' ').filter((w) => w !== '').map(Number), opts.skipSpecial)));
  }
  const options = { addSpecialTokens: opts.addSpecial };
  if (opts.pair) {
    // One encode per pair; the "ids" printed are "IDS\tTYPE_IDS".
    return async (lines) => Promise.all(lines.map(async (l) => {
      const tab = l.indexOf('\t');
      if (tab < 0) throw new Error(`--pair: no tab in line '${l}'`);
      const e = await tok.encode(l.slice(0, tab), l.slice(tab + 1), options);
      return [e.getIds().join(' ') + '\t' + e.getTypeIds().join(' ')];
    }));
  }
  // Timing: one text per call, as tokbench's experiment encodes its
  // pieces, not a batch the thread pool could share out.
  if (opts.bench)
    return async (texts) => {
      const ids = [];
      for (const t of texts) ids.push((await tok.encode(t, null, options)).getIds());
      return ids;
    };
  return async (texts) => {
    // encodeBatch runs on the native thread pool and keeps input order.
    const encs = await tok.encodeBatch(texts, options);
    return encs.map((e) => e.getIds());
  };
}

function tiktokenEncoder(file, opts) {
  const tk = require('tiktoken');
  let enc;
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    if (/^\s*\{/.test(text)) {
      // The npm package's own JSON: {pat_str, special_tokens, bpe_ranks}.
      const d = JSON.parse(text);
      enc = new tk.Tiktoken(d.bpe_ranks, d.special_tokens, d.pat_str);
    } else {
      // A plain "BASE64 RANK" file: the pattern and special tokens come
      // from the package's registry entry for the encoding the name gives.
      const name = path.basename(file).replace(/\.[^.]*$/, '');
      const dir = path.dirname(require.resolve('tiktoken'));
      const reg = JSON.parse(fs.readFileSync(path.join(dir, 'registry.json')));
      if (!reg[name]) throw new Error(`${file}: unknown encoding '${name}'`);
      enc = new tk.Tiktoken(text, reg[name].special_tokens, reg[name].pat_str);
    }
  } else {
    enc = tk.get_encoding(path.basename(file).replace(/\.(json|tiktoken)$/, ''));
  }
  if (opts.allowedSpecial)
    return async (texts) => texts.map((s) => Array.from(enc.encode(s, 'all')));
  return async (texts) => texts.map((s) => Array.from(enc.encode_ordinary(s)));
}

function splitLines(text) {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

async function runLines(encode, text, decode) {
  const lines = splitLines(text);
  const chunk = 2048;
  const show = decode ? (s) => JSON.stringify(s) : (a) => a.join(' ');
  for (let i = 0; i < lines.length; i += chunk) {
    const out = await encode(lines.slice(i, i + chunk));
    process.stdout.write(out.map(show).join('\n') + '\n');
  }
}

// The pieces of buf as tokbench's tokenize experiment cuts them (see the
// header): byte offsets, so both sides cut the same bytes.
function cutPieces(buf, max) {
  const pieces = [];
  for (let start = 0; start < buf.length;) {
    let end = Math.min(start + max, buf.length);
    if (end < buf.length) {
      const nl = buf.lastIndexOf(10, end - 1);
      if (nl >= start) end = nl + 1;
      else {
        const next = buf.indexOf(10, end);
        end = next < 0 ? buf.length : next + 1;
      }
    }
    pieces.push(buf.subarray(start, end).toString('utf8'));
    start = end;
  }
  return pieces;
}

async function timePass(encode, pieces) {
  const t0 = process.hrtime.bigint();
  for (const p of pieces) await encode([p]);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function runBench(load, buf, opts) {
  const pieces = cutPieces(buf, opts.piece);
  const first = [], seconds = [];
  let encode;
  for (let i = 0; i < opts.bench; i++) {
    encode = load();
    first.push(await timePass(encode, pieces));
  }
  for (let i = 0; i < opts.bench; i++) seconds.push(await timePass(encode, pieces));
  process.stdout.write(JSON.stringify({
    bytes: buf.length, pieces: pieces.length, first, seconds }) + '\n');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let load;
  if (opts.kind === 'hf') load = () => hfEncoder(opts.file, '@anush008/tokenizers', opts);
  else if (opts.kind === 'hf-official') load = () => hfEncoder(opts.file, 'tokenizers', opts);
  else if (opts.kind === 'tiktoken') load = () => tiktokenEncoder(opts.file, opts);
  else usage(`unknown kind '${opts.kind}' (hf, hf-official or tiktoken)`);
  const buf = fs.readFileSync(0);
  if (opts.bench) await runBench(load, buf, opts);
  else await runLines(load(), buf.toString('utf8'), opts.decode);
}

main().catch((e) => {
  process.stderr.write(`ref.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
