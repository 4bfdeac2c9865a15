// The worker-thread inference service with the scripted backend: streaming, batching into
// few updates, cancellation that stops promptly and keeps the stream consistent, load errors.
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include "services/fakeinferenceservice.h"

namespace {
const QString kModel = QStringLiteral("/models/fake/Qwen2.5-1.5B-Instruct-exl2-8.0bpw");

QString joined(const QSignalSpy &spy, quint64 requestId, int *tokens = nullptr)
{
    QString text;
    for (const QList<QVariant> &args : spy) {
        const auto batch = args.at(0).value<TokenBatch>();
        if (batch.requestId == requestId) {
            text += batch.text;
            if (tokens)
                *tokens += batch.tokenCount;
        }
    }
    return text;
}

bool loadModel(InferenceService &service)
{
    QSignalSpy loaded(&service, &InferenceService::loadFinished);
    service.loadModel(kModel, {});
    return loaded.wait(10000) && loaded.first().at(0).value<LoadResult>().ok;
}
}  // namespace

class InferenceServiceTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void streamsWholeReplyOnTheGuiThread()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 2, 0, 3});
        QVERIFY(loadModel(service));
        QSignalSpy batches(&service, &InferenceService::tokensArrived);
        QSignalSpy finished(&service, &InferenceService::generationFinished);
        QThread *guiThread = QThread::currentThread();
        bool allOnGuiThread = true;
        connect(&service, &InferenceService::tokensArrived, this,
                [&] { allOnGuiThread = allOnGuiThread && QThread::currentThread() == guiThread; });

        const quint64 id = service.generate({{QStringLiteral("user"), QStringLiteral("Hello")}}, {});
        QVERIFY(finished.wait(10000));
        const auto stats = finished.first().at(0).value<GenerationStats>();
        QCOMPARE(stats.requestId, id);
        QVERIFY(!stats.cancelled);
        QVERIFY(stats.promptTokens > 0);
        // Energy per token from the (fake, 300 W) board's energy counter over the reply.
        QVERIFY(stats.joulesPerToken > 0);
        int tokens = 0;
        const QString text = joined(batches, id, &tokens);
        QCOMPARE(tokens, stats.generatedTokens);
        QVERIFY(text.contains(QStringLiteral("```python")));
        QCOMPARE(text.count(QStringLiteral("Decode speed is bound")), 3);
        QVERIFY(allOnGuiThread);
        // Hundreds of tokens generated without delay arrive in far fewer updates.
        QVERIFY2(batches.size() < stats.generatedTokens, "every token became its own update");
    }

    void cancelStopsAtATokenBoundary()
    {
        // 400 tokens/s over a long reply: seconds of work, cancelled after the first batch.
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{900, 400, 2, 0, 40});
        QVERIFY(loadModel(service));
        QSignalSpy batches(&service, &InferenceService::tokensArrived);
        QSignalSpy finished(&service, &InferenceService::generationFinished);
        const quint64 id = service.generate({{QStringLiteral("user"), QStringLiteral("Tell me more")}}, {});
        QVERIFY(batches.wait(10000));
        service.cancel(id);
        QVERIFY(finished.wait(10000));
        const auto stats = finished.first().at(0).value<GenerationStats>();
        QVERIFY(stats.cancelled);
        int tokens = 0;
        const QString text = joined(batches, id, &tokens);
        QCOMPARE(tokens, stats.generatedTokens);
        QVERIFY(stats.generatedTokens < 40 * 60);  // far from the full reply
        // What arrived is a prefix of the scripted reply, ending on a whole token.
        const QString opening = QStringLiteral("Here is a short answer, streamed by the simulated engine.");
        QVERIFY2(!text.isEmpty() && (opening.startsWith(text) || text.startsWith(opening)), qPrintable(text.left(80)));
        QVERIFY(!text.endsWith(' '));

        // Nothing of the cancelled request arrives after it finished.
        const qsizetype batchesAtFinish = batches.size();
        QSignalSpy next(&service, &InferenceService::generationFinished);
        const quint64 second = service.generate({{QStringLiteral("user"), QStringLiteral("Again")}},
                                                SamplingSettings{0.7, 40, 0.9, 0.05, 1.05, -1, 3});
        QVERIFY(next.wait(10000));
        for (qsizetype i = batchesAtFinish; i < batches.size(); ++i)
            QCOMPARE(batches.at(i).at(0).value<TokenBatch>().requestId, second);
        QCOMPARE(next.first().at(0).value<GenerationStats>().generatedTokens, 3);  // maxNewTokens
    }

    void generatingWithoutModelReportsError()
    {
        FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 2, 0, 1});
        QSignalSpy errors(&service, &InferenceService::error);
        const quint64 id = service.generate({{QStringLiteral("user"), QStringLiteral("Hi")}}, {});
        QVERIFY(errors.wait(10000));
        QCOMPARE(errors.first().at(0).value<quint64>(), id);
        QVERIFY(!errors.first().at(1).toString().isEmpty());
    }

    void outOfMemoryLoadFailsCleanly()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 4, 0, 1});
        QSignalSpy loaded(&service, &InferenceService::loadFinished);
        QSignalSpy modelLoaded(&service, &InferenceService::modelLoaded);
        service.loadModel(FakeGenerationBackend::tooLargeModelPath(), {});
        QVERIFY(loaded.wait(10000));
        const auto result = loaded.first().at(0).value<LoadResult>();
        QVERIFY(!result.ok);
        QVERIFY(result.errorMessage.contains(QStringLiteral("Out of memory")));
        QCOMPARE(modelLoaded.size(), 0);
        // The service stays usable: a smaller model loads afterwards.
        QVERIFY(loadModel(service));
    }

    void telemetryReportsMemoryAndBound()
    {
        FakeInferenceService service(QStringLiteral("cuda:0"), FakeTiming{0, 0, 2, 0, 1});
        QSignalSpy telemetry(&service, &InferenceService::telemetry);
        QVERIFY(loadModel(service));
        QTRY_VERIFY(!telemetry.isEmpty());
        const auto sample = telemetry.last().at(0).value<TelemetrySample>();
        QVERIFY(sample.vramTotalBytes > 0);
        QVERIFY(sample.vramUsedBytes > 0);
        QVERIFY(sample.vramUsedBytes < sample.vramTotalBytes);
        QVERIFY(sample.vramWeightsBytes > 0);  // the fake backend reports the parts
        QVERIFY(sample.vramWeightsBytes + sample.vramCacheBytes <= sample.vramUsedBytes);
        QCOMPARE(sample.powerWatts, 300.0);  // the fake board
        QVERIFY(sample.boundTokensPerSecond > 0);
    }
};

QTEST_GUILESS_MAIN(InferenceServiceTest)
#include "ui_inferenceservice_test.moc"
