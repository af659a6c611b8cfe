#!/usr/bin/env node
// probe-unicode.js: finds the Unicode version of the general-category
// tables that each reference's regex engine uses, character by character,
// through ref.js itself.  tokbench's pre-tokenizer classes must be those of
// that version (scripts/gen-uprops.pl; data/manifest pins the data).
//
//   node scripts/ref/probe-unicode.js [KIND...]   (default: hf hf-official tiktoken)
//
// For each general category G (the ones pre-tokenizer patterns use and a
// few more), and for \d and \s, a one-rule tokenizer is written whose ids
// are the UTF-8 bytes of exactly the characters that the engine's \p{G}
// (\d, \s) accepts:
//   hf:       a byte-level BPE tokenizer.json with no merges whose
//             pre-tokenizer is Split(\p{G}, Removed) then ByteLevel, so the
//             ids spell every character that \p{G} does not match;
//   tiktoken: ranks of the 256 single bytes and pat_str \p{G};
//             encode_ordinary encodes only the regex's matches.
// Every code point but the surrogates and "\n" is fed, 512 to a line.  The
// sets found are compared with the @unicode/unicode-V data packages (npm,
// fetched with npm pack into a temporary folder) for several V; a version
// that differs from the engine on no code point is printed as the match
// (\d is compared with Nd, \s with the White_Space property).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');
const { execFileSync } = require('child_process');
const { pathToFileURL } = require('url');

const CATEGORIES = ['L', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'M', 'Mn', 'Mc', 'N',
  'Nd', 'Nl', 'No', 'P', 'S', 'Zs', 'd', 's'];
// The regex of a category: \d and \s are the escapes themselves.
const regexOf = (cat) => (cat === 'd' || cat === 's' ? `\\${cat}` : `\\p{${cat}}`);
const VERSIONS = ['14.0.0', '15.0.0', '15.1.0', '16.0.0', '17.0.0'];
// General_Category value names of @unicode/unicode-V, by short name.
const LONG = {
  Lu: 'Uppercase_Letter', Ll: 'Lowercase_Letter', Lt: 'Titlecase_Letter',
  Lm: 'Modifier_Letter', Lo: 'Other_Letter', Mn: 'Nonspacing_Mark',
  Mc: 'Spacing_Mark', Me: 'Enclosing_Mark', Nd: 'Decimal_Number',
  Nl: 'Letter_Number', No: 'Other_Number', Pc: 'Connector_Punctuation',
  Pd: 'Dash_Punctuation', Ps: 'Open_Punctuation', Pe: 'Close_Punctuation',
  Pi: 'Initial_Punctuation', Pf: 'Final_Punctuation',
  Po: 'Other_Punctuation', Sm: 'Math_Symbol', Sc: 'Currency_Symbol',
  Sk: 'Modifier_Symbol', So: 'Other_Symbol', Zs: 'Space_Separator',
};
const REF = path.join(__dirname, 'ref.js');

function probeText() {
  const lines = [];
  let line = '';
  for (let cp = 0; cp <= 0x10FFFF; cp++) {
    if (cp === 0x0A || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    line += String.fromCodePoint(cp);
    if (line.length >= 1024) { lines.push(line); line = ''; }
  }
  lines.push(line);
  return lines.join('\n') + '\n';
}

// GPT-2's byte-to-unicode table, which ByteLevel and its vocabulary use.
function byteLevelAlphabet() {
  const keep = [];
  for (let b = 0; b < 256; b++)
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)
      keep.push(b);
  const map = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++)
    map[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return map;
}

function hfProbe(cat) {
  const vocab = {};
  byteLevelAlphabet().forEach((ch, b) => { vocab[ch] = b; });
  return JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer: null, post_processor: null, decoder: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: regexOf(cat) }, behavior: 'Removed',
        invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false,
        use_regex: false }] },
    model: { type: 'BPE', dropout: null, unk_token: null,
      continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges: [] },
  });
}

function tiktokenProbe(cat) {
  const toks = [];
  for (let b = 0; b < 256; b++) toks.push(Buffer.from([b]).toString('base64'));
  return JSON.stringify({ pat_str: regexOf(cat), special_tokens: {},
    bpe_ranks: `! 0 ${toks.join(' ')}` });
}

// The set of code points that the engine of `kind` puts in \p{cat}.
function probe(kind, cat, text, dir) {
  const file = path.join(dir, `probe-${kind}-${cat}.json`);
  fs.writeFileSync(file, kind === 'tiktoken' ? tiktokenProbe(cat) : hfProbe(cat));
  const out = execFileSync('node', [REF, kind, file],
    { input: text, maxBuffer: 1 << 30 }).toString();
  const bytes = Buffer.from(out.split(/\s+/).filter(Boolean).map(Number));
  const seen = new Set(Array.from(bytes.toString('utf8'), (c) => c.codePointAt(0)));
  if (kind === 'tiktoken') return seen;
  const inCat = new Set();
  for (let cp = 0; cp <= 0x10FFFF; cp++)
    if (cp !== 0x0A && !(cp >= 0xD800 && cp <= 0xDFFF) && !seen.has(cp))
      inCat.add(cp);
  return inCat;
}

// code point -> short general category, from @unicode/unicode-V's
// General_Category/index.mjs (base64 of gzip- or, from 17.0.0 on,
// brotli-compressed JSON of (gap, length, value) runs; see
// decode-property-map.mjs in that package).
async function unicodeData(version, dir) {
  const pkg = `@unicode/unicode-${version}`;
  const d = path.join(dir, version);
  fs.mkdirSync(d, { recursive: true });
  execFileSync('npm', ['pack', '--silent', '--loglevel=error', pkg], { cwd: d });
  const tgz = fs.readdirSync(d).find((f) => f.endsWith('.tgz'));
  const ws = 'package/Binary_Property/White_Space/ranges.mjs';
  execFileSync('tar', ['-xzf', tgz, 'package/General_Category/index.mjs',
    'package/decode-ranges.mjs', ws], { cwd: d });
  const src = fs.readFileSync(path.join(d, 'package/General_Category/index.mjs'), 'utf8');
  const packed = Buffer.from(src.match(/from\('([^']*)'/)[1], 'base64');
  const runs = JSON.parse(src.includes('brotliDecompressSync')
    ? zlib.brotliDecompressSync(packed) : zlib.gunzipSync(packed));
  const short = {};
  for (const [s, l] of Object.entries(LONG)) short[l] = s;
  const gc = new Map();
  for (let i = 0, cp = 0; i + 2 < runs.length; i += 3) {
    cp += runs[i];
    for (const end = cp + runs[i + 1]; cp < end; cp++)
      if (short[runs[i + 2]]) gc.set(cp, short[runs[i + 2]]);
  }
  // White_Space through the package's own decoder: ranges [begin, end).
  const { default: ranges } = await import(pathToFileURL(path.join(d, ws)));
  gc.space = new Set();
  for (const r of ranges)
    for (let cp = r.begin; cp < r.end; cp++) gc.space.add(cp);
  return gc;
}

function differences(found, gc, cat) {
  let n = 0;
  const examples = [];
  for (let cp = 0; cp <= 0x10FFFF; cp++) {
    if (cp === 0x0A || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    const g = gc.get(cp) || '';
    const want = cat === 's' ? gc.space.has(cp) : cat === 'd' ? g === 'Nd'
      : cat.length === 1 ? g[0] === cat : g === cat;
    if (want !== found.has(cp)) {
      n++;
      if (examples.length < 3)
        examples.push(`U+${cp.toString(16).toUpperCase()}${found.has(cp) ? '+' : '-'}`);
    }
  }
  return { n, examples };
}

async function main() {
  const kinds = process.argv.length > 2 ? process.argv.slice(2)
    : ['hf', 'hf-official', 'tiktoken'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokbench-probe-'));
  try {
    const data = {};
    for (const v of VERSIONS) data[v] = await unicodeData(v, dir);
    const text = probeText();
    for (const kind of kinds) {
      const miss = Object.fromEntries(VERSIONS.map((v) => [v, 0]));
      for (const cat of CATEGORIES) {
        const found = probe(kind, cat, text, dir);
        const row = VERSIONS.map((v) => {
          const d = differences(found, data[v], cat);
          miss[v] += d.n;
          return `${v}: ${d.n}${d.n ? ` (${d.examples.join(' ')})` : ''}`;
        });
        console.log(`${kind} ${regexOf(cat)} ${found.size} code points; ` +
          `differing from ${row.join(', ')}`);
      }
      const match = VERSIONS.filter((v) => miss[v] === 0);
      console.log(`${kind}: ${match.length ? `Unicode ${match.join(', ')}`
        : 'no version matches'}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`probe-unicode.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
