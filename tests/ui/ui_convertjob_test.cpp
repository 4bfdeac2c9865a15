// ConvertJob (the convert dialog's worker): settings checks, the format (EXL3 by default, or EXL2)
// and the ranges, choices and defaults that follow it, the options handed to the converter, the
// progress mapping, a real --fast EXL2 conversion of the fixture model ref-xs on the CPU
// (progress, result, the model loads as EXL2), cancel (nothing finished left behind) and a bad
// input (a clear error, in either format). Fixtures: $EXL_FIXTURES,
// default <source>/../shared/fixtures; missing fixtures skip the conversions unless
// EXL_REQUIRE_FIXTURES=1.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/convertjob.h"
#include "exl/convert.h"
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

        // Clamped and validated settings (EXL3, the default: 1.0 .. 8.0 bpw, head 1 .. 8 or 16).
        QCOMPARE(job.format(), QStringLiteral("exl3"));
        job.setBits(11.0);
        QCOMPARE(job.bits(), 8.0);
        job.setBits(0.5);
        QCOMPARE(job.bits(), 1.0);
        job.setBits(3.456);
        QCOMPARE(job.bits(), 3.46);
        job.setHeadBits(9);
        QCOMPARE(job.headBits(), 6);
        job.setHeadBits(7);
        QCOMPARE(job.headBits(), 7);
        job.setHeadBits(16);
        QCOMPARE(job.headBits(), 16);
        // EXL2: 2.0 .. 8.5 bpw, head 2, 3, 4, 5, 6, 8.
        job.setFormat(QStringLiteral("exl2"));
        QCOMPARE(job.headBits(), 6);  // 16 is no EXL2 choice: the default again
        job.setBits(11.0);
        QCOMPARE(job.bits(), 8.5);
        job.setBits(1.0);
        QCOMPARE(job.bits(), 2.0);
        job.setHeadBits(7);
        QCOMPARE(job.headBits(), 6);
        job.setHeadBits(8);
        QCOMPARE(job.headBits(), 8);
        job.setFormat(QStringLiteral("gguf"));  // not a format: ignored
        QCOMPARE(job.format(), QStringLiteral("exl2"));
        job.setDevice(QStringLiteral("tpu"));
        QCOMPARE(job.device(), QStringLiteral("auto"));
        job.setDevice(QStringLiteral("cpu"));
        QCOMPARE(job.device(), QStringLiteral("cpu"));
        // EXL3 conversion runs on the CPU for now: an explicit GPU is refused before it starts.
        job.setFormat(QStringLiteral("exl3"));
        QCOMPARE(job.settingsError(), QString());
        job.setDevice(QStringLiteral("cuda"));
        QVERIFY2(job.settingsError().contains(QStringLiteral("CPU")), qPrintable(job.settingsError()));
        QVERIFY(!job.start());
        QVERIFY(!job.running());
        QCOMPARE(job.error(), job.settingsError());
        job.setFormat(QStringLiteral("exl2"));
        QCOMPARE(job.settingsError(), QString());
    }

    // The format switches the ranges, the head-bit choices and the calibration defaults, clamps
    // the bits and keeps the head bits where the new format has them.
    void formatSwitchesRangesAndDefaults()
    {
        ConvertJob job;
        QSignalSpy formatChanged(&job, &ConvertJob::formatChanged);
        QSignalSpy settingsChanged(&job, &ConvertJob::settingsChanged);
        QCOMPARE(job.format(), QStringLiteral("exl3"));
        QCOMPARE(job.minBits(), 1.0);
        QCOMPARE(job.maxBits(), 8.0);
        QCOMPARE(job.headBitsChoices(), (QVariantList{1, 2, 3, 4, 5, 6, 7, 8, 16}));
        QCOMPARE(job.calibrationRows(), 250);
        QCOMPARE(job.calibrationLength(), 2048);
        QVERIFY(!job.measurementOptions());
        QCOMPARE(job.bits(), 4.0);
        QCOMPARE(job.headBits(), 6);

        job.setFormat(QStringLiteral("exl3"));  // unchanged: no signal
        QCOMPARE(formatChanged.size(), 0);
        job.setBits(1.5);
        job.setHeadBits(5);
        job.setFormat(QStringLiteral("exl2"));
        QCOMPARE(formatChanged.size(), 1);
        QVERIFY(settingsChanged.size() >= 3);
        QCOMPARE(job.format(), QStringLiteral("exl2"));
        QCOMPARE(job.minBits(), 2.0);
        QCOMPARE(job.maxBits(), 8.5);
        QCOMPARE(job.headBitsChoices(), (QVariantList{2, 3, 4, 5, 6, 8}));
        QCOMPARE(job.calibrationRows(), 8);
        QCOMPARE(job.calibrationLength(), 512);
        QVERIFY(job.measurementOptions());
        QCOMPARE(job.bits(), 2.0);   // clamped into EXL2's range
        QCOMPARE(job.headBits(), 5);  // an EXL2 choice too: kept

        job.setBits(8.5);
        job.setFormat(QStringLiteral("exl3"));
        QCOMPARE(formatChanged.size(), 2);
        QCOMPARE(job.bits(), 8.0);
        QCOMPARE(job.headBits(), 5);
    }

    // What start() hands to exl::convert_model follows the format (checked without converting).
    void formatReachesTheOptions()
    {
        QTemporaryDir tmp;
        ConvertJob job;
        job.setInput(tmp.path());
        job.setOutput(tmp.filePath(QStringLiteral("out")));
        job.setBits(3.5);
        job.setHeadBits(16);
        job.setFast(true);  // an EXL2 option: not handed to the EXL3 converter
        job.setDevice(QStringLiteral("cpu"));
        exl::ConvertOptions o = job.convertOptions();
        QVERIFY(o.format == exl::ConvertFormat::exl3);
        QCOMPARE(o.bits, 3.5);
        QCOMPARE(o.head_bits, 16);
        QCOMPARE(o.rows, 250);
        QCOMPARE(o.length, 2048);
        QVERIFY(!o.fast);
        QVERIFY(!o.measurement_in && !o.measurement_out && !o.measure_only);
        QCOMPARE(o.device, std::string("cpu"));
        QCOMPARE(QString::fromStdString(o.input_dir.string()), tmp.path());
        QCOMPARE(QString::fromStdString(o.output_dir.string()), tmp.filePath(QStringLiteral("out")));
        QCOMPARE(o.codebook, std::string("mul1"));  // ExLlamaV3's defaults
        QCOMPARE(o.out_scales, std::string("always"));
        QVERIFY(!o.resume);

        job.setFormat(QStringLiteral("exl2"));
        o = job.convertOptions();
        QVERIFY(o.format == exl::ConvertFormat::exl2);
        QCOMPARE(o.bits, 3.5);
        QCOMPARE(o.head_bits, 6);
        QCOMPARE(o.rows, 8);
        QCOMPARE(o.length, 512);
        QVERIFY(o.fast);
        QCOMPARE(o.device, std::string("cpu"));

        job.setFormat(QStringLiteral("exl3"));
        job.setDevice(QStringLiteral("auto"));
        o = job.convertOptions();
        QVERIFY(o.format == exl::ConvertFormat::exl3);
        QCOMPARE(o.device, std::string("auto"));  // the converter takes the CPU for EXL3
        QVERIFY(!o.fast);
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
        job.setFormat(QStringLiteral("exl2"));
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
        job.setFormat(QStringLiteral("exl2"));
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

    void badInputIsAClearError_data()
    {
        QTest::addColumn<QString>("format");
        QTest::newRow("exl3") << QStringLiteral("exl3");
        QTest::newRow("exl2") << QStringLiteral("exl2");
    }
    void badInputIsAClearError()
    {
        QFETCH(QString, format);
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
        job.setFormat(format);
        QCOMPARE(job.format(), format);
        job.setFast(true);  // EXL3: not applied (the converter would refuse it)
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
        job->setFormat(QStringLiteral("exl2"));
        job->setDevice(QStringLiteral("cpu"));
        QVERIFY(job->start());
        QTest::qWait(200);
        job.reset();  // cancels and joins; must neither hang nor crash
        QVERIFY(!QFile::exists(tmp.filePath(QStringLiteral("gone/config.json"))));
    }
};

QTEST_GUILESS_MAIN(ConvertJobTest)
#include "ui_convertjob_test.moc"
