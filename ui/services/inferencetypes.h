// Value types that cross the thread boundary between the inference worker and the GUI.
// They are plain copyable structs, delivered through queued signals; the worker never sees
// a Qt model.
#pragma once
#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>



// One turn of a conversation as the inference service sees it.
struct ChatTurn {
    QString role;  // "system", "user" or "assistant"
    QString text;
};

// Most tokens speculative decoding drafts per model pass (the sliders' range, what loads and
// requests are clamped to).
inline constexpr int kMaxDraftTokens = 8;

// Cache element type of the KV cache, as offered by the engine.
enum class CacheKind { Fp16, Fp8, Q8, Q6, Q4 };

struct LoadOptions {
    int contextLength = 4096;
    CacheKind cacheKind = CacheKind::Fp16;
    int draftTokens = 0;
    QString draftModelPath;
    int maxChunkSize = 2048;  // longest prefill chunk
    QString chatTemplate;     // the user's chat template for this model; empty: the model's own
    // Layers over several GPUs: empty (one GPU), "auto" (fill the GPUs in order) or GiB per GPU,
    // "20,23" (ExLlamaV2's gpu_split); see exl::plan::resolve_split.
    QString gpuSplit;
};

struct SamplingSettings {
    double temperature = 0.7;
    int topK = 40;
    double topP = 0.9;
    double minP = 0.05;
    double repetitionPenalty = 1.05;
    int seed = -1;  // -1: random
    int maxNewTokens = 1024;  // <= 0: until the context is full
    // Speculative decoding for this request: tokens drafted per model pass, 0-8 (0: off); -1: the
    // count given at load. With a draft model loaded it drafts; without one, n-gram lookup in the
    // conversation does.
    int draftTokens = -1;
};

// What the model list shows about a model folder.
struct ModelInfo {
    QString path;
    QString name;
    QString architecture;
    qint64 parameters = 0;
    double bpw = 0.0;
    double headBits = 16.0;
    qint64 sizeBytes = 0;
    int nativeContext = 0;
    bool remote = false;   // served by a remote endpoint (path: "<base URL>#<model id>")
    QString endpointName{};  // remote: the endpoint's name
    QString note{};          // remote: e.g. that the endpoint is reached over plain HTTP
    // A digest of the tokenizer's vocabulary (its size and the piece of every id); empty when
    // unknown (no tokenizer.json, a folder the engine cannot open, a remote model). Two models can
    // pair as model and draft model when their digests are equal.
    QByteArray vocabulary{};
};

// A run of characters in a text.
struct TextRange {
    int start = 0;
    int length = 0;
    bool operator==(const TextRange &) const = default;
};

// A batch of decoded text for one generation request.
struct TokenBatch {
    quint64 requestId = 0;
    QString text;
    int tokenCount = 0;
    // Speculative decoding: of tokenCount, drafted tokens the model accepted, and where their text
    // lies in `text` (the chat can tint it).
    int acceptedDraftTokens = 0;
    QList<TextRange> draftRanges;
};

struct GenerationStats {
    quint64 requestId = 0;
    int promptTokens = 0;
    int reusedPromptTokens = 0;  // prompt tokens found in the KV cache (not prefilled again)
    int generatedTokens = 0;
    double timeToFirstTokenMs = 0.0;
    double prefillTokensPerSecond = 0.0;
    double decodeTokensPerSecond = 0.0;
    double joulesPerToken = -1.0;  // GPU energy of the reply (prefill and decode) per generated token; <0: unknown
    bool cancelled = false;
    bool hitTokenLimit = false;  // the reply ended at SamplingSettings::maxNewTokens
    bool contextFull = false;    // the reply ended because the model's context was full
    // Speculative decoding: tokens drafted and verified, those the model accepted, and the model's
    // forward passes after the prompt (each yields one token plus the accepted drafts).
    int draftedTokens = 0;
    int acceptedDraftTokens = 0;
    int targetPasses = 0;
    double acceptanceRate() const { return draftedTokens > 0 ? double(acceptedDraftTokens) / draftedTokens : 0.0; }
    // Tokens after the first (which comes from the prompt's pass) per forward pass.
    double tokensPerPass() const { return targetPasses > 0 ? double(generatedTokens - 1) / targetPasses : 0.0; }
};

// One GPU of the machine other than the engine's first (NVML: memory in use by anything). With a
// layer split, the other GPUs holding layers are `engine` ones, with their weights and cache.
struct GpuMemorySample {
    int index = 0;
    QString name;
    qint64 usedBytes = 0;
    qint64 totalBytes = 0;
    bool engine = false;
    qint64 weightsBytes = 0;
    qint64 cacheBytes = 0;
};

// What the app can see of the engine's GPU besides memory, for the hint on why decoding falls
// short of the bandwidth bound (NVML); -1 / false where unknown.
struct GpuStatus {
    int utilizationPercent = -1;    // share of the last sample period in which a kernel ran
    int smClockMhz = -1;
    int smClockMaxMhz = -1;
    bool clockReasonsKnown = false;
    quint64 clockReasons = 0;       // exl::gpu_clock_reason bits
    int otherProcesses = -1;        // compute processes on the GPU other than this app
    QString name;                   // the engine's GPU
    int index = -1;
    QList<GpuMemorySample> otherGpus;
};

struct TelemetrySample {
    double timeSeconds = 0.0;             // since the service started
    double decodeTokensPerSecond = 0.0;   // observed
    double prefillTokensPerSecond = 0.0;  // observed, 0 outside prefill
    double boundTokensPerSecond = 0.0;    // bandwidth-bound decode speed for the loaded model
    qint64 vramUsedBytes = 0;
    qint64 vramTotalBytes = 0;            // 0 on the CPU backend
    qint64 vramWeightsBytes = 0;          // of vramUsedBytes: the model's weights ...
    qint64 vramCacheBytes = 0;            // ... and its KV cache (the rest: scratch, CUDA, others)
    double powerWatts = -1.0;             // GPU board power (NVML); <0: unknown
    bool remote = false;                  // a remote endpoint: speeds as seen by the client, no VRAM or bound
    double timeToFirstTokenMs = 0.0;      // remote: of the last reply, as seen by the client
    bool cpuBackend = false;              // the engine runs on the CPU
    double draftAcceptanceRate = -1.0;    // of the current (or last) reply's drafted tokens; <0: no drafting
    double tokensPerPass = 0.0;           // tokens per model forward pass in that reply; 0: unknown
    GpuStatus gpu;                        // the engine's GPU (and the machine's others)
};

struct LoadResult {
    bool ok = false;
    ModelInfo info;
    QString errorMessage;
    QString notice;  // loaded, with something the user should know (e.g. no chat template)
};

struct PrefillResult {
    int promptTokens = 0;
    int reusedTokens = 0;  // of promptTokens, taken from the KV cache
};

QString cacheKindName(CacheKind kind);



Q_DECLARE_METATYPE(ChatTurn)
Q_DECLARE_METATYPE(LoadOptions)
Q_DECLARE_METATYPE(SamplingSettings)
Q_DECLARE_METATYPE(ModelInfo)
Q_DECLARE_METATYPE(TokenBatch)
Q_DECLARE_METATYPE(GenerationStats)
Q_DECLARE_METATYPE(TelemetrySample)
Q_DECLARE_METATYPE(LoadResult)
