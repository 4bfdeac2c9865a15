#include "inferenceworker.h"

#include <limits>

#include <algorithm>
#include <exception>

namespace {
constexpr qint64 kTelemetryIntervalMs = 250;  // four samples a second

double rate(int tokens, qint64 ns)
{
    return ns > 0 ? tokens * 1e9 / double(ns) : 0.0;
}
}  // namespace

InferenceWorker::InferenceWorker(std::unique_ptr<GenerationBackend> backend, QObject *parent)
    : QObject(parent)
    , m_backend(std::move(backend))
{
    m_clock.start();
}

InferenceWorker::~InferenceWorker() = default;

void InferenceWorker::cancelUpTo(quint64 requestId)
{
    quint64 current = m_cancelUpTo.load();
    while (current < requestId && !m_cancelUpTo.compare_exchange_weak(current, requestId)) {
    }
}

void InferenceWorker::load(const QString &path, const LoadOptions &options)
{
    LoadResult result;
    try {
        result = m_backend->load(path, options, [this](double f) { Q_EMIT loadProgress(f); });
    } catch (const std::exception &e) {
        result = LoadResult{false, {}, QString::fromUtf8(e.what()), {}};
    }
    Q_EMIT loadFinished(result);
    emitTelemetry(0.0, 0.0);
}

void InferenceWorker::unload()
{
    m_backend->unload();
    emitTelemetry(0.0, 0.0);
}

void InferenceWorker::generate(quint64 requestId, const QList<ChatTurn> &conversation,
                               const SamplingSettings &settings)
{
    GenerationStats stats;
    stats.requestId = requestId;
    if (cancelled(requestId)) {
        stats.cancelled = true;
        Q_EMIT generationFinished(stats);
        return;
    }
    if (!m_backend->loaded()) {
        Q_EMIT error(requestId, tr("No model is loaded."));
        return;
    }
    TokenBatcher batcher;
    QElapsedTimer timer;
    timer.start();
    const double energyStart = m_backend->energyJoules();
    try {
        const PrefillResult prefilled = m_backend->prefill(conversation, settings);
        stats.promptTokens = prefilled.promptTokens;
        stats.reusedPromptTokens = prefilled.reusedTokens;
        const qint64 prefillNs = timer.nsecsElapsed();
        stats.prefillTokensPerSecond = rate(prefilled.promptTokens - prefilled.reusedTokens, prefillNs);
        emitTelemetry(0.0, stats.prefillTokensPerSecond);
        // Cancellation is checked between engine steps: the reply ends on a whole token.
        m_speculation = {};
        const int limit = settings.maxNewTokens > 0 ? settings.maxNewTokens : std::numeric_limits<int>::max();
        while (!cancelled(requestId) && stats.generatedTokens < limit) {
            const std::optional<DecodedPiece> piece = m_backend->decodeStep();
            if (!piece)
                break;
            if (stats.generatedTokens == 0 && piece->tokens > 0)
                stats.timeToFirstTokenMs = timer.nsecsElapsed() / 1e6;
            stats.generatedTokens += piece->tokens;
            stats.draftedTokens += piece->draftedTokens;
            stats.acceptedDraftTokens += piece->acceptedDraftTokens;
            stats.targetPasses += piece->targetPass ? 1 : 0;
            m_speculation = stats;
            emitBatch(requestId, batcher.push(piece->text, m_clock.elapsed(), piece->tokens,
                                              std::min(piece->acceptedDraftTokens, piece->tokens),
                                              piece->draftTextLength));
            const double decodeRate = rate(stats.generatedTokens, timer.nsecsElapsed() - prefillNs);
            if (m_clock.elapsed() - m_lastTelemetryMs >= kTelemetryIntervalMs)
                emitTelemetry(decodeRate, 0.0);
        }
        stats.decodeTokensPerSecond = rate(stats.generatedTokens, timer.nsecsElapsed() - prefillNs);
        stats.contextFull = m_backend->contextFull();
        stats.hitTokenLimit = !stats.contextFull && stats.generatedTokens >= limit;
    } catch (const std::exception &e) {
        emitBatch(requestId, batcher.flush(m_clock.elapsed()));
        Q_EMIT error(requestId, QString::fromUtf8(e.what()));
        return;
    }
    stats.cancelled = cancelled(requestId);
    const double energyEnd = m_backend->energyJoules();
    if (energyStart >= 0 && energyEnd >= energyStart && stats.generatedTokens > 0)
        stats.joulesPerToken = (energyEnd - energyStart) / stats.generatedTokens;
    emitBatch(requestId, batcher.flush(m_clock.elapsed()));
    emitTelemetry(stats.decodeTokensPerSecond, 0.0);
    Q_EMIT generationFinished(stats);
}

void InferenceWorker::emitBatch(quint64 requestId, std::optional<PendingText> batch)
{
    if (batch)
        Q_EMIT tokensArrived(TokenBatch{requestId, std::move(batch->text), batch->tokenCount,
                                        batch->acceptedDraftTokens, std::move(batch->draftRanges)});
}

void InferenceWorker::emitTelemetry(double decodeRate, double prefillRate)
{
    m_lastTelemetryMs = m_clock.elapsed();
    TelemetrySample sample;
    sample.timeSeconds = m_lastTelemetryMs / 1000.0;
    sample.decodeTokensPerSecond = decodeRate;
    sample.prefillTokensPerSecond = prefillRate;
    sample.boundTokensPerSecond = m_backend->boundTokensPerSecond();
    const GenerationBackend::VramUsage vram = m_backend->vram();
    sample.vramUsedBytes = vram.used;
    sample.vramTotalBytes = vram.total;
    sample.vramWeightsBytes = vram.weights;
    sample.vramCacheBytes = vram.cache;
    sample.powerWatts = m_backend->powerWatts();
    sample.cpuBackend = m_backend->deviceName() == QLatin1String("cpu");
    sample.gpu = m_backend->gpuStatus();
    if (m_speculation.draftedTokens > 0)
        sample.draftAcceptanceRate = m_speculation.acceptanceRate();
    sample.tokensPerPass = m_speculation.tokensPerPass();
    Q_EMIT telemetry(sample);
}
