#!/usr/bin/env node
// xgrammar.js: XGrammar (npm @mlc-ai/web-xgrammar, its C++ compiled to
// WebAssembly) as a reference grammar engine for tokbench: token masks for
// EBNF grammars and JSON Schemas, and the MaskBench protocol.
//
//   node scripts/ref/xgrammar.js mask --vocab TOKENIZER.json
//        (--ebnf FILE | --schema FILE [--any-whitespace] [--strict])
//        [--after TEXT] [--specials empty|text]
//     Prints the ids XGrammar allows after TEXT, sorted, one per line (the
//     format of `tokbench mask ... --ids`).  TEXT is fed to the matcher as
//     characters (GrammarMatcher._acceptString, one code point at a time), not
//     as tokens: the state after a byte string does not depend on how it is
//     split into tokens.  A refused TEXT is an error naming its byte offset.
//     The EBNF is XGrammar's (GBNF-like; the start rule is `root`).  The
//     schema options: --any-whitespace (else XGrammar's fixed one-line
//     layout, separators ", " and ": "), --strict (no properties or items
//     beyond those the schema names); both off unless given.
//
//   node scripts/ref/xgrammar.js maskbench --vocab TOKENIZER.json
//        [--schema-file FILE.json ...] [--instance-index K] [--timeout S]
//        [--specials empty|text] [--masks]
//     Runs the MaskBench protocol (../shared/maskbench/README.md) on each
//     schema file given, or, with no --schema-file, on each path read from
//     stdin (one per line), and prints one JSON line per schema.  XGrammar
//     settings: anyWhitespace on, strictMode off, no indent (the issue's).
//     Each instance is serialized as Python's json.dumps(data,
//     ensure_ascii=False) does and tokenized by Hugging Face tokenizers from
//     the same TOKENIZER.json (no special tokens); before each token a mask
//     is computed and timed (one TBM sample) and the token is checked
//     against it; after the last token the end must be accepting (the stop
//     token is accepted).  The output line:
//       {"file", "outcome", "ttfm_us", "ttfm_cpu_us", "tokens",
//        "tbm_us": [...], "warnings": [...], "error",
//        "instances": [{"index", "valid", "tokens", "at", "token",
//                       "outcome"}]}
//     ttfm_us: compile + matcher + first mask, wall clock (ttfm_cpu_us: the
//     process's CPU time over it, less sensitive to a loaded machine);
//     tokens: the number of TBM samples; warnings: XGrammar's warnings
//     (e.g. keywords it ignores); error: the reason of a compile error,
//     crash or timeout.  Schema outcome: pass, compile_error,
//     validation_error (a valid instance refused), invalidation_error (an
//     invalid instance accepted whole), timeout (--timeout S, default 60,
//     for the compile and all instances; the instances done before it are
//     kept), crash, bad_input (the file is not a MaskBench file); a
//     validation error wins over an invalidation error.  An instance:
//     outcome pass, validation_error or invalidation_error; "at" the index
//     of the refused token ("token" its id), or the token count when the
//     end is not accepting, or null.  --instance-index K runs the K-th test
//     of each file only.  Schemas run one at a time in a worker thread,
//     which first compiles a small schema twice so that TTFM and TBM leave
//     out V8's first compilation of XGrammar's WebAssembly, and which is
//     replaced after a timeout, a crash or a compile error (XGrammar aborts
//     its WebAssembly instance on errors).  TBM samples include the web
//     wrapper's copy of the bitmask to JavaScript (4,008 words for Llama 3).
//     --masks: each instance also has "masks", XGrammar's mask before each
//     of its tokens (up to the refused one) as a hex string of the bitmask's
//     32-bit words, word 0 first, each word 8 digits, most significant
//     first (id i is bit i % 32 of word i / 32), "strict_masks", the same
//     with strictMode on (up to the token it refuses; none where the schema
//     does not compile so), and "ids", its tokens: for comparing masks with
//     tokbench's (the maskbench driver's xgmasks=N).
//
//   node scripts/ref/xgrammar.js dumps FILE.json ...
//     Prints each test instance of the MaskBench files as the maskbench
//     command serializes it, one per line (to diff against Python's
//     json.dumps).
//
// The vocabulary: tokenizer.json's model vocabulary and added tokens, passed
// to XGrammar as the file spells them with the vocabulary type and prefix
// flag that XGrammar itself derives from a tokenizer.json (decoder ByteLevel
// -> byte_level, ByteFallback -> byte_fallback, else raw; a prepended U+2581
// -> add_prefix_space): for Llama 3, byte_level and no prefix space, so
// XGrammar decodes GPT-2's byte alphabet itself.  Added tokens marked
// "special" are passed as "" with --specials empty (the default), which is
// how XGrammar marks special tokens (never allowed); --specials text passes
// their text as ordinary strings, as XGrammar's Python
// TokenizerInfo.from_huggingface does.  Non-special added tokens are passed
// as their text in the vocabulary's encoding.  Stop tokens: the added tokens
// whose text is one of XGrammar's stop-token names (<|end_of_text|> and
// <|eot_id|> for Llama 3); XGrammar allows them where the grammar can end,
// so masks at accepting points hold them, while tokbench's masks never hold
// control tokens: filter them before comparing.
//
// XGrammar's lib/index.js is a UMD bundle inside a "type": "module" package,
// so it cannot be required from node_modules: it is copied at run time to
// the temporary directory as a .cjs file and required from there.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { Worker, isMainThread, parentPort, workerData } =
  require('worker_threads');

const PROG = 'xgrammar.js';

function usage(msg) {
  if (msg) process.stderr.write(`${PROG}: ${msg}\n`);
  process.stderr.write(
    'usage: node xgrammar.js mask --vocab FILE (--ebnf FILE | --schema FILE' +
    ' [--any-whitespace] [--strict])\n' +
    '                             [--after TEXT] [--specials empty|text]\n' +
    '       node xgrammar.js maskbench --vocab FILE [--schema-file FILE ...]' +
    ' [--instance-index K]\n' +
    '                                  [--timeout S] [--specials empty|text]' +
    ' [--masks]\n' +
    '       node xgrammar.js dumps FILE ...\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { cmd: argv[0], vocab: null, ebnf: null, schema: null,
    anyWs: false, strict: false, after: '', specials: 'empty',
    schemaFiles: [], instance: -1, timeout: 60, files: [], masks: false };
  const want = (i) => {
    if (i >= argv.length) usage(`${argv[i - 1]} wants a value`);
    return argv[i];
  };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--vocab') o.vocab = want(++i);
    else if (a === '--ebnf') o.ebnf = want(++i);
    else if (a === '--schema') o.schema = want(++i);
    else if (a === '--any-whitespace') o.anyWs = true;
    else if (a === '--strict') o.strict = true;
    else if (a === '--after') o.after = want(++i);
    else if (a === '--specials') o.specials = want(++i);
    else if (a === '--schema-file') o.schemaFiles.push(want(++i));
    else if (a === '--instance-index') o.instance = Number(want(++i));
    else if (a === '--timeout') o.timeout = Number(want(++i));
    else if (a === '--masks' && o.cmd === 'maskbench') o.masks = true;
    else if (a === '-h' || a === '--help') usage();
    else if (!a.startsWith('--') && o.cmd === 'dumps') o.files.push(a);
    else usage(`unknown argument '${a}'`);
  }
  if (o.specials !== 'empty' && o.specials !== 'text')
    usage('--specials wants empty or text');
  if (!Number.isInteger(o.instance) || o.instance < -1)
    usage('--instance-index wants a non-negative integer');
  if (!(o.timeout > 0)) usage('--timeout wants a positive number of seconds');
  if (o.cmd === 'mask') {
    if (!o.vocab) usage('mask wants --vocab');
    if (!o.ebnf === !o.schema) usage('mask wants one of --ebnf and --schema');
  } else if (o.cmd === 'maskbench') {
    if (!o.vocab) usage('maskbench wants --vocab');
  } else if (o.cmd === 'dumps') {
    if (!o.files.length) usage('dumps wants files');
  } else {
    usage(o.cmd ? `unknown command '${o.cmd}'` : 'want a command');
  }
  return o;
}

// ---- Loading XGrammar ----------------------------------------------------

// The path of a .cjs copy of the package's bundle in the temporary
// directory, named by version and size so that parallel runs share it; it is
// written under a private name and renamed, so no run sees a partial copy.
function xgrammarCopy() {
  const pkgDir = path.dirname(
    require.resolve('@mlc-ai/web-xgrammar/package.json'));
  const version = require(path.join(pkgDir, 'package.json')).version;
  const src = path.join(pkgDir, 'lib', 'index.js');
  const size = fs.statSync(src).size;
  const dst = path.join(os.tmpdir(),
    `tokbench-web-xgrammar-${version}-${size}.cjs`);
  if (!fs.existsSync(dst) || fs.statSync(dst).size !== size) {
    const tmp = `${dst}.${process.pid}`;
    fs.copyFileSync(src, tmp);
    fs.renameSync(tmp, dst);
  }
  return { file: dst, version };
}

// XGrammar's stop-token names (cpp/tokenizer_info_impl.h,
// DETECTION_STOP_TOKENS, XGrammar 0.1.27).
const STOP_NAMES = new Set(['</s>', '<|end_of_text|>', '<|eot_id|>',
  '<|endoftext|>', '<eos>', '<|eos|>', '<end_of_turn>',
  '<\uff5cend\u2581of\u2581sentence\uff5c>']);

// GPT-2's byte alphabet: byte -> the character that stands for it.
function byteAlphabet() {
  const map = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) ||
      b >= 174;
    map[b] = String.fromCodePoint(printable ? b : next++);
  }
  return map;
}

function decoderTypes(d) {
  if (!d || typeof d !== 'object') return [];
  if (d.type === 'Sequence') return (d.decoders || []).map((x) => x && x.type);
  return [d.type];
}

// XGrammar's reading of a tokenizer.json (cpp/tokenizer_info.cc,
// HFTokenizerAnalyzer): the first ByteLevel or ByteFallback decoder gives
// the vocabulary type; a Prepend "\u2581" normalizer or a Metaspace
// pre-tokenizer that prepends gives the prefix space.
function vocabKind(tj) {
  const types = decoderTypes(tj.decoder);
  const first = types.find((t) => t === 'ByteLevel' || t === 'ByteFallback');
  const type = first === 'ByteLevel' ? 'byte_level'
    : first === 'ByteFallback' ? 'byte_fallback' : 'raw';
  const n = tj.normalizer;
  const norms = !n ? [] : n.type === 'Sequence' ? n.normalizers || [] : [n];
  const pt = tj.pre_tokenizer;
  const prefix = norms.some((x) => x && x.type === 'Prepend' &&
      x.prepend === '\u2581') ||
    (!!pt && pt.type === 'Metaspace' &&
      (pt.prepend_scheme === 'always' || pt.prepend_scheme === 'first'));
  return { type, prefix };
}

// The vocabulary as XGrammar's TokenizerInfo wants it: {encoded, type,
// prefix, stop}.  Ids no entry names stay "" (special to XGrammar).
function readVocab(file, specials) {
  const tj = JSON.parse(fs.readFileSync(file, 'utf8'));
  const model = tj.model || {};
  const kind = vocabKind(tj);
  const pieces = Array.isArray(model.vocab)
    ? model.vocab.map((e, id) => [e[0], id])           // Unigram
    : Object.entries(model.vocab || {});               // BPE, WordPiece
  const added = tj.added_tokens || [];
  let size = 0;
  for (const [, id] of pieces) size = Math.max(size, id + 1);
  for (const t of added) size = Math.max(size, t.id + 1);
  if (!size) throw new Error(`${file}: no vocabulary in model.vocab`);
  const encoded = new Array(size).fill('');
  for (const [piece, id] of pieces) encoded[id] = piece;
  const alphabet = kind.type === 'byte_level' ? byteAlphabet() : null;
  const stop = [];
  for (const t of added) {
    if (STOP_NAMES.has(t.content)) stop.push(t.id);
    if (t.special && specials === 'empty' && !STOP_NAMES.has(t.content))
      encoded[t.id] = '';
    else if (alphabet)
      encoded[t.id] = Array.from(Buffer.from(t.content, 'utf8'),
        (b) => alphabet[b]).join('');
    else
      encoded[t.id] = t.content;
  }
  if (!stop.length)
    throw new Error(`${file}: no stop token among the added tokens ` +
      `(XGrammar's names: ${[...STOP_NAMES].join(' ')})`);
  return { encoded, type: kind.type, prefix: kind.prefix, stop };
}

// XGrammar reports errors by printing "[FATAL] file:line: message" (through
// console.error) and aborting the WebAssembly instance, and warnings as
// "[WARNING] ..." (through console.log); its Emscripten runtime binds both
// when it starts.  Both get a forwarder: to errSink while captured() runs fn
// (it returns {value, error, warnings}), else to stderr, so that stdout holds
// only this program's output.
let errSink = null;
const consoleError = console.error.bind(console);
console.error = console.log = (...args) =>
  errSink ? errSink(args.join(' ')) : consoleError(...args);

async function captured(fn) {
  const lines = [];
  errSink = (line) => lines.push(line);
  let value, error = null;
  try {
    value = await fn();
  } catch (e) {
    error = (e && e.message) || String(e);
  } finally {
    errSink = null;
  }
  const text = lines.join('\n').split('\n').filter((l) => l !== '');
  const strip = (l) => l.replace(/^\[\w+\] \S+?:\d+: /, '');
  const fatal = text.filter((l) => l.startsWith('[FATAL]')).map(strip);
  const warnings = text.filter((l) => l.startsWith('[WARNING]')).map(strip);
  if (error !== null && fatal.length) error = fatal.join('; ');
  return { value, error, warnings };
}

async function xgrammarSession(xgFile, vocab) {
  const xg = require(xgFile);
  const info = await xg.TokenizerInfo.createTokenizerInfo(vocab.encoded,
    vocab.type, vocab.prefix, vocab.encoded.length, vocab.stop);
  // No cache: every schema is compiled, as a fresh engine would.
  const compiler = await xg.GrammarCompiler.createGrammarCompiler(info, false);
  return { xg, compiler, size: vocab.encoded.length };
}

function allowed(mask, id) {
  return ((mask[id >>> 5] >>> (id & 31)) & 1) === 1;
}

function maskHex(mask) {
  let s = '';
  for (const w of mask) s += (w >>> 0).toString(16).padStart(8, '0');
  return s;
}

// ---- mask ----------------------------------------------------------------

async function runMask(o) {
  const vocab = readVocab(o.vocab, o.specials);
  const s = await xgrammarSession(xgrammarCopy().file, vocab);
  const text = fs.readFileSync(o.ebnf || o.schema, 'utf8');
  const c = await captured(() => o.ebnf
    ? s.compiler.compileGrammar(text, 'root')
    : s.compiler.compileJSONSchema(text, o.anyWs, -1, undefined, o.strict));
  for (const w of c.warnings) process.stderr.write(`${PROG}: xgrammar warning: ${w}\n`);
  if (c.error !== null)
    throw new Error(`${o.ebnf || o.schema}: XGrammar refuses it: ${c.error}`);
  const m = await s.xg.GrammarMatcher.createGrammarMatcher(c.value);
  let at = 0;
  for (const ch of o.after) {
    if (!m._acceptString(ch))
      throw new Error(`--after text is refused at byte ${at} ` +
        `(${JSON.stringify(ch)}): not a prefix of the grammar's language`);
    at += Buffer.byteLength(ch, 'utf8');
  }
  const mask = await m.getNextTokenBitmask();
  const out = [];
  for (let id = 0; id < s.size; id++) if (allowed(mask, id)) out.push(id);
  process.stdout.write(out.length ? out.join('\n') + '\n' : '');
}

// ---- Python's json.loads / json.dumps -----------------------------------

// JSON as Python's json module reads it: objects are Maps in file order (a
// repeated key keeps its first place and takes the last value), numbers keep
// their text (PyNum), NaN and +-Infinity are accepted.
class PyNum {
  constructor(text) { this.text = text; }
}

function parsePyJson(src, name) {
  let i = 0;
  const fail = (what) => {
    throw new Error(`${name}: ${what} at offset ${i}`);
  };
  const ws = () => {
    while (i < src.length && ' \t\n\r'.includes(src[i])) i++;
  };
  const lit = (word, v) => {
    if (src.startsWith(word, i)) { i += word.length; return v; }
    return fail('bad literal');
  };
  const string = () => {
    let out = '';
    i++;
    for (;;) {
      const j = i;
      while (i < src.length && src[i] !== '"' && src[i] !== '\\') i++;
      out += src.slice(j, i);
      if (i >= src.length) fail('unterminated string');
      if (src[i++] === '"') return out;
      const e = src[i++];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f',
        n: '\n', r: '\r', t: '\t' };
      if (e in simple) out += simple[e];
      else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(src.substr(i, 4))) {
        out += String.fromCharCode(parseInt(src.substr(i, 4), 16));
        i += 4;
      } else fail('bad escape');
    }
  };
  const number = () => {
    const m = /^-?(?:Infinity|(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/
      .exec(src.slice(i, i + 4096));
    if (!m) fail('not a JSON value');
    i += m[0].length;
    return new PyNum(m[0]);
  };
  const value = () => {
    ws();
    const c = src[i];
    if (c === '{') {
      const map = new Map();
      i++; ws();
      if (src[i] === '}') { i++; return map; }
      for (;;) {
        ws();
        if (src[i] !== '"') fail('want a key');
        const k = string();
        ws();
        if (src[i++] !== ':') fail('want ":"');
        map.set(k, value());
        ws();
        const d = src[i++];
        if (d === '}') return map;
        if (d !== ',') fail('want "," or "}"');
      }
    }
    if (c === '[') {
      const arr = [];
      i++; ws();
      if (src[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value());
        ws();
        const d = src[i++];
        if (d === ']') return arr;
        if (d !== ',') fail('want "," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === 't') return lit('true', true);
    if (c === 'f') return lit('false', false);
    if (c === 'n') return lit('null', null);
    if (c === 'N') return lit('NaN', new PyNum('NaN'));
    return number();
  };
  const v = value();
  ws();
  if (i !== src.length) fail('trailing text');
  return v;
}

// Python's repr of a float: the shortest digits that read back (JavaScript's
// toExponential() gives the same digits), fixed notation when the decimal
// point falls within -4 < decpt <= 16, else d.ddde+XX.
function pyFloat(x) {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mant, e] = Math.abs(x).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(e);
  const decpt = exp + 1;
  if (decpt > 16 || decpt <= -4)
    return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') +
      'e' + (exp < 0 ? '-' : '+') + String(Math.abs(exp)).padStart(2, '0');
  if (decpt <= 0) return sign + '0.' + '0'.repeat(-decpt) + digits;
  if (decpt >= digits.length)
    return sign + digits + '0'.repeat(decpt - digits.length) + '.0';
  return sign + digits.slice(0, decpt) + '.' + digits.slice(decpt);
}

function pyNumber(text) {
  if (/^-?[0-9]+$/.test(text)) return BigInt(text).toString();
  return pyFloat(Number(text));     // Number() reads NaN and Infinity too
}

const PY_ESCAPES = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f',
  '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function pyString(s) {
  return '"' + s.replace(/["\\\x00-\x1f]/g, (c) => PY_ESCAPES[c] ||
    '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

// json.dumps(v, ensure_ascii=False): separators ", " and ": ".
function pyDumps(v) {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return pyString(v);
  if (v instanceof PyNum) return pyNumber(v.text);
  if (Array.isArray(v)) return '[' + v.map(pyDumps).join(', ') + ']';
  const parts = [];
  for (const [k, x] of v) parts.push(pyString(k) + ': ' + pyDumps(x));
  return '{' + parts.join(', ') + '}';
}

// A MaskBench file: {schema: its text as written, tests: [{valid, text}]}.
function readMaskbench(file) {
  const src = fs.readFileSync(file, 'utf8');
  const doc = parsePyJson(src, file);
  if (!(doc instanceof Map) || !doc.has('schema'))
    throw new Error(`${file}: no "schema" member`);
  const tests = doc.get('tests') || [];
  if (!Array.isArray(tests)) throw new Error(`${file}: "tests" is not a list`);
  return {
    // XGrammar reads the schema itself; it gets the schema re-serialized in
    // file order (JSON.stringify would move integer-like keys first).
    schema: pyDumps(doc.get('schema')),
    tests: tests.map((t, k) => {
      if (!(t instanceof Map) || typeof t.get('valid') !== 'boolean')
        throw new Error(`${file}: test ${k} has no boolean "valid"`);
      return { valid: t.get('valid'), text: pyDumps(t.get('data')) };
    }),
  };
}

// ---- maskbench -----------------------------------------------------------

// A first compile and a few masks, so that TTFM and TBM do not include V8's
// first compilation of XGrammar's WebAssembly functions.
async function warmUp(s) {
  for (let round = 0; round < 2; round++) await warmOnce(s);
}

async function warmOnce(s) {
  const g = await s.compiler.compileJSONSchema(WARM_SCHEMA, true, -1,
    undefined, false);
  const m = await s.xg.GrammarMatcher.createGrammarMatcher(g);
  for (const ch of '{"a": [1.5, "x"], "b": {"c": true}}') {
    await m.getNextTokenBitmask();
    m._acceptString(ch);
  }
  m.dispose();
  g.dispose();
}

const WARM_SCHEMA = JSON.stringify({ type: 'object', properties: {
  a: { type: 'array', items: { anyOf: [{ type: 'number' },
    { type: 'string', pattern: '^[a-z]+$' }] } },
  b: { type: 'object', additionalProperties: { type: 'boolean' } } },
  required: ['a'] });

// XGrammar's masks in strict mode (no properties or items beyond those the
// schema names) before each of ids, up to the first it refuses; none if the
// schema does not compile so.
async function strictMasks(s, schema, ids) {
  const c = await captured(async () => {
    const g = await s.compiler.compileJSONSchema(schema, true, -1, undefined,
      true);
    const m = await s.xg.GrammarMatcher.createGrammarMatcher(g);
    const out = [];
    for (let k = 0; k < ids.length; k++) {
      out.push(maskHex(await m.getNextTokenBitmask()));
      if (!m.acceptToken(ids[k])) break;
    }
    m.dispose();
    g.dispose();
    return out;
  });
  return c.error === null ? c.value : [];
}

// Worker side: one schema per message; posts 'compiled' (or
// 'compile_error'), one 'instance' per test, then 'done'.
async function workerMain() {
  const s = await xgrammarSession(workerData.xgFile, workerData.vocab);
  const stop = workerData.vocab.stop[0];
  await warmUp(s);
  parentPort.postMessage({ type: 'ready' });
  parentPort.on('message', async (job) => {
    const t0 = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    const c = await captured(async () => {
      const g = await s.compiler.compileJSONSchema(job.schema, true, -1,
        undefined, false);
      const m = await s.xg.GrammarMatcher.createGrammarMatcher(g);
      await m.getNextTokenBitmask();
      m.dispose();
      return g;
    });
    const ttfm = Number(process.hrtime.bigint() - t0) / 1e3;
    const cpu = process.cpuUsage(cpu0);
    if (c.error !== null) {
      parentPort.postMessage({ type: 'compile_error', error: c.error,
        warnings: c.warnings });
      return;
    }
    parentPort.postMessage({ type: 'compiled', ttfm_us: ttfm,
      ttfm_cpu_us: cpu.user + cpu.system, warnings: c.warnings });
    for (const inst of job.instances) {
      const m = await s.xg.GrammarMatcher.createGrammarMatcher(c.value);
      const tbm = [];
      const masks = [];
      let at = -1;
      for (let k = 0; k < inst.ids.length && at < 0; k++) {
        const t = process.hrtime.bigint();
        const mask = await m.getNextTokenBitmask();
        tbm.push(Number(process.hrtime.bigint() - t) / 1e3);
        if (job.masks) masks.push(maskHex(mask));
        const ok = allowed(mask, inst.ids[k]);
        if (ok !== m.acceptToken(inst.ids[k]))
          throw new Error(`mask and acceptToken disagree on token ${k}`);
        if (!ok) at = k;
      }
      if (at < 0 && !m.acceptToken(stop)) at = inst.ids.length;
      m.dispose();
      const strict = job.masks ? await strictMasks(s, job.schema, inst.ids) : [];
      parentPort.postMessage({ type: 'instance', index: inst.index,
        valid: inst.valid, tokens: inst.ids.length, tbm_us: tbm, at,
        token: at >= 0 && at < inst.ids.length ? inst.ids[at] : null,
        ...(job.masks ? { masks, strict_masks: strict, ids: inst.ids } : {}) });
    }
    c.value.dispose();
    parentPort.postMessage({ type: 'done' });
  });
}

// Main side: one worker at a time, replaced after a timeout, a crash or a
// compile error.
class Runner {
  constructor(xgFile, vocab) {
    this.xgFile = xgFile;
    this.vocab = vocab;
    this.worker = null;
  }

  async start() {
    const w = new Worker(__filename, { workerData: { xgFile: this.xgFile,
      vocab: this.vocab } });
    await this.listen(w, (resolve, reject) => ({
      message: () => resolve(),
      error: reject,
      exit: (code) => reject(new Error(`worker exited (${code})`)),
    }));
    this.worker = w;
  }

  // Listens to w with the handlers make(resolve, reject) returns until one
  // settles, then removes them (only them: removeAllListeners would also
  // drop the listeners Node keeps on a worker, and its messages stop).
  async listen(w, make) {
    let on;
    const p = new Promise((resolve, reject) => {
      on = make(resolve, reject);
      for (const ev of Object.keys(on)) w.on(ev, on[ev]);
    });
    try {
      return await p;
    } finally {
      for (const ev of Object.keys(on)) w.off(ev, on[ev]);
    }
  }

  async retire() {
    if (this.worker) await this.worker.terminate();
    this.worker = null;
  }

  // Runs one job; returns the messages received and how it ended:
  // 'done', 'compile_error', 'timeout' or 'crash' (with error).
  async run(job, seconds) {
    if (!this.worker) await this.start();
    const w = this.worker;
    const msgs = [];
    let timer;
    const end = await this.listen(w, (resolve) => {
      timer = setTimeout(() => resolve({ how: 'timeout' }), seconds * 1000);
      w.postMessage(job);
      return {
        message: (msg) => {
          msgs.push(msg);
          if (msg.type === 'done' || msg.type === 'compile_error')
            resolve({ how: msg.type });
        },
        error: (e) => resolve({ how: 'crash', error: e.message }),
        exit: (code) => resolve({ how: 'crash',
          error: `worker exited (${code})` }),
      };
    });
    clearTimeout(timer);
    if (end.how !== 'done') await this.retire();
    return { msgs, ...end };
  }
}

function schemaResult(file, r, seconds) {
  const out = { file: path.basename(file), outcome: 'pass', ttfm_us: null,
    ttfm_cpu_us: null, tokens: 0, tbm_us: [], instances: [], warnings: [], error: null };
  for (const msg of r.msgs) {
    if (msg.type === 'compiled' || msg.type === 'compile_error')
      out.warnings = msg.warnings;
    if (msg.type === 'compiled') {
      out.ttfm_us = Math.round(msg.ttfm_us);
      out.ttfm_cpu_us = msg.ttfm_cpu_us;
    }
    if (msg.type === 'compile_error') out.error = msg.error;
    if (msg.type !== 'instance') continue;
    const refused = msg.at >= 0;
    out.instances.push({ index: msg.index, valid: msg.valid,
      tokens: msg.tokens, at: refused ? msg.at : null, token: msg.token,
      outcome: msg.valid === !refused ? 'pass'
        : msg.valid ? 'validation_error' : 'invalidation_error',
      ...(msg.masks ? { masks: msg.masks, strict_masks: msg.strict_masks,
        ids: msg.ids } : {}) });
    out.tokens += msg.tbm_us.length;
    for (const t of msg.tbm_us) out.tbm_us.push(Math.round(t * 10) / 10);
  }
  const has = (o) => out.instances.some((x) => x.outcome === o);
  if (r.how === 'compile_error') out.outcome = 'compile_error';
  else if (r.how === 'timeout') {
    out.outcome = 'timeout';
    out.error = `not done within ${seconds} s`;
  }
  else if (r.how === 'crash') { out.outcome = 'crash'; out.error = r.error; }
  else if (has('validation_error')) out.outcome = 'validation_error';
  else if (has('invalidation_error')) out.outcome = 'invalidation_error';
  return out;
}

async function runMaskbench(o) {
  let files = o.schemaFiles;
  if (!files.length)
    files = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l !== '');
  const vocab = readVocab(o.vocab, o.specials);
  const { Tokenizer } = require('@anush008/tokenizers');
  const tok = Tokenizer.fromFile(o.vocab);
  const runner = new Runner(xgrammarCopy().file, vocab);
  for (const file of files) {
    let mb;
    try {
      mb = readMaskbench(file);
    } catch (e) {
      process.stdout.write(JSON.stringify({ file: path.basename(file),
        outcome: 'bad_input', error: e.message }) + '\n');
      continue;
    }
    const picked = mb.tests.map((t, index) => ({ ...t, index }))
      .filter((t) => o.instance < 0 || t.index === o.instance);
    const encs = picked.length
      ? await tok.encodeBatch(picked.map((t) => t.text),
        { addSpecialTokens: false })
      : [];
    const job = { schema: mb.schema, masks: o.masks,
      instances: picked.map((t, k) => ({
      index: t.index, valid: t.valid, ids: Array.from(encs[k].getIds()) })) };
    const r = await runner.run(job, o.timeout);
    process.stdout.write(JSON.stringify(schemaResult(file, r, o.timeout)) + '\n');
  }
  await runner.retire();
}

function runDumps(o) {
  for (const file of o.files)
    for (const t of readMaskbench(file).tests)
      process.stdout.write(t.text + '\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.cmd === 'mask') await runMask(o);
  else if (o.cmd === 'maskbench') await runMaskbench(o);
  else runDumps(o);
}

if (isMainThread) {
  main().catch((e) => {
    process.stderr.write(`${PROG}: ${e && e.message ? e.message : e}\n`);
    process.exit(1);
  });
} else {
  workerMain().catch((e) => {
    throw e;
  });
}
