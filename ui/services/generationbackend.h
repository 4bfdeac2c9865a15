// What the inference worker drives, one step at a time, on the inference thread. The fake
// (scripted tokens) and the engine-backed implementation both implement it; the worker adds
// batching, cancellation, statistics and telemetry around it.
#pragma once
#include <QString>
#include <functional>
#include <optional>

#include "inferencetypes.h"

// What one decode step produced.
struct DecodedPiece {
    QString text;                 // the text that became safe to show (possibly empty)
    int tokens = 1;               // new tokens (several with speculative decoding; 0: held-back text at the end)
    bool targetPass = true;       // the step ran one forward pass of the model
    int draftedTokens = 0;        // drafted tokens the pass verified
    int acceptedDraftTokens = 0;  // of those, accepted by the model
    int draftTextLength = 0;      // the first draftTextLength characters of `text` came from accepted drafts
};

class GenerationBackend
{
public:
    virtual ~GenerationBackend() = default;

    virtual QString deviceName() const = 0;
    // Why the engine runs where it runs (e.g. "no usable GPU: ..."); empty when nothing to say.
    virtual QString deviceNote() const { return {}; }
    virtual QList<ModelInfo> availableModels() const = 0;

    // Loads a model; on failure returns LoadResult{ok = false, errorMessage}. `progress` is
    // called with fractions in [0, 1].
    virtual LoadResult load(const QString &path, const LoadOptions &options,
                            const std::function<void(double)> &progress) = 0;
    virtual void unload() = 0;
    virtual bool loaded() const = 0;

    // Formats and prefills the conversation; returns the prompt size and how much of it came
    // from the KV cache of the previous turn.
    virtual PrefillResult prefill(const QList<ChatTurn> &conversation, const SamplingSettings &settings) = 0;
    // One decode step: the new text (possibly empty for a partial UTF-8 sequence) of one or more
    // tokens, or nullopt when the reply is complete.
    virtual std::optional<DecodedPiece> decodeStep() = 0;
    // The last reply ended because the model's context was full.
    virtual bool contextFull() const { return false; }

    // Memory and the bandwidth-bound speed, for telemetry (cheap; called a few times a second).
    // One reading of the device's memory per call.
    struct VramUsage {
        qint64 used = 0;
        qint64 total = 0;    // 0 on the CPU
        qint64 weights = 0;  // of `used`: the weights and the KV cache (0 where unknown or on the CPU)
        qint64 cache = 0;
    };
    virtual VramUsage vram() const = 0;
    // GPU board power now (W) and the GPU's energy counter (J); negative where unknown (the CPU,
    // no NVML).
    virtual double powerWatts() const { return -1.0; }
    // The engine's GPU state and the machine's other GPUs (defaults: nothing known).
    virtual GpuStatus gpuStatus() const { return {}; }
    virtual double energyJoules() const { return -1.0; }
    virtual double boundTokensPerSecond() const = 0;
};
