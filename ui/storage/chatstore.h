// Chat history in SQLite (Qt Sql): a versioned schema with migrations, WAL, and every
// multi-row change in one transaction, so an interrupted write leaves the previous state.
// Used only from the GUI thread.
#pragma once
#include <QDateTime>
#include <QList>
#include <QString>
#include <QVariantMap>

struct StoredConversation {
    qint64 id = 0;
    QString title;
    QString systemPrompt;
    QDateTime updatedAt;
    qint64 leafId = 0;  // the last message of the branch shown (0: none)
};

struct StoredMessage {
    qint64 id = 0;
    QString role;   // "system", "user" or "assistant"
    QString text;
    QVariantMap stats;  // per-reply statistics (tokens, time to first token, speeds)
    qint64 parentId = 0;  // the message this one follows (0: the first of the conversation)
};

class ChatStore
{
public:
    static constexpr int kSchemaVersion = 3;

    ChatStore();
    ~ChatStore();
    ChatStore(const ChatStore &) = delete;
    ChatStore &operator=(const ChatStore &) = delete;

    // Opens (creating when needed) and migrates the database file; false with lastError() set.
    bool open(const QString &filePath);
    bool isOpen() const;
    QString lastError() const { return m_lastError; }
    int schemaVersion() const;
    QString integrityCheck() const;  // "ok" when PRAGMA integrity_check finds nothing

    qint64 createConversation(const QString &title, const QString &systemPrompt = {});
    bool renameConversation(qint64 id, const QString &title);
    bool setSystemPrompt(qint64 id, const QString &systemPrompt);
    bool deleteConversation(qint64 id);
    // Newest first; `search` matches titles and message text (case-insensitive), empty for all.
    QList<StoredConversation> conversations(const QString &search = {}) const;
    StoredConversation conversation(qint64 id) const;

    // Every message of the conversation, all branches, oldest first.
    QList<StoredMessage> messages(qint64 conversationId) const;
    // The branch shown: from the first message to the conversation's leaf.
    QList<StoredMessage> path(qint64 conversationId) const;
    // Appends one message after message.parentId (committed at once) and makes it the leaf of the
    // branch shown; returns its id, 0 on failure.
    qint64 appendMessage(qint64 conversationId, const StoredMessage &message);
    // The branch shown ends at `leafId` (a message of the conversation).
    bool setLeaf(qint64 conversationId, qint64 leafId);
    // Removes a message that nothing follows (a reply that produced nothing); its parent becomes
    // the leaf.
    bool deleteMessage(qint64 conversationId, qint64 messageId);
    // Updates the text and stats of one message (streamed text is saved in batches).
    bool updateMessage(qint64 messageId, const QString &text, const QVariantMap &stats = {});
    // Replaces the whole message list with one branch, atomically: all or nothing. Ids of
    // `messages` are ignored; the new ids are written back into `messages` on success.
    bool replaceMessages(qint64 conversationId, QList<StoredMessage> &messages);

private:
    bool migrate();
    bool exec(const QString &sql);
    bool touch(qint64 conversationId);

    QString m_connectionName;
    QString m_lastError;
};
