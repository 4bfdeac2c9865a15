// Conversation branches, Retry, the stop reasons, export and titles: ChatViewModel against a
// scripted service that records the conversation each request was given and answers when told.
#include <algorithm>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "chatchecks.h"
#include "services/fakeinferenceservice.h"
#include "services/inferenceservice.h"
#include "viewmodels/chatviewmodel.h"

namespace {
// Requests are held until the test answers, fails or ends them.
class ScriptedService : public InferenceService
{
public:
    QList<QList<ChatTurn>> requests;
    QList<quint64> cancelled;

    QList<ModelInfo> availableModels() const override { return {}; }
    QString deviceName() const override { return QStringLiteral("cpu"); }
    void loadModel(const QString &, const LoadOptions &) override {}
    void unloadModel() override {}
    quint64 generate(const QList<ChatTurn> &conversation, const SamplingSettings &) override
    {
        requests.append(conversation);
        return ++m_next;
    }
    void cancel(quint64 requestId) override { cancelled.append(requestId); }

    quint64 last() const { return m_next; }
    void reply(const QString &text, GenerationStats stats = {})
    {
        Q_EMIT tokensArrived(TokenBatch{m_next, text, 1, 0, {}});
        stats.requestId = m_next;
        stats.generatedTokens = std::max(stats.generatedTokens, 1);
        Q_EMIT generationFinished(stats);
    }
    void fail(const QString &message) { Q_EMIT error(m_next, message); }

private:
    quint64 m_next = 0;
};

QStringList texts(const QList<ChatTurn> &turns)
{
    QStringList out;
    for (const ChatTurn &t : turns)
        out.append(t.role + QLatin1Char(':') + t.text);
    return out;
}

QStringList shown(const ChatViewModel &chat)
{
    QStringList out;
    for (int row = 0; row < chat.rowCount(); ++row)
        out.append(chat.data(chat.index(row), ChatViewModel::RoleRole).toString() + QLatin1Char(':') + chatText(chat, row));
    return out;
}

QString branchOf(const ChatViewModel &chat, int row)
{
    return QStringLiteral("%1/%2")
        .arg(chat.data(chat.index(row), ChatViewModel::SiblingIndexRole).toInt() + 1)
        .arg(chat.data(chat.index(row), ChatViewModel::SiblingCountRole).toInt());
}
}  // namespace

class ChatBranchesTest : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<ChatStore> m_store;

private Q_SLOTS:
    void init()
    {
        m_store = std::make_unique<ChatStore>();
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("%1.sqlite").arg(QTest::currentTestFunction()))));
    }
    void cleanup() { m_store.reset(); }

    void regenerateKeepsTheEarlierReply()
    {
        ScriptedService service;
        ChatViewModel chat(&service, m_store.get());
        QVERIFY(chat.send(QStringLiteral("Q")));
        service.reply(QStringLiteral("first"));
        QVERIFY(chat.regenerate());
        QCOMPARE(texts(service.requests.last()), QStringList{QStringLiteral("user:Q")});  // not the earlier reply
        service.reply(QStringLiteral("second"));
        QCOMPARE(shown(chat), (QStringList{QStringLiteral("user:Q"), QStringLiteral("assistant:second")}));
        QCOMPARE(branchOf(chat, 1), QStringLiteral("2/2"));
        QCOMPARE(branchOf(chat, 0), QStringLiteral("1/1"));

        QVERIFY(!chat.selectSibling(1, 1));  // no third
        QVERIFY(chat.selectSibling(1, -1));
        QCOMPARE(chatText(chat, 1), QStringLiteral("first"));
        QCOMPARE(branchOf(chat, 1), QStringLiteral("1/2"));
        verifyStoredMatchesShown(*m_store, chat);

        // The branch chosen is what reopening shows.
        ChatViewModel again(&service, m_store.get());
        again.openConversation(chat.conversationId());
        QCOMPARE(shown(again), shown(chat));
        QCOMPARE(branchOf(again, 1), QStringLiteral("1/2"));
    }

    void editKeepsTheEarlierBranchAndTheModelSeesTheBranchShown()
    {
        ScriptedService service;
        ChatViewModel chat(&service, m_store.get());
        QVERIFY(chat.send(QStringLiteral("Q1")));
        service.reply(QStringLiteral("A1"));
        QVERIFY(chat.send(QStringLiteral("Q2")));
        service.reply(QStringLiteral("A2"));

        QVERIFY(chat.editMessage(0, QStringLiteral("Q1 again")));
        QCOMPARE(texts(service.requests.last()), QStringList{QStringLiteral("user:Q1 again")});
        service.reply(QStringLiteral("B1"));
        QCOMPARE(shown(chat), (QStringList{QStringLiteral("user:Q1 again"), QStringLiteral("assistant:B1")}));
        QCOMPARE(branchOf(chat, 0), QStringLiteral("2/2"));

        QVERIFY(chat.selectSibling(0, -1));  // back to the first branch, to its end
        QCOMPARE(shown(chat), (QStringList{QStringLiteral("user:Q1"), QStringLiteral("assistant:A1"),
                                           QStringLiteral("user:Q2"), QStringLiteral("assistant:A2")}));
        QVERIFY(chat.send(QStringLiteral("Q3")));
        QCOMPARE(texts(service.requests.last()),
                 (QStringList{QStringLiteral("user:Q1"), QStringLiteral("assistant:A1"), QStringLiteral("user:Q2"),
                              QStringLiteral("assistant:A2"), QStringLiteral("user:Q3")}));
        QVERIFY(!chat.selectSibling(0, 1));  // not while a reply is written
        service.reply(QStringLiteral("A3"));
        verifyStoredMatchesShown(*m_store, chat);
        QVERIFY(chat.selectSibling(0, 1));
        QCOMPARE(shown(chat), (QStringList{QStringLiteral("user:Q1 again"), QStringLiteral("assistant:B1")}));
        QCOMPARE(m_store->messages(chat.conversationId()).size(), 8);  // nothing was lost
    }

    void retryAfterAnErrorAndAfterAStopBeforeAnyToken()
    {
        ScriptedService service;
        ChatViewModel chat(&service, m_store.get());
        QVERIFY(!chat.canRetry());
        QVERIFY(chat.send(QStringLiteral("Hello?")));
        service.fail(QStringLiteral("No model is loaded."));
        QCOMPARE(shown(chat), QStringList{QStringLiteral("user:Hello?")});
        QVERIFY(chat.canRetry());
        QVERIFY(!chat.canRegenerate());
        verifyStoredMatchesShown(*m_store, chat);

        QVERIFY(chat.retry());
        QVERIFY(chat.lastError().isEmpty());
        QCOMPARE(texts(service.requests.last()), QStringList{QStringLiteral("user:Hello?")});
        chat.stop();  // before any token
        QCOMPARE(service.cancelled, QList<quint64>{service.last()});
        QCOMPARE(chat.rowCount(), 1);
        QVERIFY(chat.canRetry());
        verifyStoredMatchesShown(*m_store, chat);

        QVERIFY(chat.retry());
        service.reply(QStringLiteral("Hi."));
        QCOMPARE(shown(chat), (QStringList{QStringLiteral("user:Hello?"), QStringLiteral("assistant:Hi.")}));
        QVERIFY(!chat.canRetry());
        QCOMPARE(branchOf(chat, 1), QStringLiteral("1/1"));  // the empty attempts left nothing
        verifyStoredMatchesShown(*m_store, chat);
    }

    void stopReasonsReachTheStats()
    {
        ScriptedService service;
        ChatViewModel chat(&service, m_store.get());
        QVERIFY(chat.send(QStringLiteral("Long answer please")));
        GenerationStats limit;
        limit.hitTokenLimit = true;
        service.reply(QStringLiteral("cut"), limit);
        QCOMPARE(chat.data(chat.index(1), ChatViewModel::StatsRole).toMap().value(QStringLiteral("stopReason")).toString(),
                 QStringLiteral("length"));
        QVERIFY(chat.regenerate());
        GenerationStats full;
        full.contextFull = true;
        full.hitTokenLimit = true;
        service.reply(QStringLiteral("full"), full);
        QCOMPARE(chat.data(chat.index(1), ChatViewModel::StatsRole).toMap().value(QStringLiteral("stopReason")).toString(),
                 QStringLiteral("context"));
        QVERIFY(chat.regenerate());
        service.reply(QStringLiteral("done"));
        QVERIFY(!chat.data(chat.index(1), ChatViewModel::StatsRole).toMap().contains(QStringLiteral("stopReason")));
        // Stored with the reply.
        QCOMPARE(m_store->messages(chat.conversationId()).at(1).stats.value(QStringLiteral("stopReason")).toString(),
                 QStringLiteral("length"));
    }

    // The real worker and the scripted engine stand-in: a reply cut at maxNewTokens says so.
    void workerReportsTheTokenLimit()
    {
        FakeInferenceService service(QStringLiteral("cpu"), FakeTiming{0, 0, 1, 0, 1});
        QSignalSpy loaded(&service, &InferenceService::loadFinished);
        service.loadModel(QStringLiteral("/models/fake/Qwen2.5-1.5B-Instruct-exl2-8.0bpw"), {});
        QVERIFY(loaded.wait(10000));
        QSignalSpy finished(&service, &InferenceService::generationFinished);
        SamplingSettings s;
        s.maxNewTokens = 3;
        service.generate({{QStringLiteral("user"), QStringLiteral("Hi")}}, s);
        QVERIFY(finished.wait(10000));
        GenerationStats stats = finished.first().at(0).value<GenerationStats>();
        QCOMPARE(stats.generatedTokens, 3);
        QVERIFY(stats.hitTokenLimit);
        s.maxNewTokens = 0;  // until the end (the script's end: no limit reached)
        service.generate({{QStringLiteral("user"), QStringLiteral("Hi")}}, s);
        QVERIFY(finished.wait(10000));
        stats = finished.last().at(0).value<GenerationStats>();
        QVERIFY(stats.generatedTokens > 3);
        QVERIFY(!stats.hitTokenLimit);
    }

    void exportsTheBranchShown()
    {
        ScriptedService service;
        ChatViewModel chat(&service, m_store.get());
        chat.setSystemPrompt(QStringLiteral("Be brief."));
        QVERIFY(chat.send(QStringLiteral("What is **EXL2**?")));
        service.reply(QStringLiteral("A format.\n\n```sh\nexl convert\n```"));
        QVERIFY(chat.regenerate());
        service.reply(QStringLiteral("Another answer"));
        QVERIFY(chat.selectSibling(1, -1));

        const QString md = chat.exportText(QStringLiteral("markdown"));
        QVERIFY(md.startsWith(QStringLiteral("# What is EXL2?\n")));
        QVERIFY(md.contains(QStringLiteral("Be brief.")));
        QVERIFY(md.contains(QStringLiteral("What is **EXL2**?")));
        QVERIFY(md.contains(QStringLiteral("```sh\nexl convert\n```")));
        QVERIFY(!md.contains(QStringLiteral("Another answer")));  // not the branch shown

        const QString path = m_dir.filePath(QStringLiteral("chat.json"));
        QVERIFY(chat.exportTo(QUrl::fromLocalFile(path), QStringLiteral("json")));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(root.value(QStringLiteral("systemPrompt")).toString(), QStringLiteral("Be brief."));
        const QJsonArray messages = root.value(QStringLiteral("messages")).toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages.at(0).toObject().value(QStringLiteral("role")).toString(), QStringLiteral("user"));
        QCOMPARE(messages.at(1).toObject().value(QStringLiteral("content")).toString(),
                 QStringLiteral("A format.\n\n```sh\nexl convert\n```"));
        QVERIFY(messages.at(1).toObject().value(QStringLiteral("stats")).isObject());

        // A folder that does not exist: an error that names the file, and no file.
        const QString bad = m_dir.filePath(QStringLiteral("missing/chat.md"));
        QVERIFY(!chat.exportTo(QUrl::fromLocalFile(bad), QStringLiteral("markdown")));
        QVERIFY(chat.lastError().contains(bad));
        QVERIFY(!QFile::exists(bad));
    }

    void titlesLoseTheirMarkdown_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("title");
        QTest::addRow("bold") << "**Explain** the `exl` tool" << "Explain the exl tool";
        QTest::addRow("heading") << "# Big question\nmore" << "Big question more";
        QTest::addRow("fence") << "```python\nprint(1)\n```" << "print(1)";
        QTest::addRow("link") << "See [the docs](http://x.invalid) and *this*" << "See the docs and this";
        QTest::addRow("list") << "- one\n- two" << "one two";
        QTest::addRow("long") << QString(60, QLatin1Char('a')) << QString(48, QLatin1Char('a')) + QStringLiteral("…");
    }
    void titlesLoseTheirMarkdown()
    {
        QFETCH(QString, text);
        QFETCH(QString, title);
        QCOMPARE(ChatViewModel::titleFrom(text), title);
    }
};

QTEST_GUILESS_MAIN(ChatBranchesTest)
#include "ui_chatbranches_test.moc"
