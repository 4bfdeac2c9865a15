// The draft model picker of the fit calculator, on the fixture models: ModelManager scans the
// fixture folders (EXL2 and HF) and a copy of the draft ref-xs-4.0bpw whose tokenizer has two
// tokens swapped (same size, another vocabulary). For ref-s-4.0bpw it offers ref-xs-4.0bpw and
// never the copy or the model itself, in agreement with the engine's own vocabulary check; a
// chosen draft adds at least its weights and cache to the fit (the engine's planner, planned
// for the draft alone); the choice is kept per model in the settings; and loading through the
// view model hands the draft path to the real engine backend on the CPU, which loads the draft.
// Fixtures: $EXL_FIXTURES, default <source>/../shared/fixtures; missing fixtures skip the test
// unless EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <mutex>

#include <exl/generator.h>
#include <exl/tokenizer.h>

#include "services/enginegenerationbackend.h"
#include "testmodels.h"
#include "services/enginevramplanner.h"
#include "services/fakeinferenceservice.h"
#include "services/modelscanner.h"
#include "services/workerinferenceservice.h"
#include "viewmodels/modelmanager.h"
#include <qcoro/qcorotask.h>
#include "viewmodels/settingsviewmodel.h"

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
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

std::unique_ptr<VramPlanner> planner()
{
    return std::make_unique<EngineVramPlanner>(gpu(24576), 128, false);
}

// The engine's verdict: may `draft` be the draft model of `target`?
bool engineAccepts(const QString &target, const QString &draft)
{
    try {
        exl::check_draft_vocabulary(*exl::Tokenizer::from_dir(target.toStdString()),
                                    *exl::Tokenizer::from_dir(draft.toStdString()));
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

// The real engine backend on the CPU, recording the options of each load.
class RecordingBackend : public EngineGenerationBackend
{
public:
    RecordingBackend() : EngineGenerationBackend(QStringLiteral("cpu")) {}
    LoadResult load(const QString &path, const LoadOptions &options, const std::function<void(double)> &progress) override
    {
        {
            std::lock_guard lock(mutex);
            loads.append(options);
        }
        return EngineGenerationBackend::load(path, options, progress);
    }
    QList<LoadOptions> recorded() const
    {
        std::lock_guard lock(mutex);
        return loads;
    }

private:
    mutable std::mutex mutex;
    QList<LoadOptions> loads;
};

}  // namespace

class DraftPickerTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QStringList m_roots;  // the fixture folders and the folder of the other-vocabulary copy
    QString m_target;
    QString m_draft;
    QString m_other;

    // A view model over the fake service's made-up models and the scanned fixture folders.
    void scan(ModelManager &models)
    {
        for (const QString &root : m_roots)
            QVERIFY(QCoro::waitFor(models.addModelFolder(root)));  // scanned off the GUI thread
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString exl2 = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2"));
        m_target = QDir::cleanPath(QDir(exl2).filePath(QStringLiteral("ref-s-4.0bpw")));
        m_draft = QDir::cleanPath(QDir(exl2).filePath(QStringLiteral("ref-xs-4.0bpw")));
        for (const QString &dir : {m_target, m_draft}) {
            if (!QFile::exists(QDir(dir).filePath(QStringLiteral("config.json")))) {
                if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                    QFAIL(qPrintable(QStringLiteral("fixture model missing: %1 (EXL_REQUIRE_FIXTURES=1)").arg(dir)));
                QSKIP(qPrintable(QStringLiteral("fixture model missing: %1 (set EXL_FIXTURES)").arg(dir)));
            }
        }
        QVERIFY(m_tmp.isValid());
        m_other = QDir(m_tmp.path()).filePath(QStringLiteral("others/ref-xs-4.0bpw-other-vocabulary"));
        QVERIFY(writeOtherVocabulary(m_draft, m_other));
        m_roots = {exl2, QDir(fixturesDir()).filePath(QStringLiteral("models/hf")), QDir(m_tmp.path()).filePath(QStringLiteral("others"))};
    }

    void offersOnlyModelsOfTheSameVocabulary()
    {
        FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner());
        scan(models);
        QVERIFY(models.indexOfPath(m_other) >= 0);  // listed as a model, just not as a draft
        models.setCurrentIndex(models.indexOfPath(m_target));
        const QStringList offered = models.draftModelPaths();
        QVERIFY2(offered.contains(m_draft), qPrintable(offered.join(u',')));
        QVERIFY(!offered.contains(m_other));
        QVERIFY(!offered.contains(m_target));
        QCOMPARE(models.draftModelNames().size(), offered.size());
        // Smallest first: the small draft comes before the target's other quantizations.
        QCOMPARE(offered.first(), m_draft);
        QCOMPARE(models.draftModelIndex(), -1);  // none chosen: n-gram lookup
        QVERIFY(models.loadOptions().draftModelPath.isEmpty());

        // Every scanned folder is offered exactly when the engine's check accepts it, and the
        // made-up models of the fake service (no folder) never are.
        const QList<ModelInfo> scanned = scanModelFolders(m_roots);
        QVERIFY(scanned.size() >= 7);
        for (const ModelInfo &m : scanned) {
            if (m.path == m_target)
                continue;
            QCOMPARE(offered.contains(m.path), engineAccepts(m_target, m.path));
        }
        for (const ModelInfo &m : service.availableModels())
            QVERIFY(!offered.contains(m.path));

        // The copy with the other vocabulary has no partner among the models.
        models.setCurrentIndex(models.indexOfPath(m_other));
        QVERIFY(models.draftModelPaths().isEmpty());
        // The draft itself as the model: the target is offered to it, the draft is not.
        models.setCurrentIndex(models.indexOfPath(m_draft));
        QVERIFY(models.draftModelPaths().contains(m_target));
        QVERIFY(!models.draftModelPaths().contains(m_draft));
        QVERIFY(!models.setDraftModelPath(m_other));  // not offered: refused
    }

    void fitCountsTheDraftModel()
    {
        FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner());
        scan(models);
        models.setCurrentIndex(models.indexOfPath(m_target));
        models.setContextLength(1024);
        models.setDraftTokens(4);
        const QVariantMap plain = models.fit();
        QVERIFY(plain.value(QStringLiteral("available")).toBool());
        QCOMPARE(plain.value(QStringLiteral("draftGiB")).toDouble(), 0.0);
        QCOMPARE(plain.value(QStringLiteral("speculativeTokensPerSecond")).toDouble(), 0.0);

        QSignalSpy fitChanged(&models, &ModelManager::fitChanged);
        QVERIFY(models.setDraftModelPath(m_draft));
        QCOMPARE(models.draftModelPath(), m_draft);
        QCOMPARE(models.draftModelName(), QStringLiteral("ref-xs-4.0bpw"));
        QCOMPARE(fitChanged.size(), 1);
        const QVariantMap drafted = models.fit();
        const double growth = drafted.value(QStringLiteral("usedBytes")).toDouble() - plain.value(QStringLiteral("usedBytes")).toDouble();
        // The model's own parts do not move; the total grows by the draft model's part.
        QCOMPARE(drafted.value(QStringLiteral("weightsGiB")), plain.value(QStringLiteral("weightsGiB")));
        QCOMPARE(drafted.value(QStringLiteral("cacheGiB")), plain.value(QStringLiteral("cacheGiB")));
        QVERIFY(qAbs(growth - drafted.value(QStringLiteral("draftGiB")).toDouble() * kGiB) < 1.0);

        // ... which holds at least the draft's weights and its cache at this context, as the
        // planner gives them for the draft model planned on its own.
        const std::optional<ModelInfo> draftInfo = describeModelFolder(m_draft);
        QVERIFY(draftInfo);
        const VramPlan alone = planner()->plan({*draftInfo, 0.0, 1024, CacheKind::Fp16, 0});
        QVERIFY(alone.available && alone.weightsBytes > 0 && alone.cacheBytes > 0);
        QVERIFY2(growth >= double(alone.weightsBytes + alone.cacheBytes),
                 qPrintable(QStringLiteral("growth %1, draft weights %2 + cache %3").arg(growth).arg(alone.weightsBytes).arg(alone.cacheBytes)));
        QVERIFY(growth <= double(alone.weightsBytes + alone.cacheBytes + alone.scratchBytes));
        QVERIFY(drafted.value(QStringLiteral("speculativeTokensPerSecond")).toDouble() > 0);
        QVERIFY(drafted.value(QStringLiteral("largestContext")).toInt() <= plain.value(QStringLiteral("largestContext")).toInt());

        // A longer context lengthens the draft's cache too.
        models.setContextLength(2048);
        const VramPlan alone2 = planner()->plan({*draftInfo, 0.0, 2048, CacheKind::Fp16, 0});
        const double draftGrowth = (models.fit().value(QStringLiteral("draftGiB")).toDouble() -
                                    drafted.value(QStringLiteral("draftGiB")).toDouble()) * kGiB;
        QVERIFY(draftGrowth >= double(alone2.cacheBytes - alone.cacheBytes) - 1.0);

        // Back to n-gram lookup: nothing of the draft is left in the fit.
        models.setContextLength(1024);
        QVERIFY(models.setDraftModelPath({}));
        QCOMPARE(models.fit(), plain);
    }

    void choiceIsKeptPerModel()
    {
        const QString file = QDir(m_tmp.path()).filePath(QStringLiteral("settings.ini"));
        const QString hfTarget = QDir::cleanPath(QDir(m_roots.at(1)).filePath(QStringLiteral("ref-s")));
        {
            SettingsViewModel settings(file);
            FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});
            ModelManager models(&service, planner());
            models.setDraftModels(settings.draftModels());
            connect(&models, &ModelManager::draftModelEdited, &settings, &SettingsViewModel::setDraftModel);
            scan(models);
            models.setCurrentIndex(models.indexOfPath(m_target));
            QSignalSpy edited(&models, &ModelManager::draftModelEdited);
            QVERIFY(models.setDraftModelPath(m_draft));
            QCOMPARE(edited.size(), 1);
            QCOMPARE(edited.first().at(0).toString(), m_target);
            QCOMPARE(edited.first().at(1).toString(), m_draft);
            // Another model has its own choice (none so far).
            models.setCurrentIndex(models.indexOfPath(hfTarget));
            QCOMPARE(models.draftModelIndex(), -1);
            QVERIFY(models.loadOptions().draftModelPath.isEmpty());
            models.setCurrentIndex(models.indexOfPath(m_target));
            QCOMPARE(models.draftModelPath(), m_draft);
        }
        // A new start: the settings file brings the choice back.
        SettingsViewModel settings(file);
        QCOMPARE(settings.draftModel(m_target), m_draft);
        QVERIFY(settings.draftModel(hfTarget).isEmpty());
        FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});
        ModelManager models(&service, planner());
        models.setDraftModels(settings.draftModels());
        scan(models);
        models.setCurrentIndex(models.indexOfPath(m_target));
        QCOMPARE(models.draftModelPath(), m_draft);
        QCOMPARE(models.loadOptions().draftModelPath, m_draft);
        QCOMPARE(models.draftModelNames().at(models.draftModelIndex()), QStringLiteral("ref-xs-4.0bpw"));
        // A remembered draft that is not offered any more (its folder gone) is not used.
        models.setDraftModels({{m_target, QDir(m_tmp.path()).filePath(QStringLiteral("gone"))}});
        QCOMPARE(models.draftModelIndex(), -1);
        QVERIFY(models.loadOptions().draftModelPath.isEmpty());
        // Clearing the choice removes it from the settings.
        settings.setDraftModel(m_target, {});
        QVERIFY(SettingsViewModel(file).draftModel(m_target).isEmpty());
    }

    void loadHandsTheDraftToTheEngine()
    {
        auto backend = std::make_unique<RecordingBackend>();
        RecordingBackend *engine = backend.get();
        WorkerInferenceService service(std::move(backend));
        ModelManager models(&service, planner());
        scan(models);
        models.setCurrentIndex(models.indexOfPath(m_target));
        models.setDraftTokens(2);
        QVERIFY(models.setDraftModelPath(m_draft));
        models.load();
        QTRY_VERIFY_WITH_TIMEOUT(!models.loading(), 120000);
        QVERIFY2(models.loadError().isEmpty(), qPrintable(models.loadError()));
        QCOMPARE(models.loadedModelName(), QStringLiteral("ref-s-4.0bpw"));
        QCOMPARE(engine->recorded().size(), 1);
        QCOMPARE(engine->recorded().last().draftModelPath, m_draft);
        QCOMPARE(engine->recorded().last().draftTokens, 2);
        QVERIFY(engine->hasDraftModel());

        // None: the next load has no draft model (drafting, if on, is n-gram lookup).
        QVERIFY(models.setDraftModelPath({}));
        models.load();
        QTRY_VERIFY_WITH_TIMEOUT(!models.loading(), 120000);
        QVERIFY2(models.loadError().isEmpty(), qPrintable(models.loadError()));
        QCOMPARE(engine->recorded().size(), 2);
        QVERIFY(engine->recorded().last().draftModelPath.isEmpty());
        QVERIFY(!engine->hasDraftModel());
    }
};

QTEST_GUILESS_MAIN(DraftPickerTest)
#include "ui_draftpicker_test.moc"
