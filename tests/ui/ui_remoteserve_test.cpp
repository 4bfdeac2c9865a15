// The remote service against the project's own server: `exl serve` on the fixture model
// ref-xs-4.0bpw on the CPU, on a free loopback port with an API key. Lists the model, streams
// a reply equal to the server's non-streamed reply for the same seed, cancels mid-stream (the
// server reports the disconnect), and shows the 401 message for a wrong key. Fixtures:
// $EXL_FIXTURES, default <source>/../shared/fixtures; missing fixtures skip the test unless
// EXL_REQUIRE_FIXTURES=1. The exl binary: $EXL_BINARY, default the one built with this test.
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "services/remoteinferenceservice.h"
#include "viewmodels/chatviewmodel.h"

namespace {
constexpr int kWaitMs = 30000;
const QString kKey = QStringLiteral("test-key-123");
const QString kModelId = QStringLiteral("ref-xs");

QString fixturesDir()
{
    const QString env = qEnvironmentVariable("EXL_FIXTURES");
    return env.isEmpty() ? QStringLiteral(EXL_DEFAULT_FIXTURES) : env;
}

QString exlBinary()
{
    const QString env = qEnvironmentVariable("EXL_BINARY");
    return env.isEmpty() ? QStringLiteral(EXL_BINARY) : env;
}

QList<ChatTurn> question()
{
    return {{QStringLiteral("system"), QStringLiteral("You are a helpful assistant.")},
            {QStringLiteral("user"), QStringLiteral("Once upon a time there was a little")}};
}

SamplingSettings seeded(int maxNewTokens)
{
    SamplingSettings s;
    s.temperature = 0.8;
    s.topK = 40;
    s.topP = 0.9;
    s.minP = 0.05;
    s.repetitionPenalty = 1.0;
    s.seed = 1234;
    s.maxNewTokens = maxNewTokens;
    return s;
}

struct Streamed {
    QString text;
    GenerationStats stats;
    QString error;
};
}  // namespace

class RemoteServeTest : public QObject
{
    Q_OBJECT

    QProcess m_server;
    QByteArray m_serverLog;  // stderr of exl serve
    QUrl m_baseUrl;
    QTemporaryDir m_dir;

    RemoteEndpoint endpoint(const QString &key = kKey) const
    {
        return {QStringLiteral("exl serve"), m_baseUrl, key};
    }

    std::unique_ptr<RemoteInferenceService> loadedService()
    {
        auto service = std::make_unique<RemoteInferenceService>(QList<RemoteEndpoint>{endpoint()});
        QSignalSpy loaded(service.get(), &InferenceService::loadFinished);
        service->loadModel(RemoteInferenceService::modelPath(endpoint(), kModelId), {});
        if (!loaded.wait(kWaitMs) || !loaded.constFirst().constFirst().value<LoadResult>().ok)
            return nullptr;
        return service;
    }

    // Streams one reply through the service; `cancelAfterFirstBatch` stops it at its first text.
    Streamed stream(InferenceService &service, const SamplingSettings &settings, bool cancelAfterFirstBatch = false)
    {
        Streamed out;
        QSignalSpy finished(&service, &InferenceService::generationFinished);
        QSignalSpy errors(&service, &InferenceService::error);
        const quint64 id = service.generate(question(), settings);
        QMetaObject::Connection c = connect(&service, &InferenceService::tokensArrived, this,
                                            [&](const TokenBatch &batch) {
                                                if (batch.requestId != id)
                                                    return;
                                                out.text += batch.text;
                                                if (cancelAfterFirstBatch)
                                                    service.cancel(id);
                                            });
        const bool ended = QTest::qWaitFor([&] { return !finished.isEmpty() || !errors.isEmpty(); }, kWaitMs);
        disconnect(c);
        if (!ended)
            out.error = QStringLiteral("(no end of the reply)");
        else if (!errors.isEmpty())
            out.error = errors.constFirst().at(1).toString();
        else
            out.stats = finished.constFirst().constFirst().value<GenerationStats>();
        return out;
    }

    // The server's own answer to the same request, without streaming.
    QString nonStreamed(const SamplingSettings &s)
    {
        QJsonArray messages;
        for (const ChatTurn &turn : question())
            messages.append(QJsonObject{{QStringLiteral("role"), turn.role}, {QStringLiteral("content"), turn.text}});
        const QJsonObject body{{QStringLiteral("model"), kModelId},       {QStringLiteral("messages"), messages},
                               {QStringLiteral("max_tokens"), s.maxNewTokens}, {QStringLiteral("temperature"), s.temperature},
                               {QStringLiteral("top_p"), s.topP},            {QStringLiteral("top_k"), s.topK},
                               {QStringLiteral("min_p"), s.minP},            {QStringLiteral("seed"), s.seed}};
        QNetworkAccessManager network;
        QNetworkRequest request(QUrl(m_baseUrl.toString() + QStringLiteral("/chat/completions")));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        request.setRawHeader("Authorization", "Bearer " + kKey.toUtf8());
        std::unique_ptr<QNetworkReply> reply(network.post(request, QJsonDocument(body).toJson()));
        QSignalSpy done(reply.get(), &QNetworkReply::finished);
        if (!done.wait(kWaitMs) || reply->error() != QNetworkReply::NoError)
            return QStringLiteral("(request failed: %1)").arg(reply->errorString());
        const QJsonObject answer = QJsonDocument::fromJson(reply->readAll()).object();
        return answer.value(QLatin1String("choices")).toArray().at(0).toObject().value(QLatin1String("message"))
            .toObject().value(QLatin1String("content")).toString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString model = QDir(fixturesDir()).filePath(QStringLiteral("models/exl2/ref-xs-4.0bpw"));
        if (!QFileInfo::exists(model)) {
            if (qEnvironmentVariable("EXL_REQUIRE_FIXTURES") == QLatin1String("1"))
                QFAIL(qPrintable(QStringLiteral("fixture model missing: %1 (EXL_REQUIRE_FIXTURES=1)").arg(model)));
            QSKIP(qPrintable(QStringLiteral("fixture model missing: %1 (set EXL_FIXTURES)").arg(model)));
        }
        QVERIFY(m_dir.isValid());
        QVERIFY2(QFileInfo(exlBinary()).isExecutable(),
                 qPrintable(QStringLiteral("no exl binary at %1 (build the exl target)").arg(exlBinary())));
        connect(&m_server, &QProcess::readyReadStandardError, this,
                [this] { m_serverLog += m_server.readAllStandardError(); });
        m_server.start(exlBinary(), {QStringLiteral("serve"), QStringLiteral("-m"), model, QStringLiteral("--device"),
                                     QStringLiteral("cpu"), QStringLiteral("--port"), QStringLiteral("0"),
                                     QStringLiteral("--api-key"), kKey, QStringLiteral("--model-id"), kModelId});
        QVERIFY2(m_server.waitForStarted(kWaitMs), qPrintable(m_server.errorString()));
        // "exl serve: model 'ref-xs' at http://127.0.0.1:PORT/v1 (...)"
        static const QRegularExpression address(QStringLiteral("at (http://\\S+/v1)"));
        QByteArray out;
        // Either way the match below decides (and says what the server printed).
        (void)QTest::qWaitFor(
            [&] {
                out += m_server.readAllStandardOutput();
                return address.match(QString::fromUtf8(out)).hasMatch() || m_server.state() == QProcess::NotRunning;
            },
            kWaitMs);
        const QRegularExpressionMatch match = address.match(QString::fromUtf8(out));
        QVERIFY2(match.hasMatch(), m_serverLog.constData());
        m_baseUrl = QUrl(match.captured(1));
    }

    void cleanupTestCase()
    {
        if (m_server.state() != QProcess::NotRunning) {
            m_server.terminate();
            if (!m_server.waitForFinished(10000))
                m_server.kill();
        }
    }

    void listsTheServedModel()
    {
        RemoteInferenceService service({endpoint()});
        QSignalSpy listed(&service, &InferenceService::availableModelsChanged);
        QVERIFY(listed.wait(kWaitMs));
        QVERIFY2(service.listError().isEmpty(), qPrintable(service.listError()));
        const QList<ModelInfo> models = service.availableModels();
        QCOMPARE(models.size(), 1);
        QCOMPARE(models[0].name, kModelId);
        QVERIFY(models[0].remote);
        QCOMPARE(models[0].endpointName, QStringLiteral("exl serve"));
        QCOMPARE(models[0].path, RemoteInferenceService::modelPath(endpoint(), kModelId));
        QVERIFY(!models[0].note.isEmpty());  // plain HTTP on loopback is allowed, with a note
    }

    void streamedReplyEqualsNonStreamed()
    {
        auto service = loadedService();
        QVERIFY(service);
        QSignalSpy telemetry(service.get(), &InferenceService::telemetry);
        const SamplingSettings settings = seeded(40);
        const Streamed streamed = stream(*service, settings);
        QVERIFY2(streamed.error.isEmpty(), qPrintable(streamed.error));
        QVERIFY(!streamed.text.isEmpty());
        QVERIFY(!streamed.stats.cancelled);
        QVERIFY(streamed.stats.generatedTokens > 0 && streamed.stats.generatedTokens <= 40);
        QVERIFY(streamed.stats.timeToFirstTokenMs > 0);
        QCOMPARE(streamed.text, nonStreamed(settings));
        // Telemetry says where it comes from: no VRAM figures, no bound line.
        QVERIFY(!telemetry.isEmpty());
        const TelemetrySample last = telemetry.constLast().constFirst().value<TelemetrySample>();
        QVERIFY(last.remote);
        QCOMPARE(last.vramTotalBytes, 0);
        QCOMPARE(last.boundTokensPerSecond, 0.0);
    }

    void cancelMidStreamReachesTheServer()
    {
        auto service = loadedService();
        QVERIFY(service);
        const qsizetype logBefore = m_serverLog.size();
        // Long enough that it is still running when the first text arrives (the context bounds it).
        const Streamed streamed = stream(*service, seeded(100000), true);
        QVERIFY2(streamed.error.isEmpty(), qPrintable(streamed.error));
        QVERIFY(streamed.stats.cancelled);
        QVERIFY(!streamed.text.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(m_serverLog.mid(logBefore).contains("client disconnected"), kWaitMs);
        // The server goes on serving.
        const Streamed next = stream(*service, seeded(8));
        QVERIFY2(next.error.isEmpty(), qPrintable(next.error));
        QVERIFY(!next.text.isEmpty());
    }

    void wrongApiKeyShowsTheMessage()
    {
        auto service = loadedService();
        QVERIFY(service);
        service->setEndpoints({endpoint(QStringLiteral("not-the-key"))});
        ChatStore store;
        QVERIFY(store.open(m_dir.filePath(QStringLiteral("chats.sqlite"))));
        ChatViewModel chat(service.get(), &store);
        QSignalSpy errors(&chat, &ChatViewModel::lastErrorChanged);
        QVERIFY(chat.send(QStringLiteral("Hello?")));
        QVERIFY(errors.wait(kWaitMs));
        QVERIFY2(chat.lastError().contains(QStringLiteral("refused the API key (HTTP 401)")), qPrintable(chat.lastError()));
        QVERIFY(chat.lastError().contains(QStringLiteral("invalid API key")));  // the server's own words
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 1);
        // The model list is fetched on its own request, which may answer after the chat's.
        QTRY_VERIFY_WITH_TIMEOUT(service->listError().contains(QStringLiteral("401")), kWaitMs);
    }
};

QTEST_GUILESS_MAIN(RemoteServeTest)
#include "ui_remoteserve_test.moc"
