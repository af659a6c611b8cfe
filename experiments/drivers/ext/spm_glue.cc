/*
 * spm_glue: SentencePiece itself (Debian's libsentencepiece) behind the
 * functions of ext.h, so that the tokenize experiment times it in process,
 * on the same pieces and the same thread as tokbench, instead of timing an
 * spm_encode process (model load and line reading included).
 *
 * A processor is loaded from a .model file and encodes one text to ids
 * (SentencePieceProcessor::Encode, no BOS or EOS: what spm_encode
 * --output_format=id prints).  SentencePiece reports errors by a status;
 * they come back as a message, and no exception escapes into C.
 */
#include <sentencepiece_processor.h>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "ext.h"

namespace {

struct spm_glue {
    sentencepiece::SentencePieceProcessor sp;
    std::vector<int> ids; /* the last encode's, reused */
};

} // namespace

extern "C" void *xp_ext_spm_load(const char *path, char *msg, size_t cap)
{
    spm_glue *g = new (std::nothrow) spm_glue;
    if (!g) {
        std::snprintf(msg, cap, "sentencepiece: out of memory");
        return nullptr;
    }
    try {
        auto st = g->sp.Load(path);
        if (st.ok())
            return g;
        std::snprintf(msg, cap, "sentencepiece: %s", st.ToString().c_str());
    } catch (const std::exception &e) {
        std::snprintf(msg, cap, "sentencepiece: %s", e.what());
    }
    delete g;
    return nullptr;
}

extern "C" void xp_ext_spm_free(void *impl)
{
    delete static_cast<spm_glue *>(impl);
}

extern "C" long xp_ext_spm_encode(void *impl, const uint8_t *s, size_t n,
                                  uint64_t *sum, char *msg, size_t cap)
{
    spm_glue *g = static_cast<spm_glue *>(impl);
    try {
        auto st = g->sp.Encode(
            std::string(reinterpret_cast<const char *>(s), n), &g->ids);
        if (!st.ok()) {
            std::snprintf(msg, cap, "sentencepiece: %s", st.ToString().c_str());
            return -1;
        }
    } catch (const std::exception &e) {
        std::snprintf(msg, cap, "sentencepiece: %s", e.what());
        return -1;
    }
    for (int id : g->ids)
        *sum = *sum * 31 + (uint32_t)id;
    return (long)g->ids.size();
}
