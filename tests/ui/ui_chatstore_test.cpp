// ChatStore: round trip, search, migration from every earlier schema, and an interrupted save
// that must leave the previous conversation intact and the database consistent.
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "storage/chatstore.h"
#include "storage/migrations.h"

namespace {
QList<StoredMessage> threeMessages()
{
    return {{0, QStringLiteral("system"), QStringLiteral("Be brief."), {}},
            {0, QStringLiteral("user"), QStringLiteral("What is EXL2?"), {}},
            {0, QStringLiteral("assistant"), QStringLiteral("A quantization format."),
             {{QStringLiteral("generatedTokens"), 5}}}};
}

// Writes a database at schema `version` by hand, the way an older release left it.
void writeOldDatabase(const QString &path, int version)
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("old"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        for (int v = 1; v <= version; ++v) {
            for (const QString &sql : migrationSteps(v))
                QVERIFY2(q.exec(sql), qPrintable(sql));
        }
        QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = %1").arg(version)));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (7, 'Old chat', 1, 2)")));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO messages (conversation_id, position, role, text) VALUES (7, 0, 'user', 'Hello from v%1')").arg(version)));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO messages (conversation_id, position, role, text) VALUES (7, 1, 'assistant', 'Hi')")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("old"));
}
}  // namespace

class ChatStoreTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTrip()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
        qint64 id = 0;
        {
            ChatStore store;
            QVERIFY2(store.open(path), qPrintable(store.lastError()));
            QCOMPARE(store.schemaVersion(), ChatStore::kSchemaVersion);
            id = store.createConversation(QStringLiteral("EXL2 questions"), QStringLiteral("Be brief."));
            QVERIFY(id > 0);
            QList<StoredMessage> messages = threeMessages();
            QVERIFY(store.replaceMessages(id, messages));
            QVERIFY(messages[2].id > 0);
            QVERIFY(store.updateMessage(messages[2].id, QStringLiteral("A quantization format for LLMs."),
                                        {{QStringLiteral("generatedTokens"), 7}}));
            const qint64 appended = store.appendMessage(id, {0, QStringLiteral("user"), QString(), {}});
            QVERIFY(appended > 0);  // an empty (null) text is stored as ""
        }
        ChatStore reopened;
        QVERIFY(reopened.open(path));
        const StoredConversation conversation = reopened.conversation(id);
        QCOMPARE(conversation.title, QStringLiteral("EXL2 questions"));
        QCOMPARE(conversation.systemPrompt, QStringLiteral("Be brief."));
        const QList<StoredMessage> messages = reopened.messages(id);
        QCOMPARE(messages.size(), 4);
        QCOMPARE(messages[0].role, QStringLiteral("system"));
        QCOMPARE(messages[1].text, QStringLiteral("What is EXL2?"));
        QCOMPARE(messages[2].text, QStringLiteral("A quantization format for LLMs."));
        QCOMPARE(messages[2].stats.value(QStringLiteral("generatedTokens")).toInt(), 7);
        QCOMPARE(messages[3].text, QString(""));
        QCOMPARE(reopened.integrityCheck(), QStringLiteral("ok"));
    }

    void searchRenameDelete()
    {
        QTemporaryDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.filePath(QStringLiteral("chats.sqlite"))));
        const qint64 a = store.createConversation(QStringLiteral("Cooking"));
        const qint64 b = store.createConversation(QStringLiteral("GPU tuning"));
        QVERIFY(store.appendMessage(a, {0, QStringLiteral("user"), QStringLiteral("How long to boil 100% of an egg?"), {}}));
        QVERIFY(store.appendMessage(b, {0, QStringLiteral("user"), QStringLiteral("Why is my RTX slow?"), {}}));
        QCOMPARE(store.conversations().size(), 2);
        QCOMPARE(store.conversations(QStringLiteral("gpu")).size(), 1);    // title, any case
        QCOMPARE(store.conversations(QStringLiteral("rtx")).constFirst().id, b);  // message text
        QCOMPARE(store.conversations(QStringLiteral("100%")).constFirst().id, a); // % is literal
        QCOMPARE(store.conversations(QStringLiteral("nothing like this")).size(), 0);
        QVERIFY(store.renameConversation(a, QStringLiteral("Eggs")));
        QCOMPARE(store.conversation(a).title, QStringLiteral("Eggs"));
        QVERIFY(store.deleteConversation(b));
        QCOMPARE(store.conversations().size(), 1);
        QVERIFY(store.messages(b).isEmpty());
        QVERIFY(!store.deleteConversation(b));
    }

    void migratesFromEveryEarlierVersion_data()
    {
        QTest::addColumn<int>("version");
        for (int v = 1; v < ChatStore::kSchemaVersion; ++v)
            QTest::addRow("v%d", v) << v;
    }

    void migratesFromEveryEarlierVersion()
    {
        QFETCH(int, version);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
        writeOldDatabase(path, version);
        ChatStore store;
        QVERIFY2(store.open(path), qPrintable(store.lastError()));
        QCOMPARE(store.schemaVersion(), ChatStore::kSchemaVersion);
        const StoredConversation old = store.conversation(7);
        QCOMPARE(old.title, QStringLiteral("Old chat"));
        QCOMPARE(old.systemPrompt, QString(""));
        const QList<StoredMessage> messages = store.messages(7);
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].text, QStringLiteral("Hello from v%1").arg(version));
        QVERIFY(messages[1].stats.isEmpty());
        // Version 3: the old chat is one branch, shown whole, and takes new branches.
        QCOMPARE(messages[0].parentId, 0);
        QCOMPARE(messages[1].parentId, messages[0].id);
        QCOMPARE(old.leafId, messages[1].id);
        QCOMPARE(store.path(7).size(), 2);
        const qint64 sibling = store.appendMessage(7, {0, QStringLiteral("assistant"), QStringLiteral("Hello again"), {}, messages[0].id});
        QVERIFY(sibling != 0);
        QCOMPARE(store.path(7).constLast().text, QStringLiteral("Hello again"));
        QVERIFY(store.setLeaf(7, messages[1].id));
        QCOMPARE(store.path(7).constLast().text, QStringLiteral("Hi"));
        QCOMPARE(store.messages(7).size(), 3);
        QVERIFY(store.setSystemPrompt(7, QStringLiteral("New column works")));
        QCOMPARE(store.integrityCheck(), QStringLiteral("ok"));
    }

    void branchesAndDeletingALastMessage()
    {
        QTemporaryDir dir;
        ChatStore store;
        QVERIFY(store.open(dir.filePath(QStringLiteral("chats.sqlite"))));
        const qint64 id = store.createConversation(QStringLiteral("Branches"));
        const qint64 q = store.appendMessage(id, {0, QStringLiteral("user"), QStringLiteral("Q"), {}, 0});
        const qint64 a1 = store.appendMessage(id, {0, QStringLiteral("assistant"), QStringLiteral("A1"), {}, q});
        const qint64 a2 = store.appendMessage(id, {0, QStringLiteral("assistant"), QStringLiteral("A2"), {}, q});
        QVERIFY(q && a1 && a2);
        QCOMPARE(store.conversation(id).leafId, a2);
        QCOMPARE(store.path(id).size(), 2);
        QVERIFY(!store.setLeaf(id, 999));  // not a message of this chat
        QVERIFY(!store.deleteMessage(id, q));  // answered: not a last message
        QVERIFY(store.deleteMessage(id, a2));
        QCOMPARE(store.conversation(id).leafId, q);  // the deleted leaf's parent
        QCOMPARE(store.path(id).size(), 1);
        QVERIFY(store.setLeaf(id, a1));
        QCOMPARE(store.path(id).constLast().text, QStringLiteral("A1"));
        QVERIFY(store.deleteConversation(id));  // the whole tree goes
        QVERIFY(store.messages(id).isEmpty());
        QCOMPARE(store.integrityCheck(), QStringLiteral("ok"));
    }

    void refusesNewerSchema()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
        writeOldDatabase(path, ChatStore::kSchemaVersion);
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("bump"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery(db).exec(QStringLiteral("PRAGMA user_version = 99"));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("bump"));
        ChatStore store;
        QVERIFY(!store.open(path));
        QVERIFY(store.lastError().contains(QStringLiteral("newer")));
    }

    void interruptedSaveKeepsPreviousState()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("chats.sqlite"));
        qint64 id = 0;
        {
            ChatStore store;
            QVERIFY(store.open(path));
            id = store.createConversation(QStringLiteral("Keep me"));
            QList<StoredMessage> original = threeMessages();
            QVERIFY(store.replaceMessages(id, original));

            // The third row of the new list fails to insert (the schema rejects its role):
            // the save stops halfway, after deleting the old rows and writing two new ones.
            QList<StoredMessage> broken{{0, QStringLiteral("user"), QStringLiteral("Replacement 1"), {}},
                                        {0, QStringLiteral("assistant"), QStringLiteral("Replacement 2"), {}},
                                        {0, QStringLiteral("narrator"), QStringLiteral("Invalid"), {}},
                                        {0, QStringLiteral("user"), QStringLiteral("Never written"), {}}};
            QVERIFY(!store.replaceMessages(id, broken));
            QVERIFY(!store.lastError().isEmpty());
            QCOMPARE(broken[0].id, 0);  // ids are only written back on success

            const QList<StoredMessage> after = store.messages(id);
            QCOMPARE(after.size(), 3);
            for (int i = 0; i < 3; ++i) {
                QCOMPARE(after[i].role, original[i].role);
                QCOMPARE(after[i].text, original[i].text);
            }
            // The store keeps working after the failed transaction.
            QVERIFY(store.appendMessage(id, {0, QStringLiteral("user"), QStringLiteral("Still here"), {}}) > 0);
        }
        ChatStore reopened;
        QVERIFY(reopened.open(path));
        QCOMPARE(reopened.messages(id).size(), 4);
        QCOMPARE(reopened.messages(id).constLast().text, QStringLiteral("Still here"));
        QCOMPARE(reopened.integrityCheck(), QStringLiteral("ok"));
    }
};

QTEST_GUILESS_MAIN(ChatStoreTest)
#include "ui_chatstore_test.moc"
