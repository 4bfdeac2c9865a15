// The open conversation: the branch shown of its messages (a list model for the chat view), the
// streaming assistant reply, and send / stop / regenerate / edit / retry. Regenerating a reply or
// editing a message adds a sibling and keeps the earlier one: each row knows its siblings and the
// user steps between them; the model is always given the branch shown. Owns no thread: tokens
// arrive as queued batches from the InferenceService and are appended here, on the GUI thread.
#pragma once
#include <QAbstractListModel>
#include <QPointer>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "services/inferencetypes.h"
#include "storage/chatstore.h"

class InferenceService;
class SettingsViewModel;

class ChatViewModel : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
    Q_PROPERTY(qint64 conversationId READ conversationId NOTIFY conversationChanged)
    Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY conversationChanged)
    Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
    Q_PROPERTY(bool canRegenerate READ canRegenerate NOTIFY canRegenerateChanged)
    // The last message is the user's and has no reply (an error, a stop before any token).
    Q_PROPERTY(bool canRetry READ canRetry NOTIFY canRegenerateChanged)
    Q_PROPERTY(QString title READ title NOTIFY conversationChanged)
public:
    enum Roles {
        RoleRole = Qt::UserRole + 1, TextRole, StreamingRole, StoppedRole, StatsRole,
        SiblingIndexRole,  // 0-based place of the row's message among the messages that share its parent
        SiblingCountRole,
    };
    Q_ENUM(Roles)

    ChatViewModel(InferenceService *service, ChatStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool busy() const { return m_activeRequest != 0; }
    qint64 conversationId() const { return m_conversationId; }
    QString systemPrompt() const { return m_systemPrompt; }
    void setSystemPrompt(const QString &prompt);
    QString lastError() const { return m_lastError; }
    bool canRegenerate() const;
    bool canRetry() const;
    QString title() const;
    SamplingSettings sampling() const { return m_sampling; }
    void setSampling(const SamplingSettings &settings) { m_sampling = settings; }

    // Opens a stored conversation (0: a new, empty one that is stored on the first send).
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE bool send(const QString &text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE bool regenerate();
    // A new sibling of the user message at `row` with `text`, answered anew; the earlier message
    // and what followed it stay as the other branch.
    Q_INVOKABLE bool editMessage(int row, const QString &text);
    // Asks again for a reply to the last message (the user's, left without one).
    Q_INVOKABLE bool retry();
    // Shows the sibling `delta` places from the row's message (and the newest branch below it).
    Q_INVOKABLE bool selectSibling(int row, int delta);
    // The branch shown as Markdown or JSON ("markdown", "json").
    Q_INVOKABLE QString exportText(const QString &format) const;
    // Writes exportText(format) to `file` atomically; false with lastError set.
    Q_INVOKABLE bool exportTo(const QUrl &file, const QString &format);
    // A title for a conversation from its first message: one line, without Markdown marks.
    static QString titleFrom(const QString &text);
    Q_INVOKABLE QString messageText(int row) const;
    // The text of the last finished reply of the branch shown (empty: none).
    Q_INVOKABLE QString lastReplyText() const;
    // The text of accepted draft tokens in the message at `row` (ranges in its text; a reply keeps
    // them in its stats as "draftRanges").
    QList<TextRange> draftRanges(int row) const;
    // The message as StyledText with the text of accepted draft tokens in `color`; empty when it
    // has none.
    Q_INVOKABLE QString tintedText(int row, const QString &color) const;

Q_SIGNALS:
    void busyChanged();
    void conversationChanged();
    void conversationStored(qint64 id);  // a new conversation got its first message
    void lastErrorChanged();
    void canRegenerateChanged();
    void replyFinished();

private:
    struct Message {
        StoredMessage stored;
        bool streaming = false;
        bool stopped = false;
        QList<TextRange> draftRanges{};  // of stored.text: from accepted draft tokens
    };

    void startReply(qint64 parentId);
    void dropEmptyReply();
    QList<qint64> siblingsOf(qint64 parentId) const;
    qint64 newestLeafUnder(qint64 id) const;
    void showBranchFrom(int row, qint64 leafId);
    void storeNode(const StoredMessage &message);
    void finishReply(const GenerationStats &stats, bool stopped);
    void onTokens(const TokenBatch &batch);
    void onFinished(const GenerationStats &stats);
    void onError(quint64 requestId, const QString &message);
    void setError(const QString &message);
    void setActiveRequest(quint64 id);
    QList<ChatTurn> turns() const;

    QPointer<InferenceService> m_service;
    ChatStore *m_store;
    QList<Message> m_messages;           // the branch shown
    QList<StoredMessage> m_all;          // every message of the conversation, oldest first
    qint64 m_conversationId = 0;
    QString m_systemPrompt;
    QString m_lastError;
    SamplingSettings m_sampling;
    quint64 m_activeRequest = 0;
    int m_batchesSinceSave = 0;
};
