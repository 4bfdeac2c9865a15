// ChatViewModel with the fake service: streaming into the list model, stop, regenerate, edit,
// errors, and that what is shown is what is stored. Built twice: against the local service and
// against the remote one (ui_chatviewmodel_remote_test, see testservices.h).
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "testservices.h"
#include "chatchecks.h"
#include "viewmodels/chatviewmodel.h"

namespace {
const QString kModel = QStringLiteral("/models/fake/Qwen2.5-1.5B-Instruct-exl2-8.0bpw");
}

class ChatViewModelTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<ChatStore> m_store;

    std::unique_ptr<InferenceService> loadedService(FakeTiming timing)
    {
        auto service = makeTestService(QStringLiteral("cuda:0"), timing);
        if (!service)
            return nullptr;
        QSignalSpy loaded(service.get(), &InferenceService::loadFinished);
        service->loadModel(kModel, {});
        if (!loaded.wait(10000))
            return nullptr;
        return service;
    }


private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_store = std::make_unique<ChatStore>();
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("chats-%1.sqlite").arg(QTest::currentTestFunction()))));
    }

    void cleanup() { m_store.reset(); }

    void sendStreamsAndStores()
    {
        auto service = loadedService(FakeTiming{0, 0, 1, 0, 2});
        QVERIFY(service);
        ChatViewModel chat(service.get(), m_store.get());
        QSignalSpy stored(&chat, &ChatViewModel::conversationStored);
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QSignalSpy changed(&chat, &QAbstractItemModel::dataChanged);

        QVERIFY(!chat.send(QStringLiteral("   ")));
        QVERIFY(chat.send(QStringLiteral("What is EXL2?")));
        QVERIFY(chat.busy());
        QCOMPARE(stored.size(), 1);
        QCOMPARE(chat.rowCount(), 2);
        QVERIFY(chat.data(chat.index(1), ChatViewModel::StreamingRole).toBool());
        QVERIFY(!chat.send(QStringLiteral("A second message while busy")));

        QVERIFY(finished.wait(10000));
        QVERIFY(!chat.busy());
        QVERIFY(!changed.isEmpty());
        QVERIFY(chatText(chat, 1).startsWith(QStringLiteral("Here is a short answer")));
        QVERIFY(!chat.data(chat.index(1), ChatViewModel::StreamingRole).toBool());
        const QVariantMap stats = chat.data(chat.index(1), ChatViewModel::StatsRole).toMap();
        QVERIFY(stats.value(QStringLiteral("generatedTokens")).toInt() > 0);
        QVERIFY(chat.canRegenerate());
        verifyStoredMatchesShown(*m_store, chat);
        QCOMPARE(m_store->conversation(chat.conversationId()).title, QStringLiteral("What is EXL2?"));
    }

    void stopKeepsShownTextAndIgnoresLateTokens()
    {
        auto service = loadedService(FakeTiming{900, 300, 1, 0, 50});
        QVERIFY(service);
        ChatViewModel chat(service.get(), m_store.get());
        QSignalSpy tokens(service.get(), &InferenceService::tokensArrived);
        QSignalSpy serviceFinished(service.get(), &InferenceService::generationFinished);

        QVERIFY(chat.send(QStringLiteral("Write a long essay")));
        QVERIFY(tokens.wait(10000));
        QTRY_VERIFY(!chatText(chat, 1).isEmpty());
        chat.stop();
        // Stop is immediate: the reply ends with the text shown so far.
        QVERIFY(!chat.busy());
        const QString shownAtStop = chatText(chat, 1);
        QVERIFY(chat.data(chat.index(1), ChatViewModel::StoppedRole).toBool());
        verifyStoredMatchesShown(*m_store, chat);

        // The worker finishes the cancelled request later; its last batches must not land.
        QVERIFY(serviceFinished.wait(10000));
        QCoreApplication::processEvents();
        QCOMPARE(chatText(chat, 1), shownAtStop);
        verifyStoredMatchesShown(*m_store, chat);

        // The conversation continues normally.
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QVERIFY(chat.send(QStringLiteral("Shorter, please")));
        QCOMPARE(chat.rowCount(), 4);
        chat.stop();
        QCOMPARE(finished.size(), 1);
        verifyStoredMatchesShown(*m_store, chat);
    }

    void regenerateAddsASiblingReply()
    {
        auto service = loadedService(FakeTiming{0, 0, 1, 0, 1});
        QVERIFY(service);
        ChatViewModel chat(service.get(), m_store.get());
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QVERIFY(chat.send(QStringLiteral("Hi")));
        QVERIFY(finished.wait(10000));
        QVERIFY(chat.regenerate());
        QCOMPARE(chat.rowCount(), 2);
        QVERIFY(chat.busy());
        QVERIFY(chatText(chat, 1).isEmpty());
        QVERIFY(finished.wait(10000));
        QCOMPARE(chat.rowCount(), 2);
        QVERIFY(!chatText(chat, 1).isEmpty());
        QCOMPARE(chat.data(chat.index(1), ChatViewModel::SiblingCountRole).toInt(), 2);
        QCOMPARE(chat.data(chat.index(1), ChatViewModel::SiblingIndexRole).toInt(), 1);
        QCOMPARE(m_store->messages(chat.conversationId()).size(), 3);  // the earlier reply is kept
        verifyStoredMatchesShown(*m_store, chat);
    }

    void editBranchesFromUserMessage()
    {
        auto service = loadedService(FakeTiming{0, 0, 1, 0, 1});
        QVERIFY(service);
        ChatViewModel chat(service.get(), m_store.get());
        QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
        QVERIFY(chat.send(QStringLiteral("First question")));
        QVERIFY(finished.wait(10000));
        QVERIFY(chat.send(QStringLiteral("Second question")));
        QVERIFY(finished.wait(10000));
        QCOMPARE(chat.rowCount(), 4);

        QVERIFY(!chat.editMessage(1, QStringLiteral("Not a user message")));
        QVERIFY(chat.editMessage(0, QStringLiteral("First question, rephrased")));
        QCOMPARE(chat.rowCount(), 2);
        QCOMPARE(chatText(chat, 0), QStringLiteral("First question, rephrased"));
        QVERIFY(finished.wait(10000));
        verifyStoredMatchesShown(*m_store, chat);
        QCOMPARE(chat.data(chat.index(0), ChatViewModel::SiblingCountRole).toInt(), 2);
        QVERIFY(chat.selectSibling(0, -1));  // the first branch, whole
        QCOMPARE(chat.rowCount(), 4);
        QCOMPARE(chatText(chat, 2), QStringLiteral("Second question"));
        verifyStoredMatchesShown(*m_store, chat);
    }

    void errorWithoutModelRemovesEmptyReply()
    {
        auto service = makeTestService(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});  // nothing loaded
        QVERIFY(service);
        ChatViewModel chat(service.get(), m_store.get());
        QSignalSpy errors(&chat, &ChatViewModel::lastErrorChanged);
        QVERIFY(chat.send(QStringLiteral("Anyone there?")));
        QVERIFY(errors.wait(10000));
        QVERIFY(!chat.lastError().isEmpty());
        QVERIFY(!chat.busy());
        QCOMPARE(chat.rowCount(), 1);
        verifyStoredMatchesShown(*m_store, chat);
    }

    void reopensStoredConversation()
    {
        auto service = loadedService(FakeTiming{0, 0, 1, 0, 1});
        QVERIFY(service);
        qint64 id = 0;
        QString reply;
        {
            ChatViewModel chat(service.get(), m_store.get());
            chat.setSystemPrompt(QStringLiteral("Answer in one line."));
            QSignalSpy finished(&chat, &ChatViewModel::replyFinished);
            QVERIFY(chat.send(QStringLiteral("Remember me")));
            QVERIFY(finished.wait(10000));
            id = chat.conversationId();
            reply = chatText(chat, 1);
        }
        ChatViewModel again(service.get(), m_store.get());
        QCOMPARE(again.rowCount(), 0);
        again.openConversation(id);
        QCOMPARE(again.conversationId(), id);
        QCOMPARE(again.systemPrompt(), QStringLiteral("Answer in one line."));
        QCOMPARE(again.rowCount(), 2);
        QCOMPARE(chatText(again, 0), QStringLiteral("Remember me"));
        QCOMPARE(chatText(again, 1), reply);
        again.openConversation(0);
        QCOMPARE(again.rowCount(), 0);
        QCOMPARE(again.conversationId(), 0);
    }
};

QTEST_GUILESS_MAIN(ChatViewModelTest)
#include "ui_chatviewmodel_test.moc"
