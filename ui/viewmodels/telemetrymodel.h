// Live engine figures for the telemetry panel: a window of decode speed samples plotted
// against the bandwidth-bound line, a VRAM meter per GPU, and, when decoding falls well short of
// the bound, the likely reason the app can see. Fed by InferenceService::telemetry.
#pragma once
#include <QObject>
#include <QPointF>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "services/inferencetypes.h"

#include <QtCharts/QAbstractSeries>

class TelemetryModel : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(double decodeTokensPerSecond READ decodeTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double prefillTokensPerSecond READ prefillTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double boundTokensPerSecond READ boundTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double efficiency READ efficiency NOTIFY updated)
    Q_PROPERTY(double vramUsedGiB READ vramUsedGiB NOTIFY updated)
    Q_PROPERTY(double vramTotalGiB READ vramTotalGiB NOTIFY updated)
    Q_PROPERTY(bool hasVram READ hasVram NOTIFY updated)
    Q_PROPERTY(double vramWeightsGiB READ vramWeightsGiB NOTIFY updated)
    Q_PROPERTY(double vramCacheGiB READ vramCacheGiB NOTIFY updated)
    Q_PROPERTY(double vramOtherGiB READ vramOtherGiB NOTIFY updated)
    Q_PROPERTY(double vramFreeGiB READ vramFreeGiB NOTIFY updated)
    Q_PROPERTY(double powerWatts READ powerWatts NOTIFY updated)
    Q_PROPERTY(double windowStart READ windowStart NOTIFY updated)
    Q_PROPERTY(double windowEnd READ windowEnd NOTIFY updated)
    Q_PROPERTY(double peakTokensPerSecond READ peakTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double rateAxisMax READ rateAxisMax NOTIFY updated)
    Q_PROPERTY(bool remote READ remote NOTIFY updated)
    Q_PROPERTY(double timeToFirstTokenMs READ timeToFirstTokenMs NOTIFY updated)
    Q_PROPERTY(QVariantList gpus READ gpus NOTIFY updated)
    Q_PROPERTY(QString likelyReason READ likelyReason NOTIFY updated)
    Q_PROPERTY(double draftAcceptanceRate READ draftAcceptanceRate NOTIFY updated)
    Q_PROPERTY(double tokensPerPass READ tokensPerPass NOTIFY updated)
public:
    static constexpr double kWindowSeconds = 60.0;
    // "Well short of the bound": observed decode speed below this fraction of it.
    static constexpr double kShortfall = 0.5;

    explicit TelemetryModel(QObject *parent = nullptr);

    double decodeTokensPerSecond() const { return m_last.decodeTokensPerSecond; }
    double prefillTokensPerSecond() const { return m_last.prefillTokensPerSecond; }
    double boundTokensPerSecond() const { return m_last.boundTokensPerSecond; }
    // Observed decode speed as a fraction of the bound (0 when either is unknown).
    double efficiency() const;
    double vramUsedGiB() const;
    double vramTotalGiB() const;
    bool hasVram() const { return m_last.vramTotalBytes > 0; }
    // The meter's parts: weights, KV cache, everything else in use (scratch, the CUDA context,
    // other processes), free; they add up to the total.
    double vramWeightsGiB() const;
    double vramCacheGiB() const;
    double vramOtherGiB() const;
    double vramFreeGiB() const;
    double powerWatts() const { return m_last.powerWatts; }  // <0: no reading (CPU, no NVML)
    double windowStart() const;
    double windowEnd() const;
    double peakTokensPerSecond() const;
    // The figures come from a remote endpoint, as observed by this app: no VRAM, no bound line.
    bool remote() const { return m_last.remote; }
    double timeToFirstTokenMs() const { return m_last.timeToFirstTokenMs; }
    // Speculative decoding in the current (or last) reply: the share of drafted tokens the model
    // accepted (<0: nothing was drafted) and tokens per forward pass of the model (0: unknown).
    double draftAcceptanceRate() const { return m_last.draftAcceptanceRate; }
    double tokensPerPass() const { return m_last.tokensPerPass; }
    // One entry per GPU, the engine's first: index, name, engine (bool), totalGiB, usedGiB and the
    // meter's parts weightsGiB, cacheGiB, otherGiB, freeGiB (other GPUs: all use is "other").
    QVariantList gpus() const;
    QString likelyReason() const { return likelyReason(m_last); }
    // Why decoding runs below kShortfall of the bound, from what the app can see of the GPU (clock
    // reasons, other processes, idle time) and of the model; empty when it does not, or when
    // nothing is decoding or the bound is unknown.
    static QString likelyReason(const TelemetrySample &sample);

    const QList<QPointF> &observed() const { return m_observed; }
    const QList<QPointF> &bound() const { return m_bound; }

    // The top of the rate axis: the peak with some room, rounded up to 1, 2, 2.5 or 5 times a
    // power of ten, so that five ticks fall on round numbers.
    static double niceAxisMax(double value);
    double rateAxisMax() const { return niceAxisMax(peakTokensPerSecond() * 1.1); }
    // Copies the history into two QXYSeries of a ChartView (line series), x in seconds before the
    // newest sample (-60 ... 0).
    Q_INVOKABLE void fillSeries(QAbstractSeries *observed, QAbstractSeries *bound) const;

public Q_SLOTS:
    void addSample(const TelemetrySample &sample);
    void clear();

Q_SIGNALS:
    void updated();

private:
    TelemetrySample m_last;
    QList<QPointF> m_observed;
    QList<QPointF> m_bound;
};
