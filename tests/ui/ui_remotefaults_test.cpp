// The remote service against a misbehaving loopback server: a connection dropped mid-stream,
// a malformed event, HTTP 429 and 500, a wrong API key, a server that stalls past the timeout,
// nothing listening. Each shows its message in the chat, keeps what is shown equal to what is
// stored, and the conversation goes on normally once the server behaves.
#include <QSignalSpy>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "fakeopenaiserver.h"
#include "services/combinedinferenceservice.h"
#include "services/fakeinferenceservice.h"
#include "services/remoteinferenceservice.h"
#include "chatchecks.h"
#include "viewmodels/chatviewmodel.h"

namespace {
constexpr int kTimeoutMs = 1500;  // the service's no-data timeout in these tests
}

class RemoteFaultsTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ChatStore> m_store;
    std::unique_ptr<FakeOpenAiServer> m_server;
    std::unique_ptr<RemoteInferenceService> m_service;

    QString modelPath() const
    {
        return RemoteInferenceService::modelPath(m_service->endpoints().constFirst(),
                                                 FakeGenerationBackend().availableModels().constFirst().path);
    }

    bool loadRemote()
    {
        QSignalSpy loaded(m_service.get(), &InferenceService::loadFinished);
        m_service->loadModel(modelPath(), {});
        return loaded.wait(10000) && loaded.constFirst().constFirst().value<LoadResult>().ok;
    }


    // Sends with the server misbehaving; returns the chat's error message.
    QString sendAndFail(ChatViewModel &chat)
    {
        QSignalSpy errors(&chat, &ChatViewModel::lastErrorChanged);
        if (!chat.send(QStringLiteral("Tell me about EXL2")))
            return QStringLiteral("(send refused)");
        if (!errors.wait(10000))
            return QStringLiteral("(no error shown)");
        return chat.lastError();
    }

    // After a failure the conversation goes on: the next reply is complete.
    void verifyRecovers(ChatViewModel &chat)
    {
        m_server->setFault(FakeOpenAiServer::Fault::None);
        const int rows = chat.rowCount();
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QVERIFY(chat.send(QStringLiteral("Again, please")));
        QVERIFY(finished.wait(10000));
        QVERIFY(chat.lastError().isEmpty());
        QCOMPARE(chat.rowCount(), rows + 2);
        QCOMPARE(chatText(chat, rows + 1), m_server->scriptedReply());
        verifyStoredMatchesShown(*m_store, chat);
    }

    // The first kChunksBeforeFault pieces of the scripted reply.
    QString partialReply() const
    {
        const QString reply = m_server->scriptedReply();
        static const QRegularExpression word(QStringLiteral("\\s*\\S+"));
        QString out;
        auto it = word.globalMatch(reply);
        for (int i = 0; i < FakeOpenAiServer::kChunksBeforeFault && it.hasNext(); ++i)
            out += it.next().captured();
        return out;
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_store = std::make_unique<ChatStore>();
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("chats-%1.sqlite").arg(QTest::currentTestFunction()))));
        m_server = std::make_unique<FakeOpenAiServer>(FakeTiming{0, 200, 1, 0, 1});
        QVERIFY(m_server->listen());
        m_service = std::make_unique<RemoteInferenceService>(
            QList<RemoteEndpoint>{{QStringLiteral("Lab server"), QUrl(m_server->baseUrl()), {}}},
            RemoteOptions{kTimeoutMs});
        QVERIFY(loadRemote());
    }

    void cleanup()
    {
        m_service.reset();
        m_server.reset();
        m_store.reset();
    }

    void dropMidStream()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server->setFault(FakeOpenAiServer::Fault::DropMidStream);
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("Lab server")) && message.contains(QStringLiteral("lost")),
                 qPrintable(message));
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 2);  // the text received so far stays, marked as stopped
        QCOMPARE(chatText(chat, 1), partialReply());
        QVERIFY(chat.data(chat.index(1), ChatViewModel::StoppedRole).toBool());
        verifyStoredMatchesShown(*m_store, chat);
        verifyRecovers(chat);
    }

    void malformedEvent()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server->setFault(FakeOpenAiServer::Fault::MalformedEvent);
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("malformed event")), qPrintable(message));
        QVERIFY(message.contains(QStringLiteral("oops")));  // shows what came
        QVERIFY(!chat.busy());
        QCOMPARE(chatText(chat, 1), partialReply());
        verifyStoredMatchesShown(*m_store, chat);
        verifyRecovers(chat);
    }

    void tooManyRequests()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server->setFault(FakeOpenAiServer::Fault::TooManyRequests);
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("HTTP 429")) && message.contains(QStringLiteral("queue is full")),
                 qPrintable(message));
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 1);  // nothing was generated: the conversation ends on the question
        verifyStoredMatchesShown(*m_store, chat);
        verifyRecovers(chat);
    }

    void serverError()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server->setFault(FakeOpenAiServer::Fault::ServerError);
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("HTTP 500")) && message.contains(QStringLiteral("out of memory")),
                 qPrintable(message));
        QCOMPARE(chat.rowCount(), 1);
        verifyStoredMatchesShown(*m_store, chat);
        verifyRecovers(chat);
    }

    void stallPastTimeout()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server->setFault(FakeOpenAiServer::Fault::Stall);
        QSignalSpy gone(m_server.get(), &FakeOpenAiServer::clientGoneMidStream);
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("sent nothing for")), qPrintable(message));
        QVERIFY(!chat.busy());
        QCOMPARE(chatText(chat, 1), partialReply());
        verifyStoredMatchesShown(*m_store, chat);
        QVERIFY(gone.count() == 1 || gone.wait(5000));  // the stalled request was closed
        verifyRecovers(chat);
    }

    void wrongApiKey()
    {
        m_server->setApiKey(QStringLiteral("right"));
        m_service->setEndpoints({{QStringLiteral("Lab server"), QUrl(m_server->baseUrl()), QStringLiteral("wrong")}});
        ChatViewModel chat(m_service.get(), m_store.get());
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("refused the API key")) && message.contains(QStringLiteral("401")),
                 qPrintable(message));
        QCOMPARE(chat.rowCount(), 1);
        verifyStoredMatchesShown(*m_store, chat);
        m_service->setEndpoints({{QStringLiteral("Lab server"), QUrl(m_server->baseUrl()), QStringLiteral("right")}});
        verifyRecovers(chat);
    }

    void connectionRefused()
    {
        ChatViewModel chat(m_service.get(), m_store.get());
        m_server.reset();  // the server goes away after the model was chosen
        const QString message = sendAndFail(chat);
        QVERIFY2(message.contains(QStringLiteral("connection was refused")), qPrintable(message));
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 1);
        verifyStoredMatchesShown(*m_store, chat);
    }

    // The app's service: local models and the endpoint's models side by side; the loaded one answers.
    void combinedServiceRoutesByModel()
    {
        CombinedInferenceService combined(
            std::make_unique<FakeInferenceService>(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1}),
            std::make_unique<RemoteInferenceService>(
                QList<RemoteEndpoint>{{QStringLiteral("Lab server"), QUrl(m_server->baseUrl()), {}}}));
        QSignalSpy listed(&combined, &InferenceService::availableModelsChanged);
        QVERIFY(listed.wait(10000));
        const QList<ModelInfo> models = combined.availableModels();
        const auto remoteCount = std::count_if(models.begin(), models.end(), [](const ModelInfo &m) { return m.remote; });
        QCOMPARE(remoteCount, qsizetype(FakeGenerationBackend().availableModels().size()));
        QCOMPARE(models.size(), 2 * remoteCount);
        QVERIFY(!models.constFirst().remote);  // local models first

        ChatViewModel chat(&combined, m_store.get());
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QSignalSpy unloaded(&combined, &InferenceService::modelUnloaded);
        for (const bool remote : {true, false, true}) {
            const auto model = std::find_if(models.begin(), models.end(), [&](const ModelInfo &m) { return m.remote == remote; });
            QSignalSpy loaded(&combined, &InferenceService::loadFinished);
            combined.loadModel(model->path, {});
            QVERIFY(loaded.wait(10000));
            QVERIFY(loaded.constFirst().constFirst().value<LoadResult>().ok);
            const int requestsBefore = m_server->chatRequests();
            QVERIFY(chat.send(QStringLiteral("Which side answers?")));
            QVERIFY(finished.wait(10000));
            QCOMPARE(chatText(chat, chat.rowCount() - 1), m_server->scriptedReply());
            QCOMPARE(m_server->chatRequests(), requestsBefore + (remote ? 1 : 0));
        }
        QCOMPARE(unloaded.size(), 3);  // each switch unloads the other side's model
        verifyStoredMatchesShown(*m_store, chat);
    }

    void listErrorIsReported()
    {
        m_server->setApiKey(QStringLiteral("right"));
        QSignalSpy changed(m_service.get(), &InferenceService::availableModelsChanged);
        m_service->setEndpoints({{QStringLiteral("Lab server"), QUrl(m_server->baseUrl()), {}}});
        QVERIFY(changed.wait(10000));
        QCOMPARE(changed.size(), 1);  // only the latest list is published
        QVERIFY(m_service->availableModels().isEmpty());
        QVERIFY2(m_service->listError().contains(QStringLiteral("401")),
                 qPrintable(QStringLiteral("list error: '%1'").arg(m_service->listError())));
    }
};

QTEST_GUILESS_MAIN(RemoteFaultsTest)
#include "ui_remotefaults_test.moc"
