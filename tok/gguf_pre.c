/*
 * gguf_pre: what each tokenizer.ggml.pre name of a GGUF file means, as
 * llama.cpp reads it (src/llama-vocab.cpp: the names in
 * llama_vocab::impl::load, the LLAMA_VOCAB_PRE_TYPE_* they map to, and the
 * split regexes llm_tokenizer_bpe gives each type).  A family is a list of
 * regexes applied in turn, each one cutting every piece of the one before
 * at its matches and keeping both the matches and the text between them
 * (Hugging Face's Split with behaviour Isolated), then GPT-2's byte-level
 * BPE over each piece.
 *
 * Where llama.cpp rewrote a tokenizer.json regex for std::regex (the
 * (?i:...) contractions spelled out, \p{Lu}-style classes replaced by
 * look-aheads), the family keeps the tokenizer.json original, which PCRE2
 * runs as written; the expected ids of llama.cpp's tests are Hugging
 * Face's.  Non-ASCII characters of llama.cpp's literal classes are written
 * as \x{..} code points.  Two departures, both to match those ids: a gpt2
 * file without the key (or with "default") gets GPT-2's regex, where
 * llama.cpp falls back to a punctuation-first list (gpt-neox's file has no
 * key, and its tokenizer.json splits as GPT-2), and the Qwen 2 family adds
 * NFC, as Qwen's tokenizer.json does.
 */
#include <string.h>

#include "tok_internal.h"

/* The families' regexes. */
#define P_GPT2                                                               \
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+"      \
    "|\\s+(?!\\S)|\\s+"
#define P_CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define P_LLAMA3                                                             \
    P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"              \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define P_QWEN2                                                              \
    P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"                   \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* a word of upper then lower case letters, or upper alone (o200k, Tekken) */
#define P_CASED_WORDS(suffix)                                                \
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*"            \
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" suffix                                  \
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"           \
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" suffix
#define P_O200K                                                              \
    P_CASED_WORDS("(?i:'s|'t|'re|'ve|'m|'ll|'d)?") "|\\p{N}{1,3}"            \
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* DeepSeek V3 and the models built on its tokenizer */
#define P_DS3_CJK "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+"
#define P_DS3_WORDS(tail)                                                    \
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+"                  \
    "|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+" tail     \
    "|\\s+(?!\\S)|\\s+"
#define P_PORO " ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+"

/* Cased letters of DeepSeek LLM's tokenizer.json, range by range. */
#define P_DS_LETTERS \
    "[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}" \
    "\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-" \
    "\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-" \
    "\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-" \
    "\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}" \
    "\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}" \
    "\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}" \
    "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}" \
    "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}" \
    "\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-" \
    "\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-" \
    "\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}" \
    "\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}" \
    "\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}" \
    "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}" \
    "\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}" \
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-" \
    "\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}" \
    "\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}" \
    "\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}" \
    "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}" \
    "\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]"

typedef struct {
    const char *names;          /* the tokenizer.ggml.pre values, by spaces */
    uint8_t ignore_merges, nfc; /* a piece that is a token is kept whole */
    const char *pattern[7];     /* NULL-ended */
} gg_family_t;

static const gg_family_t families[] = {
    {"default gpt-2 gpt2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de "
     "a.x-4.0 mellum modern-bert jina-v1-en jina-v2-code roberta-bpe exaone4 "
     "mpt olmo jais trillion granite-docling",
     0, 0, {P_GPT2}},
    {"llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 "
     "jina-v5-nano",
     1, 0, {P_LLAMA3}},
    {"dbrx smaug-bpe glm4 chatglm-bpe", 0, 0, {P_LLAMA3}},
    {"jais-2", 0, 0,
     {P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
      "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)"
      "|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)"
      "|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"}},
    {"qwen2 deepseek-r1-qwen kormo f2llmv2 megrez", 0, 1, {P_QWEN2}},
    {"stablelm2 hunyuan solar-open grok-2", 0, 0, {P_QWEN2}},
    {"qwen35", 0, 0,
     {P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
      "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"deepseek-llm", 0, 0,
     {"[\\r\\n]", "\\s?" P_DS_LETTERS "+",
      "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}"
      "\\x{3000}-\\x{3002}]+",
      "\\s+$", "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
      "\\p{N}+"}},
    {"deepseek-coder", 0, 0,
     {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
      "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}"}},
    {"deepseek-v3 hunyuan-dense hy_v4 joyai-llm", 0, 0,
     {"\\p{N}{1,3}", P_DS3_CJK, P_DS3_WORDS("[\\r\\n]*|\\s*[\\r\\n]+")}},
    {"spark2_5", 0, 0,
     {"\\p{N}{1,3}", P_DS3_CJK, P_DS3_WORDS("|[\\r\\n]"), "\\p{N}"}},
    {"afmoe", 0, 0,
     {/* llama.cpp's own digit grouping: a group of 1-3 digits and then
         groups of three to the end of the number */
      "\\p{N}{1,3}(?=(?:\\p{N}{3})*(?!\\p{N}))",
      "[\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{F900}-\\x{FAFF}"
      "\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}\\x{FF65}-\\x{FF9F}"
      "\\x{2F00}-\\x{2FDF}\\x{E40}-\\x{E7F}\\x{E80}-\\x{EFF}\\x{1780}-\\x{17FF}"
      "\\x{1000}-\\x{109F}\\x{AA60}-\\x{AA7F}\\x{A9E0}-\\x{A9FF}"
      "\\x{AC00}-\\x{D7AF}\\x{1100}-\\x{11FF}]+",
      P_DS3_WORDS("[\\r\\n]*|\\s*[\\r\\n]+")}},
    {"youtu", 1, 0,
     {"[\\x{AC00}-\\x{D7A3}\\x{3131}-\\x{318E}]+|[\\x{FF01}\\x{2026}\\x{201C}"
      "\\x{201D}\\x{2018}\\x{2019}\\x{2014}\\x{FF1A}\\x{FF1B}\\x{FF0C}"
      "\\x{3001}-\\x{303F}\\x{FE30}-\\x{FE4F}]+|[\\x{3105}-\\x{312F}]+"
      "|[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
      P_CASED_WORDS("(?i:'s|'t|'re|'ve|'m|'ll|'d)?") "|\\p{N}"
      "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"falcon", 0, 0,
     {"[\\p{P}\\$\\+<=>\\^~\\|`]+", P_GPT2, "[0-9][0-9][0-9]"}},
    {"starcoder refact command-r smollm codeshell exaone minerva-7b mellum2",
     0, 0, {"\\p{N}", P_GPT2}},
    {"poro-chat bloom gpt3-finnish", 0, 0, {P_PORO}},
    {"viking", 0, 0, {P_PORO, "\\p{N}"}},
    {"tekken", 1, 0,
     {P_CASED_WORDS("") "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*"
      "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"chameleon", 0, 0,
     {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
      "([\\t\\n]|    |  )", "\\p{N}", "[\\p{P}!-/:-@\\[-`{-~]", P_GPT2}},
    {"gpt-4o llama4 kanana2 talkie minimax-m2", 0, 0, {P_O200K}},
    {"granite-embed-multi-97m", 1, 0,
     {/* llama.cpp's form: a letter or mark that is not a-z (A-Z) */
      "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*"
      "((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]"
      "|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+"
      "((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]"
      "|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*"
      "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"tiny_aya cohere2moe", 0, 0, {"\\d{1,3}(?=(?:\\d{3})*\\b)", P_O200K}},
    {"superbpe", 0, 0, {"\\p{N}+", "(?=(\\d{3})+(?!\\d))"}},
    {"bailingmoe bailingmoe2 llada-moe", 0, 0,
     {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
      "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
    {"seed-coder", 0, 0,
     {P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}"
      "| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"ufakzeka", 0, 0,
     {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
      "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"laguna", 0, 0, {"[^\\n]+|[\\n]+", P_QWEN2}},
    {"exaone-moe", 0, 0,
     {P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+"
      "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
    {"minicpm5", 1, 0,
     {"\\p{N}{1,3}",
      P_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+"
      "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
};

/* Names llama.cpp knows whose tokenizers are not byte-level BPE over
 * split pieces: said so, not mistaken for an unknown name. */
static const char not_split[] =
    "gemma4 granite-embed-multi-311m sarvam-moe whitespace kimi-k2";

static int in_list(const char *list, const uint8_t *s, size_t n)
{
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !memcmp(p, s, n))
            return 1;
        p += k + (p[k] == ' ');
    }
    return 0;
}

int tok_gguf_pre(const uint8_t *name, size_t n, tok_gguf_pre_t *out,
                 tb_err_t *err)
{
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        const gg_family_t *f = &families[i];
        if (!in_list(f->names, name, n))
            continue;
        out->ignore_merges = f->ignore_merges;
        out->nfc = f->nfc;
        out->patterns = f->pattern;
        return 0;
    }
    if (in_list(not_split, name, n))
        return tb_fail(err, "pre-tokenizer '%.*s' is not supported: llama.cpp "
                            "runs it as its own tokenizer, not as split "
                            "regexes and byte-level BPE",
                       (int)n, (const char *)name);
    return tb_fail(err, "pre-tokenizer '%.*s' is not supported (not a name "
                        "llama.cpp knows)",
                   (int)(n > 60 ? 60 : n), (const char *)name);
}
