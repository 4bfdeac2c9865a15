// ConvertJob (the convert dialog's worker): settings checks, the progress mapping, a real --fast
// conversion of the fixture model ref-xs on the CPU (progress, result, the model loads as EXL2),
// cancel (nothing finished left behind) and a bad input (a clear error). Fixtures: $EXL_FIXTURES,
// default <source>/../shared/fixtures; missing fixtures skip the conversions unless
// EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/convertjob.h"
#include "exl/model.h"

namespace {
constexpr int kWaitMs = 300000;

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}

// The fixture's HF folder, or an empty string after QSKIP/QFAIL.
QString fixtureModel(const QString &name)
{
    const QString dir = fixturesDir() + QStringLiteral("/models/hf/") + name;
    if (QFile::exists(dir + QStringLiteral("/config.json")))
        return dir;
    return {};
}
}  // namespace

#define REQUIRE_FIXTURE(var, name)                                                                               \
    const QString var = fixtureModel(QStringLiteral(name));                                                      \
    if (var.isEmpty()) {                                                                                         \
        if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))                                  \
            QFAIL("fixture model " name " missing (EXL_REQUIRE_FIXTURES=1)");                                     \
        QSKIP("fixture model " name " missing (set EXL_FIXTURES)");                                              \
    }

class ConvertJobTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void settingsAreChecked()
    {
        QTemporaryDir tmp;
        ConvertJob job;
        QVERIFY(job.settingsError().contains(QStringLiteral("Choose the model")));
        QVERIFY(!job.start());
        QVERIFY(!job.running());
        QVERIFY(!job.error().isEmpty());

        job.setInput(tmp.filePath(QStringLiteral("nowhere")));
        QVERIFY2(job.settingsError().contains(QStringLiteral("does not exist")), qPrintable(job.settingsError()));
        QFile text(tmp.filePath(QStringLiteral("notes.txt")));
        QVERIFY(text.open(QIODevice::WriteOnly));
        text.write("x");
        text.close();
        job.setInput(text.fileName());
        QVERIFY(job.settingsError().contains(QStringLiteral("neither a model folder nor a .gguf file")));

        QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("model")));
        // A file:// URL, as the folder dialogs give, becomes a path.
        job.setInput(QUrl::fromLocalFile(tmp.filePath(QStringLiteral("model"))).toString());
        QCOMPARE(job.input(), tmp.filePath(QStringLiteral("model")));
        QVERIFY(job.settingsError().contains(QStringLiteral("output folder")));
        job.setOutput(tmp.path());  // holds notes.txt and model/
        QVERIFY(job.settingsError().contains(QStringLiteral("is not empty")));
        job.setOutput(tmp.filePath(QStringLiteral("model")));
        QVERIFY(job.settingsError().contains(QStringLiteral("must differ")));
        job.setOutput(tmp.filePath(QStringLiteral("out")));
        QCOMPARE(job.settingsError(), QString());

        // Clamped and validated settings.
        job.setBits(11.0);
        QCOMPARE(job.bits(), 8.0);
        job.setBits(3.456);
        QCOMPARE(job.bits(), 3.46);
        job.setHeadBits(7);
        QCOMPARE(job.headBits(), 6);
        job.setHeadBits(8);
        QCOMPARE(job.headBits(), 8);
        job.setDevice(QStringLiteral("tpu"));
        QCOMPARE(job.device(), QStringLiteral("auto"));
        job.setDevice(QStringLiteral("cpu"));
        QCOMPARE(job.device(), QStringLiteral("cpu"));
    }

    void progressMapping()
    {
        for (const bool fast : {false, true}) {
            double last = -1.0;
            for (const char *stage : {"device", "calibration", "measure", "optimize", "quantize", "write"}) {
                if (fast && QLatin1String(stage) == QLatin1String("measure"))
                    continue;
                for (int step = 0; step <= 4; ++step) {
                    const double p = ConvertJob::overallProgress(QString::fromLatin1(stage), step, 4, fast);
                    QVERIFY2(p >= last && p >= 0.0 && p <= 1.0, qPrintable(QStringLiteral("%1 %2: %3").arg(stage).arg(step).arg(p)));
                    last = p;
                }
            }
            QVERIFY(last > 0.99);
            QCOMPARE(ConvertJob::overallProgress(QStringLiteral("done"), 1, 1, fast), 1.0);
        }
        // Measured: the measurement is most of the time; fast: the quantization.
        QVERIFY(ConvertJob::overallProgress(QStringLiteral("optimize"), 0, 1, false) > 0.5);
        QVERIFY(ConvertJob::overallProgress(QStringLiteral("quantize"), 1, 2, true) > 0.4);
        QCOMPARE(ConvertJob::stageName(QStringLiteral("quantize")), QStringLiteral("Quantizing"));
    }

    void convertsTheFixtureModel()
    {
        REQUIRE_FIXTURE(input, "ref-xs");
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("ref-xs-3.5bpw"));
        ConvertJob job;
        job.setInput(input);
        job.setOutput(out);
        job.setBits(3.5);
        job.setFast(true);
        job.setDevice(QStringLiteral("cpu"));
        QSignalSpy finished(&job, &ConvertJob::finished);
        QList<double> seen;
        QStringList stages;
        connect(&job, &ConvertJob::progressChanged, this, [&] {
            seen.append(job.progress());
            if (stages.isEmpty() || stages.last() != job.stage())
                stages.append(job.stage());
        });
        QVERIFY(job.start());
        QVERIFY(job.running());
        QVERIFY(!job.start());  // one at a time
        QVERIFY(job.error().contains(QStringLiteral("already running")));
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][0].toBool(), true);
        QCOMPARE(finished[0][1].toString(), out);
        QVERIFY2(job.succeeded(), qPrintable(job.error()));
        QVERIFY(!job.running());
        QCOMPARE(job.progress(), 1.0);
        QVERIFY2(job.resultText().startsWith(QStringLiteral("Decoder 3.")), qPrintable(job.resultText()));
        QVERIFY(seen.size() >= 5);
        for (int i = 1; i < seen.size(); ++i)
            QVERIFY(seen[i] >= seen[i - 1]);
        QVERIFY2(stages.contains(QStringLiteral("Quantizing")), qPrintable(stages.join(QStringLiteral(", "))));
        // The result is an EXL2 model at the requested size.
        const std::shared_ptr<const exl::Model> m = exl::Model::open(out.toStdString());
        const exl::ModelSummary summary = m->summary();
        QVERIFY(summary.quantized);
        const double bpw = summary.average_bpw;
        QVERIFY2(bpw > 3.4 && bpw <= 3.5, qPrintable(QString::number(bpw)));
    }

    void cancelLeavesNothingFinished()
    {
        REQUIRE_FIXTURE(input, "ref-xs");
        QTemporaryDir tmp;
        const QString out = tmp.filePath(QStringLiteral("cancelled"));
        ConvertJob job;
        job.setInput(input);
        job.setOutput(out);
        job.setDevice(QStringLiteral("cpu"));  // measured: long enough to cancel in the quantization pass
        QSignalSpy finished(&job, &ConvertJob::finished);
        connect(&job, &ConvertJob::progressChanged, &job, [&] {
            if (job.progress() > 0.65)  // in the quantization pass: the measurement is kept
                job.cancel();
        });
        QVERIFY(job.start());
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished[0][0].toBool(), false);
        QVERIFY(!job.succeeded());
        QVERIFY2(job.error().startsWith(QStringLiteral("Cancelled")), qPrintable(job.error()));
        QVERIFY(!QFile::exists(out + QStringLiteral("/config.json")));
        QVERIFY(job.outputFolder().isEmpty());
        // The finished part is kept: the same job continues it and ends with the model.
        QVERIFY(job.resumable());
        QCOMPARE(job.settingsError(), QString());
        disconnect(&job, &ConvertJob::progressChanged, &job, nullptr);
        QVERIFY(job.start());
        QVERIFY(finished.wait(kWaitMs));
        QVERIFY2(job.succeeded(), qPrintable(job.error()));
        QVERIFY(QFile::exists(out + QStringLiteral("/config.json")));
        QVERIFY(!job.resumable());
    }

    void badInputIsAClearError()
    {
        QTemporaryDir tmp;
        const QString in = tmp.filePath(QStringLiteral("broken"));
        QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("broken")));
        QFile cfg(in + QStringLiteral("/config.json"));
        QVERIFY(cfg.open(QIODevice::WriteOnly));
        cfg.write(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64})");
        cfg.close();
        ConvertJob job;
        job.setInput(in);
        job.setOutput(tmp.filePath(QStringLiteral("out")));
        job.setFast(true);
        job.setDevice(QStringLiteral("cpu"));
        QSignalSpy finished(&job, &ConvertJob::finished);
        QVERIFY(job.start());
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished[0][0].toBool(), false);
        QVERIFY(!job.error().isEmpty());
        QVERIFY2(job.error().contains(QStringLiteral("config.json")) || job.error().contains(QStringLiteral("safetensors")),
                 qPrintable(job.error()));
        QVERIFY(!QFile::exists(tmp.filePath(QStringLiteral("out/config.json"))));
        // Nothing to resume from: no state is left behind, the folder can be used again.
        QVERIFY(!QFileInfo::exists(tmp.filePath(QStringLiteral("out/.exl-resume"))));
        QVERIFY(!job.resumable());
    }

    void destroyingARunningJobStopsIt()
    {
        REQUIRE_FIXTURE(input, "ref-xs");
        QTemporaryDir tmp;
        auto job = std::make_unique<ConvertJob>();
        job->setInput(input);
        job->setOutput(tmp.filePath(QStringLiteral("gone")));
        job->setDevice(QStringLiteral("cpu"));
        QVERIFY(job->start());
        QTest::qWait(200);
        job.reset();  // cancels and joins; must neither hang nor crash
        QVERIFY(!QFile::exists(tmp.filePath(QStringLiteral("gone/config.json"))));
    }
};

QTEST_GUILESS_MAIN(ConvertJobTest)
#include "ui_convertjob_test.moc"
