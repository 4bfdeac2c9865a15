// TelemetryModel: the graph's window, meters (one per GPU), efficiency, the likely reason for a
// shortfall, and the series it fills.
#include <QSignalSpy>
#include <QTest>
#include <QtCharts/QLineSeries>

#include "viewmodels/telemetrymodel.h"

#include <exl/gpu_power.h>

namespace {
TelemetrySample sample(double t, double decode, double bound, qint64 used = 0, qint64 total = 0)
{
    TelemetrySample s;
    s.timeSeconds = t;
    s.decodeTokensPerSecond = decode;
    s.boundTokensPerSecond = bound;
    s.vramUsedBytes = used;
    s.vramTotalBytes = total;
    return s;
}
constexpr qint64 kGiB = 1024LL * 1024 * 1024;
}  // namespace

class TelemetryModelTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void plotsDecodeSamplesOnly()
    {
        TelemetryModel model;
        QSignalSpy updated(&model, &TelemetryModel::updated);
        model.addSample(sample(1.0, 0.0, 200.0, 6 * kGiB, 24 * kGiB));  // load: meters only
        QCOMPARE(model.observed().size(), 0);
        QVERIFY(model.hasVram());
        QCOMPARE(model.vramUsedGiB(), 6.0);
        QCOMPARE(model.vramTotalGiB(), 24.0);
        model.addSample(sample(2.0, 150.0, 200.0, 6 * kGiB, 24 * kGiB));
        model.addSample(sample(2.25, 160.0, 200.0, 6 * kGiB, 24 * kGiB));
        QCOMPARE(model.observed().size(), 2);
        QCOMPARE(model.bound().size(), 2);
        QCOMPARE(model.observed().last(), QPointF(2.25, 160.0));
        QCOMPARE(model.efficiency(), 0.8);
        QCOMPARE(model.peakTokensPerSecond(), 200.0);
        QCOMPARE(updated.size(), 3);
    }

    void vramMeterPartsAddUp()
    {
        TelemetryModel model;
        TelemetrySample s = sample(1.0, 0.0, 0.0, 10 * kGiB, 24 * kGiB);
        s.vramWeightsBytes = 5 * kGiB;
        s.vramCacheBytes = 2 * kGiB;
        model.addSample(s);
        QCOMPARE(model.vramWeightsGiB(), 5.0);
        QCOMPARE(model.vramCacheGiB(), 2.0);
        QCOMPARE(model.vramOtherGiB(), 3.0);
        QCOMPARE(model.vramFreeGiB(), 14.0);
        // Parts the backend over-reports never exceed what is in use.
        s.vramWeightsBytes = 9 * kGiB;
        s.vramCacheBytes = 4 * kGiB;
        model.addSample(s);
        QCOMPARE(model.vramWeightsGiB(), 9.0);
        QCOMPARE(model.vramCacheGiB(), 1.0);
        QCOMPARE(model.vramOtherGiB(), 0.0);
        // The CPU: nothing.
        model.addSample(sample(2.0, 0.0, 0.0));
        QVERIFY(!model.hasVram());
        QCOMPARE(model.vramWeightsGiB() + model.vramCacheGiB() + model.vramOtherGiB() + model.vramFreeGiB(), 0.0);
    }

    void keepsOneMinuteWindow()
    {
        TelemetryModel model;
        for (int i = 0; i <= 400; ++i)
            model.addSample(sample(i * 0.25, 100.0 + i % 7, 180.0));
        QCOMPARE(model.windowEnd(), 100.0);
        QCOMPARE(model.windowStart(), 40.0);
        QVERIFY(model.observed().constFirst().x() >= 40.0);
        QCOMPARE(model.observed().size(), 241);  // 40.0 .. 100.0 every 0.25 s
        QCOMPARE(model.windowStart(), model.windowEnd() - TelemetryModel::kWindowSeconds);
    }

    void earlyWindowStartsAtZero()
    {
        TelemetryModel model;
        model.addSample(sample(5.0, 50.0, 0.0));
        QCOMPARE(model.windowStart(), 0.0);
        QCOMPARE(model.efficiency(), 0.0);  // no bound known
        QCOMPARE(model.bound().size(), 0);
        QVERIFY(!model.hasVram());          // CPU backend
    }

    void fillsChartSeries()
    {
        TelemetryModel model;
        model.addSample(sample(1.0, 40.0, 90.0));
        model.addSample(sample(1.5, 45.0, 90.0));
        QLineSeries observed;
        QLineSeries bound;
        model.fillSeries(&observed, &bound);
        QCOMPARE(observed.count(), 2);
        // x in seconds before the newest sample: the axis shows the last minute as -60 ... 0.
        QCOMPARE(observed.at(0), QPointF(-0.5, 40.0));
        QCOMPARE(observed.at(1), QPointF(0.0, 45.0));
        QCOMPARE(bound.count(), 2);
        model.clear();
        model.fillSeries(&observed, &bound);
        QCOMPARE(observed.count(), 0);
        QCOMPARE(model.decodeTokensPerSecond(), 0.0);
    }

    void rateAxisEndsOnARoundNumber()
    {
        // The top is the first of 1, 2, 2.5, 5 (times a power of ten) at or above the value, so
        // its fifths are round too.
        QCOMPARE(TelemetryModel::niceAxisMax(361.0), 500.0);
        QCOMPARE(TelemetryModel::niceAxisMax(1224.9), 2000.0);
        QCOMPARE(TelemetryModel::niceAxisMax(2300.0), 2500.0);
        QCOMPARE(TelemetryModel::niceAxisMax(100.0), 100.0);
        QCOMPARE(TelemetryModel::niceAxisMax(0.0), 10.0);
        QCOMPARE(TelemetryModel::niceAxisMax(0.37), 0.5);
        TelemetryModel model;
        model.addSample(sample(1.0, 300.0, 328.0));  // peak 328, with room 360.8
        QCOMPARE(model.rateAxisMax(), 500.0);
    }

    void oneMeterPerGpuEngineFirst()
    {
        TelemetryModel model;
        TelemetrySample s = sample(1.0, 0.0, 0.0, 10 * kGiB, 24 * kGiB);
        s.vramWeightsBytes = 5 * kGiB;
        s.vramCacheBytes = 2 * kGiB;
        s.gpu.index = 1;
        s.gpu.name = QStringLiteral("RTX 4090");
        s.gpu.otherGpus = {GpuMemorySample{0, QStringLiteral("RTX 3060"), 3 * kGiB, 12 * kGiB},
                           GpuMemorySample{2, QStringLiteral("broken"), 0, 0}};  // no total: left out
        model.addSample(s);
        const QVariantList gpus = model.gpus();
        QCOMPARE(gpus.size(), 2);
        const QVariantMap engine = gpus.at(0).toMap();
        QCOMPARE(engine.value("index").toInt(), 1);
        QCOMPARE(engine.value("engine").toBool(), true);
        QCOMPARE(engine.value("name").toString(), QStringLiteral("RTX 4090"));
        QCOMPARE(engine.value("weightsGiB").toDouble(), 5.0);
        QCOMPARE(engine.value("cacheGiB").toDouble(), 2.0);
        QCOMPARE(engine.value("otherGiB").toDouble(), 3.0);
        QCOMPARE(engine.value("freeGiB").toDouble(), 14.0);
        const QVariantMap other = gpus.at(1).toMap();
        QCOMPARE(other.value("index").toInt(), 0);
        QCOMPARE(other.value("engine").toBool(), false);
        QCOMPARE(other.value("weightsGiB").toDouble(), 0.0);
        QCOMPARE(other.value("otherGiB").toDouble(), 3.0);  // another GPU's use is all "other"
        QCOMPARE(other.value("freeGiB").toDouble(), 9.0);

        // On the CPU (or remote) no meter for an engine GPU; the machine's GPUs still show.
        s.cpuBackend = true;
        s.vramTotalBytes = 0;
        model.addSample(s);
        QCOMPARE(model.gpus().size(), 1);
    }

    // A layer split: the other GPU holding layers gets an engine meter with its weights and cache.
    void splitGpusShowTheirWeightsAndCache()
    {
        TelemetryModel model;
        TelemetrySample s = sample(1.0, 0.0, 0.0, 20 * kGiB, 24 * kGiB);
        s.vramWeightsBytes = 16 * kGiB;
        s.vramCacheBytes = 2 * kGiB;
        s.gpu.index = 0;
        s.gpu.name = QStringLiteral("RTX 4090");
        GpuMemorySample second{1, QStringLiteral("RTX 4090"), 22 * kGiB, 24 * kGiB};
        second.engine = true;
        second.weightsBytes = 18 * kGiB;
        second.cacheBytes = 3 * kGiB;
        s.gpu.otherGpus = {second};
        model.addSample(s);
        const QVariantList gpus = model.gpus();
        QCOMPARE(gpus.size(), 2);
        const QVariantMap g1 = gpus.at(1).toMap();
        QCOMPARE(g1.value("index").toInt(), 1);
        QCOMPARE(g1.value("engine").toBool(), true);
        QCOMPARE(g1.value("weightsGiB").toDouble(), 18.0);
        QCOMPARE(g1.value("cacheGiB").toDouble(), 3.0);
        QCOMPARE(g1.value("otherGiB").toDouble(), 1.0);
        QCOMPARE(g1.value("freeGiB").toDouble(), 2.0);
        // Figures past what the device reports in use are clamped, never negative "other".
        s.gpu.otherGpus[0].weightsBytes = 30 * kGiB;
        model.addSample(s);
        const QVariantMap clamped = model.gpus().at(1).toMap();
        QCOMPARE(clamped.value("weightsGiB").toDouble(), 22.0);
        QCOMPARE(clamped.value("cacheGiB").toDouble(), 0.0);
        QCOMPARE(clamped.value("otherGiB").toDouble(), 0.0);
    }

    void likelyReasonOnlyWhenWellShortOfTheBound()
    {
        TelemetrySample s = sample(1.0, 600.0, 1000.0, 10 * kGiB, 24 * kGiB);
        s.gpu.clockReasonsKnown = true;
        s.gpu.clockReasons = exl::gpu_clock_reason::power_cap;
        QVERIFY(TelemetryModel::likelyReason(s).isEmpty());  // 60 % of the bound: no hint
        s.decodeTokensPerSecond = 0.0;                       // not decoding
        QVERIFY(TelemetryModel::likelyReason(s).isEmpty());
        s.decodeTokensPerSecond = 300.0;
        s.boundTokensPerSecond = 0.0;                        // no bound known
        QVERIFY(TelemetryModel::likelyReason(s).isEmpty());
        s.boundTokensPerSecond = 1000.0;
        s.remote = true;                                     // a remote endpoint: nothing to see
        QVERIFY(TelemetryModel::likelyReason(s).isEmpty());
        s.remote = false;
        QVERIFY(TelemetryModel::likelyReason(s).contains(QStringLiteral("power limit")));
    }

    void likelyReasonInOrderOfWhatTheAppSees()
    {
        namespace why = exl::gpu_clock_reason;
        TelemetrySample s = sample(1.0, 300.0, 1000.0, 10 * kGiB, 24 * kGiB);
        s.gpu.smClockMhz = 1200;
        s.gpu.smClockMaxMhz = 1980;
        s.gpu.clockReasonsKnown = true;
        s.gpu.otherProcesses = 2;
        s.gpu.utilizationPercent = 40;
        // Clock reasons first (thermal before power), with the clocks.
        s.gpu.clockReasons = why::hw_thermal | why::power_cap;
        QString r = TelemetryModel::likelyReason(s);
        QVERIFY2(r.contains(QStringLiteral("temperature")) && r.contains(QStringLiteral("1200 of 1980 MHz")), qPrintable(r));
        s.gpu.clockReasons = why::power_cap;
        QVERIFY(TelemetryModel::likelyReason(s).contains(QStringLiteral("power limit")));
        s.gpu.clockReasons = why::hw_slowdown;
        QVERIFY(TelemetryModel::likelyReason(s).contains(QStringLiteral("hardware slowdown")));
        s.gpu.clockReasons = why::application_clocks;
        QVERIFY(TelemetryModel::likelyReason(s).contains(QStringLiteral("application clocks")));
        // An idle GPU is not a reason for being slow.
        s.gpu.clockReasons = why::idle;
        r = TelemetryModel::likelyReason(s);
        QVERIFY2(r.contains(QStringLiteral("Other processes")) && r.contains(QStringLiteral("(2)")), qPrintable(r));
        s.gpu.otherProcesses = 0;
        r = TelemetryModel::likelyReason(s);
        QVERIFY2(r.contains(QStringLiteral("idle 60 %")), qPrintable(r));
        s.gpu.utilizationPercent = 98;
        r = TelemetryModel::likelyReason(s);
        QVERIFY2(r.contains(QStringLiteral("30 %")), qPrintable(r));  // the kernels: 300 of 1000
        s.boundTokensPerSecond = 7800.0;                                 // a 1B model
        s.decodeTokensPerSecond = 1000.0;
        QVERIFY(TelemetryModel::likelyReason(s).contains(QStringLiteral("small")));
        // Unknown readings (no NVML) fall through to what is left.
        TelemetrySample bare = sample(1.0, 300.0, 1000.0, 10 * kGiB, 24 * kGiB);
        QVERIFY(TelemetryModel::likelyReason(bare).contains(QStringLiteral("decode kernels")));
        bare.cpuBackend = true;
        bare.vramTotalBytes = 0;
        QVERIFY(TelemetryModel::likelyReason(bare).contains(QStringLiteral("CPU")));
    }
};

QTEST_MAIN(TelemetryModelTest)
#include "ui_telemetrymodel_test.moc"
