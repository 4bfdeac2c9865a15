// GenerationBackend over the real engine (exl::Model, exl::Backend from make_backend, the
// model's Jinja chat template, exl::Sampler, exl::StreamDecoder). Lives on the inference
// thread once the worker owns it; only deviceName(), deviceNote() and availableModels() are
// read on the GUI thread, at construction.
//
// KV cache reuse is the engine's (Backend::reuse_prefix): a new prompt keeps the cached K/V of
// its longest cached prefix and prefills only the rest. Decoding is the engine's DecodeSession:
// a decode step is one forward pass of the model over the previous token (sampled on the device
// where the backend can), or, with speculative decoding, over the previous token and the tokens
// drafted by the draft model (LoadOptions::draftModelPath, its own backend and cache on the same
// device) or by n-gram lookup in the conversation (no draft model); the accepted drafts and one
// more token come out of that pass, and the rejected drafts are rolled back on both caches. After
// every step the model's cache holds exactly contextIds() (the conversation and the reply less its
// last token), so a cancel between steps leaves the cache and the conversation consistent.
#pragma once
#include <QCoreApplication>
#include <QString>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exl/backend.h"
#include "generationbackend.h"

namespace exl {
class Backend;
class GpuPowerMonitor;
class ChatPrompt;
class Model;
class DecodeSession;
class StreamDecoder;
class Tokenizer;
}  // namespace exl

class EngineGenerationBackend : public GenerationBackend
{
    Q_DECLARE_TR_FUNCTIONS(EngineGenerationBackend)
public:
    // `device`: "auto", "cpu", "cuda" or "cuda:N". A CUDA device that cannot be used throws
    // nothing here: the backend falls back to the CPU and deviceNote() says why.
    explicit EngineGenerationBackend(const QString &device = QStringLiteral("auto"), int threads = 0);
    ~EngineGenerationBackend() override;

    QString deviceName() const override { return m_deviceName; }
    QString deviceNote() const override { return m_deviceNote; }
    QList<ModelInfo> availableModels() const override { return {}; }  // ModelManager scans folders
    LoadResult load(const QString &path, const LoadOptions &options,
                    const std::function<void(double)> &progress) override;
    void unload() override;
    bool loaded() const override { return m_model != nullptr; }
    PrefillResult prefill(const QList<ChatTurn> &conversation, const SamplingSettings &settings) override;
    std::optional<DecodedPiece> decodeStep() override;
    bool contextFull() const override { return m_contextFull; }
    VramUsage vram() const override;
    double powerWatts() const override;
    GpuStatus gpuStatus() const override;
    double energyJoules() const override;
    // Bandwidth / bytes read per decoded token at the current length (the engine's planner counts
    // the bytes; bandwidth: the GPU's peak, or the measured copy bandwidth of system memory).
    double boundTokensPerSecond() const override;

    // The prompt ids of `conversation` as prefill() would build them (tests, diagnostics).
    std::vector<std::int32_t> promptIds(const QList<ChatTurn> &conversation) const;
    // The prompt text before tokenization.
    std::string formatPrompt(const QList<ChatTurn> &conversation) const;
    // Ids that end a reply: every EOS the model declares plus the template's end-of-turn token.
    const std::vector<std::int32_t> &stopIds() const { return m_stopIds; }
    // Ids generated for the current reply so far (excluding a stop id).
    const std::vector<std::int32_t> &replyIds() const { return m_replyIds; }
    // The ids the model's cache holds after the last step: the prompt and the reply but its last id.
    std::vector<std::int32_t> contextIds() const;
    int cacheLength() const;
    // The draft model loaded beside the model (LoadOptions::draftModelPath), if any.
    bool hasDraftModel() const { return m_draftBackend != nullptr; }
    // Drafted tokens per pass of the current reply (0: speculative decoding off).
    int draftTokens() const { return m_requestDraftTokens; }
    // The current reply's speculative counters (the engine's, over all its steps).
    int draftedTokens() const;
    int acceptedDraftTokens() const;
    int targetPasses() const;

private:
    void makeBackend();
    void computeBound(const QString &path, const LoadOptions &options);
    void resetState();
    void loadDraft(const LoadOptions &options);

    std::string m_device;
    int m_threads = 0;
    int m_maxChunk = 2048;
    std::vector<exl::LayerSegment> m_split;  // the layer split the backend was made with (empty: none)
    // LoadOptions::gpuSplit as segments for `path` (the planner over the machine's GPUs); empty for
    // no split or a backend without GPUs. Throws exl::Error for a split that cannot work.
    std::vector<exl::LayerSegment> resolveSplit(const QString &path, const LoadOptions &options) const;
    QString m_deviceName;
    QString m_deviceNote;
    std::unique_ptr<exl::Backend> m_backend;
    std::shared_ptr<const exl::Model> m_draftModel;
    std::unique_ptr<exl::Backend> m_draftBackend;  // same device as m_backend, cache as long as its
    int m_loadDraftTokens = 0;                     // LoadOptions::draftTokens
    std::unique_ptr<exl::GpuPowerMonitor> m_power;  // NVML, for a CUDA backend
    bool m_backendDirty = false;  // weights were loaded into it (a new load starts fresh)
    std::shared_ptr<const exl::Model> m_model;
    std::shared_ptr<const exl::Tokenizer> m_tokenizer;
    std::unique_ptr<exl::ChatPrompt> m_prompt;  // the conversation as prompt ids (chat template, BOS)
    std::vector<std::int32_t> m_stopIds;
    double m_boundBandwidth = 0.0;   // bytes/s
    double m_boundWeightBytes = 0.0;  // read per token at position 0
    double m_boundCacheBytes = 0.0;   // more per token of context

    // Generation state.
    std::unique_ptr<exl::DecodeSession> m_session;
    std::vector<std::int32_t> m_replyIds;
    std::unique_ptr<exl::StreamDecoder> m_stream;
    int m_maxNewTokens = 0;
    int m_requestDraftTokens = 0;
    bool m_finished = true;
    bool m_contextFull = false;  // the last reply filled the context
    bool m_untilContextFull = false;  // no token limit: the reply's limit is the room left
    std::random_device m_entropy;
};
