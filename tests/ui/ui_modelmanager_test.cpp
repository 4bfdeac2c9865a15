// ModelManager: the list, settings clamping, the fit readout from the planner interface, and
// loading through the QCoro task (success and an out-of-memory failure).
#include <QSignalSpy>
#include <QTest>

#include "services/fakeinferenceservice.h"
#include "viewmodels/modelmanager.h"

namespace {
constexpr qint64 kGiB = 1024LL * 1024 * 1024;

std::unique_ptr<VramPlanner> planner24()
{
    return std::make_unique<FakeVramPlanner>(24 * kGiB, 936e9);
}
}  // namespace

class ModelManagerTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void listsModelsFromService()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner24());
        QCOMPARE(models.rowCount(), service.availableModels().size());
        QCOMPARE(models.currentIndex(), 0);
        const QModelIndex first = models.index(0);
        QCOMPARE(models.data(first, ModelManager::NameRole).toString(), service.availableModels()[0].name);
        QCOMPARE(models.data(first, ModelManager::BpwRole).toDouble(), 4.0);
        QCOMPARE(models.data(first, ModelManager::NativeContextRole).toInt(), 131072);
        QVERIFY(!models.data(first, ModelManager::LoadedRole).toBool());
        QCOMPARE(models.cacheTypeNames(), (QStringList{"FP16", "FP8", "Q8", "Q6", "Q4"}));
        QVERIFY(!models.onCpu());
    }

    void settingsAreClamped()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner24());
        QSignalSpy settings(&models, &ModelManager::settingsChanged);
        models.setDraftTokens(20);
        QCOMPARE(models.draftTokens(), 8);
        models.setDraftTokens(-3);
        QCOMPARE(models.draftTokens(), 0);
        models.setCacheType(42);
        QCOMPARE(models.cacheType(), 0);
        models.setCacheType(4);
        QCOMPARE(models.cacheType(), 4);
        QCOMPARE(models.loadOptions().cacheKind, CacheKind::Q4);
        models.setContextLength(1 << 30);
        QCOMPARE(models.contextLength(), 131072);
        models.setCurrentIndex(models.indexOfPath(FakeGenerationBackend::tooLargeModelPath()));
        QCOMPARE(models.maxContextLength(), 8192);
        QCOMPARE(models.contextLength(), 8192);  // follows the smaller native context
        QCOMPARE(models.bpw(), 8.0);             // the model's own bpw
        QVERIFY(settings.size() >= 5);
    }

    // The GPU split setting: normalised, validated, carried into the load options.
    void gpuSplitIsValidated()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner24());
        QCOMPARE(models.gpuSplit(), QString());
        models.setGpuSplit(QStringLiteral(" 20, 23.5 "));
        QCOMPARE(models.gpuSplit(), QStringLiteral("20,23.5"));
        QCOMPARE(models.loadOptions().gpuSplit, QStringLiteral("20,23.5"));
        QVERIFY(models.gpuSplitError().isEmpty());
        models.setGpuSplit(QStringLiteral("Auto"));
        QCOMPARE(models.loadOptions().gpuSplit, QStringLiteral("auto"));
        for (const char *bad : {"20;23", "x", "20,,23", "-4", "20,"}) {
            models.setGpuSplit(QString::fromLatin1(bad));
            QVERIFY2(!models.gpuSplitError().isEmpty(), bad);
            QCOMPARE(models.loadOptions().gpuSplit, QStringLiteral("auto"));  // the last good value stays
        }
        models.setGpuSplit(QString());
        QVERIFY(models.gpuSplitError().isEmpty());
        QCOMPARE(models.loadOptions().gpuSplit, QString());
    }

    void fitFollowsSettings()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner24());
        models.setContextLength(32768);
        QVariantMap fit = models.fit();
        QVERIFY(fit.value(QStringLiteral("available")).toBool());
        const double fp16Cache = fit.value(QStringLiteral("cacheGiB")).toDouble();
        models.setCacheType(int(CacheKind::Q4));
        fit = models.fit();
        QVERIFY(fit.value(QStringLiteral("cacheGiB")).toDouble() < fp16Cache / 3);
        const double weights4 = fit.value(QStringLiteral("weightsGiB")).toDouble();
        models.setBpw(8.0);
        QVERIFY(qFuzzyCompare(models.fit().value(QStringLiteral("weightsGiB")).toDouble(), 2 * weights4));

        models.setCurrentIndex(models.indexOfPath(FakeGenerationBackend::tooLargeModelPath()));
        fit = models.fit();
        QVERIFY(!fit.value(QStringLiteral("fits")).toBool());
        QCOMPARE(fit.value(QStringLiteral("largestContext")).toInt(), 0);
    }

    void withoutPlannerTheFitIsUnavailable()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, std::make_unique<UnavailableVramPlanner>());
        QCOMPARE(models.fit().value(QStringLiteral("available")).toBool(), false);
        QVERIFY(!models.fit().contains(QStringLiteral("usedGiB")));
    }

    void simulatedDraftModel()
    {
        // The simulated Llama 3 models share a vocabulary; the others have none known.
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner24());
        const QString big = FakeGenerationBackend::tooLargeModelPath();
        const QString small = service.availableModels()[0].path;
        models.setCurrentIndex(models.indexOfPath(big));
        QCOMPARE(models.draftModelPaths(), QStringList{small});
        const double plainUsed = models.fit().value(QStringLiteral("usedGiB")).toDouble();
        QVERIFY(models.setDraftModelPath(small));
        QVERIFY(models.fit().value(QStringLiteral("draftGiB")).toDouble() > 0);
        QCOMPARE(models.fit().value(QStringLiteral("usedGiB")).toDouble(),
                 plainUsed + models.fit().value(QStringLiteral("draftGiB")).toDouble());
        models.setCurrentIndex(1);  // Mistral: no vocabulary known, nothing offered
        QVERIFY(models.draftModelPaths().isEmpty());
        QCOMPARE(models.draftModelIndex(), -1);
    }

    void loadsAndUnloads()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 4, 0, 1});
        ModelManager models(&service, planner24());
        QSignalSpy loaded(&models, &ModelManager::loadedModelChanged);
        QSignalSpy progress(&models, &ModelManager::loadProgressChanged);
        models.setCurrentIndex(2);
        models.load();
        QVERIFY(models.loading());
        QVERIFY(loaded.wait(10000));
        QVERIFY(!models.loading());
        QCOMPARE(models.loadedModelName(), service.availableModels()[2].name);
        QVERIFY(models.data(models.index(2), ModelManager::LoadedRole).toBool());
        QVERIFY(models.loadError().isEmpty());
        QVERIFY(progress.size() >= 4);

        models.unload();
        QCOMPARE(models.loadedModelName(), QString());
        QVERIFY(!models.data(models.index(2), ModelManager::LoadedRole).toBool());
    }

    void outOfMemoryLeavesManagerUsable()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 4, 0, 1});
        ModelManager models(&service, planner24());
        QSignalSpy errors(&models, &ModelManager::loadErrorChanged);
        models.setCurrentIndex(models.indexOfPath(FakeGenerationBackend::tooLargeModelPath()));
        models.load();
        QVERIFY(errors.wait(10000));
        QVERIFY(models.loadError().contains(QStringLiteral("Out of memory")));
        QVERIFY(!models.loading());
        QCOMPARE(models.loadedModelName(), QString());

        QSignalSpy loaded(&models, &ModelManager::loadedModelChanged);
        models.setCurrentIndex(0);
        models.load();
        QVERIFY(loaded.wait(10000));
        QVERIFY(models.loadError().isEmpty());
        QCOMPARE(models.loadedModelName(), service.availableModels()[0].name);
    }
};

QTEST_GUILESS_MAIN(ModelManagerTest)
#include "ui_modelmanager_test.moc"
