// Lives on the inference thread. Runs one request at a time through a GenerationBackend and
// reports results as value types through signals; it never touches a Qt model.
#pragma once
#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <memory>

#include "generationbackend.h"
#include "tokenbatcher.h"

class InferenceWorker : public QObject
{
    Q_OBJECT
public:
    explicit InferenceWorker(std::unique_ptr<GenerationBackend> backend, QObject *parent = nullptr);
    ~InferenceWorker() override;

    // Thread-safe: every request with an id <= requestId stops at its next step.
    void cancelUpTo(quint64 requestId);

public Q_SLOTS:
    void load(const QString &path, const LoadOptions &options);
    void unload();
    void generate(quint64 requestId, const QList<ChatTurn> &conversation, const SamplingSettings &settings);

Q_SIGNALS:
    void tokensArrived(const TokenBatch &batch);
    void generationFinished(const GenerationStats &stats);
    void error(quint64 requestId, const QString &message);
    void telemetry(const TelemetrySample &sample);
    void loadProgress(double fraction);
    void loadFinished(const LoadResult &result);

private:
    bool cancelled(quint64 requestId) const { return requestId <= m_cancelUpTo.load(); }
    void emitBatch(quint64 requestId, std::optional<PendingText> batch);
    void emitTelemetry(double decodeRate, double prefillRate);

    std::unique_ptr<GenerationBackend> m_backend;
    std::atomic<quint64> m_cancelUpTo{0};
    QElapsedTimer m_clock;
    qint64 m_lastTelemetryMs = -1000;
    GenerationStats m_speculation;  // the current (or last) reply's token and draft counts, for telemetry
};
