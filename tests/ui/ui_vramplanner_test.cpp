// EngineVramPlanner: the fit calculator on the engine's planner, with the fixture model
// ref-s-4.0bpw (described by the model scanner, as the app does): the KV cache bytes against
// the config's shape, cache types and what-if bit widths moving the right parts, the verdict and
// the largest context on a GPU too small for it, system memory as the target on the CPU, and the
// readout through ModelManager. Fixtures: $EXL_FIXTURES, default <source>/../shared/fixtures;
// missing fixtures skip the test unless EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "services/enginevramplanner.h"
#include "services/fakeinferenceservice.h"
#include "services/modelscanner.h"
#include "viewmodels/modelmanager.h"
#include <qcoro/qcorotask.h>

namespace {

QString fixtureModel()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    const QString root = env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
    return QDir(root).filePath(QStringLiteral("models/exl2/ref-s-4.0bpw"));
}

exl::plan::GpuSpec gpu(std::uint64_t mib)
{
    exl::plan::GpuSpec g;
    g.name = "Test GPU";
    g.memory_mib = mib;
    g.bandwidth_gbs = 1000.0;
    g.fp16_tflops = 100.0;
    return g;
}

}  // namespace

class VramPlannerTest : public QObject
{
    Q_OBJECT
private:
    ModelInfo m_model;
    QJsonObject m_config;

private Q_SLOTS:
    void initTestCase()
    {
        const QString dir = fixtureModel();
        if (!QFile::exists(QDir(dir).filePath(QStringLiteral("config.json")))) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL("fixture model missing and EXL_REQUIRE_FIXTURES=1");
            QSKIP("fixture model not found (set EXL_FIXTURES)");
        }
        const auto info = describeModelFolder(dir);
        QVERIFY(info.has_value());
        m_model = *info;
        QFile f(QDir(dir).filePath(QStringLiteral("config.json")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        m_config = QJsonDocument::fromJson(f.readAll()).object();
    }

    void cacheBytesFollowTheConfig()
    {
        EngineVramPlanner planner(gpu(24576), 128, false);
        VramPlan p = planner.plan({m_model, 0.0, 1024, CacheKind::Fp16, 0});
        QVERIFY(p.available);
        QVERIFY(p.fits);
        // FP16 K and V: layers x tokens x kv_heads x head_dim x 2 bytes x 2.
        const qint64 layers = m_config.value(QStringLiteral("num_hidden_layers")).toInteger();
        const qint64 heads = m_config.value(QStringLiteral("num_attention_heads")).toInteger();
        const qint64 kv = m_config.value(QStringLiteral("num_key_value_heads")).toInteger(heads);
        const qint64 headDim = m_config.value(QStringLiteral("hidden_size")).toInteger() / heads;
        QCOMPARE(p.cacheBytes, layers * 1024 * kv * headDim * 2 * 2);
        QVERIFY(p.weightsBytes > 0);
        QCOMPARE(p.deviceBytes, 24576LL * 1024 * 1024);
        QCOMPARE(p.target, QStringLiteral("Test GPU"));
        QVERIFY(p.boundTokensPerSecond > 0);
        // Twice the context: twice the cache, same weights.
        const VramPlan p2 = planner.plan({m_model, 0.0, 2048, CacheKind::Fp16, 0});
        QCOMPARE(p2.cacheBytes, 2 * p.cacheBytes);
        QCOMPARE(p2.weightsBytes, p.weightsBytes);
        QVERIFY(p2.boundTokensPerSecond < p.boundTokensPerSecond);  // more cache read per token
        // A Q4 cache is under a third of FP16's; weights do not move.
        const VramPlan q4 = planner.plan({m_model, 0.0, 2048, CacheKind::Q4, 0});
        QVERIFY(q4.cacheBytes < p2.cacheBytes / 3);
        QCOMPARE(q4.weightsBytes, p.weightsBytes);
    }

    void whatIfBitWidthMovesTheWeights()
    {
        EngineVramPlanner planner(gpu(24576), 128, false);
        const VramPlan own = planner.plan({m_model, 0.0, 1024, CacheKind::Fp16, 0});
        const VramPlan low = planner.plan({m_model, 2.5, 1024, CacheKind::Fp16, 0});
        const VramPlan high = planner.plan({m_model, 8.0, 1024, CacheKind::Fp16, 0});
        QVERIFY(low.available && high.available);
        QVERIFY(low.weightsBytes < own.weightsBytes);
        QVERIFY(high.weightsBytes > own.weightsBytes);
        QCOMPARE(high.cacheBytes, own.cacheBytes);
        // The model's own bpw (where the slider starts) is the exact plan, not a what-if.
        QCOMPARE(planner.plan({m_model, m_model.bpw, 1024, CacheKind::Fp16, 0}).weightsBytes, own.weightsBytes);
    }

    void tooSmallADevice()
    {
        // 64 MiB: less than the CUDA context and workspaces alone.
        EngineVramPlanner planner(gpu(64), 128, false);
        const VramPlan p = planner.plan({m_model, 0.0, 1024, CacheKind::Fp16, 0});
        QVERIFY(p.available);
        QVERIFY(!p.fits);
        QCOMPARE(p.largestContextThatFits, 0);
        // Roomy device: the largest context is the model's native one.
        EngineVramPlanner big(gpu(81920), 128, false);
        QCOMPARE(big.plan({m_model, 0.0, 1024, CacheKind::Fp16, 0}).largestContextThatFits, m_model.nativeContext);
    }

    // A GPU split: the smallest single GPU that holds the model at a long context, less 1 MiB, does
    // not hold it alone, but two of them do with "auto"; the figures add up over both GPUs.
    void splitPlansOverSeveralGpus()
    {
        const int ctx = 32768;
        auto fitsOn = [&](std::uint64_t mib) {
            EngineVramPlanner p(gpu(mib), 128, false);
            return p.plan({m_model, 0.0, ctx, CacheKind::Fp16, 0}).fits;
        };
        std::uint64_t lo = 64, hi = 1 << 20;  // lo does not fit, hi fits
        QVERIFY(!fitsOn(lo) && fitsOn(hi));
        while (hi - lo > 1) {
            const std::uint64_t mid = (lo + hi) / 2;
            (fitsOn(mid) ? hi : lo) = mid;
        }
        EngineVramPlanner one(gpu(hi), 128, false);
        const VramPlan whole = one.plan({m_model, 0.0, ctx, CacheKind::Fp16, 0});
        EngineVramPlanner planner(gpu(lo), 128, false);
        planner.setGpus({gpu(lo), gpu(lo)});
        VramPlanRequest r{m_model, 0.0, ctx, CacheKind::Fp16, 0};
        QVERIFY(!planner.plan(r).fits);  // no split: the first GPU alone
        r.gpuSplit = QStringLiteral("auto");
        const VramPlan split = planner.plan(r);
        QVERIFY(split.available);
        QVERIFY(split.fits);
        QCOMPARE(split.deviceBytes, qint64(2 * lo) * 1024 * 1024);
        QCOMPARE(split.target, QStringLiteral("Test GPU + Test GPU"));
        QCOMPARE(split.cacheBytes, whole.cacheBytes);      // every layer's cache, wherever it is
        QCOMPARE(split.weightsBytes, whole.weightsBytes);  // embedding on the first, head on the last
        QVERIFY(split.scratchBytes > whole.scratchBytes);  // a second CUDA context and scratch
        // Where the layers go: GPU 0 from layer 0, GPU 1 up to the last layer and the head.
        QCOMPARE(split.devices.size(), 2);
        const int layers = int(m_config.value(QStringLiteral("num_hidden_layers")).toInteger());
        QCOMPARE(split.devices[0].firstLayer, 0);
        QCOMPARE(split.devices[1].firstLayer, split.devices[0].lastLayer + 1);
        QCOMPARE(split.devices[1].lastLayer, layers - 1);
        QVERIFY(!split.devices[0].head && split.devices[1].head);
        QCOMPARE(split.devices[0].usedBytes + split.devices[1].usedBytes,
                 split.weightsBytes + split.cacheBytes + split.scratchBytes);
        QCOMPARE(split.devices[1].totalBytes, qint64(lo) * 1024 * 1024);
        QVERIFY(planner.plan({m_model, 0.0, 1024, CacheKind::Fp16, 0, {}, QStringLiteral("auto")}).devices.isEmpty());
        // Manual GiB per GPU: too little in all is "does not fit"; more GPUs than present:
        // no estimate.
        r.gpuSplit = QStringLiteral("0.01,0.01");
        QVERIFY(!planner.plan(r).fits);
        r.gpuSplit = QStringLiteral("10,10,10");
        QVERIFY(!planner.plan(r).available);
    }

    void unreadableFolderHasNoEstimate()
    {
        EngineVramPlanner planner(gpu(24576), 128, false);
        ModelInfo bogus = m_model;
        bogus.path = QDir::temp().filePath(QStringLiteral("exl-no-such-model-folder"));
        QVERIFY(!planner.plan({bogus, 0.0, 1024, CacheKind::Fp16, 0}).available);
        ModelInfo remote = m_model;
        remote.remote = true;
        QVERIFY(!planner.plan({remote, 0.0, 1024, CacheKind::Fp16, 0}).available);
    }

    void cpuPlansForSystemMemory()
    {
        const auto planner = EngineVramPlanner::forDevice(QStringLiteral("cpu"));
        QVERIFY(planner->systemMemory());
        QVERIFY(planner->target().memory_mib > 0);
        const VramPlan p = planner->plan({m_model, 0.0, 1024, CacheKind::Fp16, 0});
        QVERIFY(p.available);
        QVERIFY(p.target.isEmpty());
        QCOMPARE(p.deviceBytes, qint64(planner->target().memory_mib) * 1024 * 1024);
    }

    void modelManagerShowsThePlan()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, std::make_unique<EngineVramPlanner>(gpu(24576), 128, false));
        // The fake service lists made-up folders: no estimate for those.
        QVERIFY(!models.fit().value(QStringLiteral("available")).toBool());
        QVERIFY(QCoro::waitFor(models.addModelFolder(m_model.path)));  // scanned off the GUI thread
        models.setCurrentIndex(models.indexOfPath(m_model.path));
        const QVariantMap fit = models.fit();
        QVERIFY(fit.value(QStringLiteral("available")).toBool());
        QVERIFY(fit.value(QStringLiteral("fits")).toBool());
        QCOMPARE(fit.value(QStringLiteral("target")).toString(), QStringLiteral("Test GPU"));
        QVERIFY(fit.value(QStringLiteral("weightsGiB")).toDouble() > 0);
    }
};

QTEST_MAIN(VramPlannerTest)
#include "ui_vramplanner_test.moc"
