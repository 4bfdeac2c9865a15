#include "chatviewmodel.h"

#include <algorithm>

#include "services/inferenceservice.h"

namespace {
constexpr int kBatchesPerSave = 8;  // streamed text reaches the database every few batches
constexpr int kTitleLength = 48;

QVariantMap statsMap(const GenerationStats &stats, bool stopped)
{
    QVariantMap map;
    if (stats.generatedTokens > 0 || stats.promptTokens > 0) {
        map.insert(QStringLiteral("promptTokens"), stats.promptTokens);
        map.insert(QStringLiteral("reusedPromptTokens"), stats.reusedPromptTokens);
        map.insert(QStringLiteral("generatedTokens"), stats.generatedTokens);
        map.insert(QStringLiteral("timeToFirstTokenMs"), stats.timeToFirstTokenMs);
        map.insert(QStringLiteral("prefillTokensPerSecond"), stats.prefillTokensPerSecond);
        map.insert(QStringLiteral("decodeTokensPerSecond"), stats.decodeTokensPerSecond);
        if (stats.joulesPerToken >= 0)
            map.insert(QStringLiteral("joulesPerToken"), stats.joulesPerToken);
        if (stats.draftedTokens > 0) {
            map.insert(QStringLiteral("draftedTokens"), stats.draftedTokens);
            map.insert(QStringLiteral("acceptedDraftTokens"), stats.acceptedDraftTokens);
            map.insert(QStringLiteral("acceptanceRate"), stats.acceptanceRate());
            map.insert(QStringLiteral("tokensPerPass"), stats.tokensPerPass());
        }
    }
    if (stopped)
        map.insert(QStringLiteral("stopped"), true);
    return map;
}
QVariantList rangesToVariant(const QList<TextRange> &ranges)
{
    QVariantList out;
    for (const TextRange &r : ranges)
        out.append(QVariant(QVariantList{r.start, r.length}));
    return out;
}

QList<TextRange> rangesFromVariant(const QVariant &value)
{
    QList<TextRange> out;
    for (const QVariant &entry : value.toList()) {
        const QVariantList pair = entry.toList();
        if (pair.size() == 2)
            out.append({pair.at(0).toInt(), pair.at(1).toInt()});
    }
    return out;
}
}  // namespace

ChatViewModel::ChatViewModel(InferenceService *service, ChatStore *store, QObject *parent)
    : QAbstractListModel(parent)
    , m_service(service)
    , m_store(store)
{
    connect(service, &InferenceService::tokensArrived, this, &ChatViewModel::onTokens);
    connect(service, &InferenceService::generationFinished, this, &ChatViewModel::onFinished);
    connect(service, &InferenceService::error, this, &ChatViewModel::onError);
}

int ChatViewModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_messages.size());
}

QVariant ChatViewModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Message &m = m_messages.at(index.row());
    switch (role) {
    case RoleRole: return m.stored.role;
    case Qt::DisplayRole:
    case TextRole: return m.stored.text;
    case StreamingRole: return m.streaming;
    case StoppedRole: return m.stopped;
    case StatsRole: return m.stored.stats;
    default: return {};
    }
}

QHash<int, QByteArray> ChatViewModel::roleNames() const
{
    return {{RoleRole, "role"}, {TextRole, "text"}, {StreamingRole, "streaming"}, {StoppedRole, "stopped"},
            {StatsRole, "stats"}};
}

bool ChatViewModel::canRegenerate() const
{
    return !busy() && !m_messages.isEmpty() && m_messages.constLast().stored.role == QLatin1String("assistant");
}

void ChatViewModel::setSystemPrompt(const QString &prompt)
{
    if (prompt == m_systemPrompt)
        return;
    m_systemPrompt = prompt;
    if (m_conversationId != 0)
        m_store->setSystemPrompt(m_conversationId, prompt);
    Q_EMIT conversationChanged();
}

void ChatViewModel::openConversation(qint64 id)
{
    stop();
    beginResetModel();
    m_messages.clear();
    m_conversationId = 0;
    m_systemPrompt.clear();
    if (id != 0) {
        const StoredConversation conversation = m_store->conversation(id);
        if (conversation.id != 0) {
            m_conversationId = id;
            m_systemPrompt = conversation.systemPrompt;
            for (const StoredMessage &stored : m_store->messages(id))
                m_messages.append({stored, false, stored.stats.value(QStringLiteral("stopped")).toBool(),
                                   rangesFromVariant(stored.stats.value(QStringLiteral("draftRanges")))});
        }
    }
    endResetModel();
    setError({});
    Q_EMIT conversationChanged();
    Q_EMIT canRegenerateChanged();
}

bool ChatViewModel::send(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty() || busy() || !m_service)
        return false;
    if (m_conversationId == 0) {
        const qint64 id = m_store->createConversation(trimmed.left(kTitleLength).simplified(), m_systemPrompt);
        if (id == 0) {
            setError(tr("Could not save the conversation: %1").arg(m_store->lastError()));
            return false;
        }
        m_conversationId = id;
        Q_EMIT conversationChanged();
        Q_EMIT conversationStored(id);
    }
    StoredMessage user{0, QStringLiteral("user"), trimmed, {}};
    user.id = m_store->appendMessage(m_conversationId, user);
    if (user.id == 0) {
        setError(tr("Could not save the message: %1").arg(m_store->lastError()));
        return false;
    }
    setError({});
    beginInsertRows({}, int(m_messages.size()), int(m_messages.size()));
    m_messages.append({user, false, false});
    endInsertRows();
    startReply();
    return true;
}

void ChatViewModel::startReply()
{
    const QList<ChatTurn> conversation = turns();
    StoredMessage reply{0, QStringLiteral("assistant"), QString(), {}};
    reply.id = m_store->appendMessage(m_conversationId, reply);
    beginInsertRows({}, int(m_messages.size()), int(m_messages.size()));
    m_messages.append({reply, true, false});
    endInsertRows();
    m_batchesSinceSave = 0;
    setActiveRequest(m_service->generate(conversation, m_sampling));
}

void ChatViewModel::stop()
{
    if (!busy())
        return;
    if (m_service)
        m_service->cancel(m_activeRequest);
    // The reply ends here, with the text shown so far; later batches of this request are dropped.
    GenerationStats stats;
    stats.requestId = m_activeRequest;
    stats.cancelled = true;
    finishReply(stats, true);
}

bool ChatViewModel::regenerate()
{
    if (!canRegenerate())
        return false;
    const int last = int(m_messages.size()) - 1;
    beginRemoveRows({}, last, last);
    m_messages.removeLast();
    endRemoveRows();
    if (!persistAll())
        return false;
    startReply();
    return true;
}

bool ChatViewModel::editMessage(int row, const QString &text)
{
    if (row < 0 || row >= m_messages.size() || m_messages.at(row).stored.role != QLatin1String("user")
        || text.trimmed().isEmpty())
        return false;
    stop();
    m_messages[row].stored.text = text.trimmed();
    Q_EMIT dataChanged(index(row), index(row), {TextRole});
    if (row + 1 < m_messages.size()) {
        beginRemoveRows({}, row + 1, int(m_messages.size()) - 1);
        m_messages.erase(m_messages.begin() + row + 1, m_messages.end());
        endRemoveRows();
    }
    if (!persistAll())
        return false;
    startReply();
    return true;
}

QString ChatViewModel::messageText(int row) const
{
    return row >= 0 && row < m_messages.size() ? m_messages.at(row).stored.text : QString();
}

QList<TextRange> ChatViewModel::draftRanges(int row) const
{
    return row >= 0 && row < m_messages.size() ? m_messages.at(row).draftRanges : QList<TextRange>();
}

QString ChatViewModel::tintedText(int row, const QString &color) const
{
    if (row < 0 || row >= m_messages.size() || m_messages.at(row).draftRanges.isEmpty())
        return {};
    const QString &text = m_messages.at(row).stored.text;
    const auto escaped = [&](int from, int to) {
        return text.mid(from, to - from).toHtmlEscaped().replace(QLatin1Char('\n'), QLatin1String("<br>"));
    };
    QString out;
    int at = 0;
    for (const TextRange &r : m_messages.at(row).draftRanges) {
        const int start = std::clamp(r.start, at, int(text.size()));
        const int end = std::clamp(r.start + r.length, start, int(text.size()));
        out += escaped(at, start);
        out += QStringLiteral("<font color=\"%1\">").arg(color.toHtmlEscaped()) + escaped(start, end) + QLatin1String("</font>");
        at = end;
    }
    return out + escaped(at, int(text.size()));
}

void ChatViewModel::onTokens(const TokenBatch &batch)
{
    if (batch.requestId != m_activeRequest || m_messages.isEmpty())
        return;
    const int row = int(m_messages.size()) - 1;
    Message &reply = m_messages[row];
    const int offset = int(reply.stored.text.size());
    for (const TextRange &r : batch.draftRanges) {
        QList<TextRange> &ranges = reply.draftRanges;
        if (!ranges.isEmpty() && ranges.constLast().start + ranges.constLast().length == offset + r.start)
            ranges.last().length += r.length;
        else
            ranges.append({offset + r.start, r.length});
    }
    reply.stored.text += batch.text;
    Q_EMIT dataChanged(index(row), index(row), {TextRole});
    if (++m_batchesSinceSave >= kBatchesPerSave) {
        m_batchesSinceSave = 0;
        m_store->updateMessage(reply.stored.id, reply.stored.text);
    }
}

void ChatViewModel::onFinished(const GenerationStats &stats)
{
    if (stats.requestId == m_activeRequest && busy())
        finishReply(stats, stats.cancelled);
}

void ChatViewModel::onError(quint64 requestId, const QString &message)
{
    if (requestId == 0 || requestId != m_activeRequest)
        return;
    const int row = int(m_messages.size()) - 1;
    if (m_messages.at(row).stored.text.isEmpty()) {
        // Nothing was generated: the conversation goes back to ending on the user's message.
        beginRemoveRows({}, row, row);
        m_messages.removeLast();
        endRemoveRows();
        setActiveRequest(0);
        persistAll();
    } else {
        GenerationStats stats;
        stats.requestId = requestId;
        finishReply(stats, true);
    }
    setError(message);
}

void ChatViewModel::finishReply(const GenerationStats &stats, bool stopped)
{
    const int row = int(m_messages.size()) - 1;
    Message &reply = m_messages[row];
    reply.streaming = false;
    reply.stopped = stopped;
    reply.stored.stats = statsMap(stats, stopped);
    if (!reply.draftRanges.isEmpty())
        reply.stored.stats.insert(QStringLiteral("draftRanges"), rangesToVariant(reply.draftRanges));
    if (!m_store->updateMessage(reply.stored.id, reply.stored.text, reply.stored.stats))
        setError(tr("Could not save the reply: %1").arg(m_store->lastError()));
    Q_EMIT dataChanged(index(row), index(row), {StreamingRole, StoppedRole, StatsRole});
    setActiveRequest(0);
    Q_EMIT replyFinished();
}

void ChatViewModel::setError(const QString &message)
{
    if (message == m_lastError)
        return;
    m_lastError = message;
    Q_EMIT lastErrorChanged();
}

void ChatViewModel::setActiveRequest(quint64 id)
{
    if (id == m_activeRequest)
        return;
    m_activeRequest = id;
    Q_EMIT busyChanged();
    Q_EMIT canRegenerateChanged();
}

bool ChatViewModel::persistAll()
{
    QList<StoredMessage> stored;
    for (const Message &m : std::as_const(m_messages))
        stored.append(m.stored);
    if (!m_store->replaceMessages(m_conversationId, stored)) {
        setError(tr("Could not save the conversation: %1").arg(m_store->lastError()));
        return false;
    }
    for (int i = 0; i < stored.size(); ++i)
        m_messages[i].stored.id = stored[i].id;
    return true;
}

QList<ChatTurn> ChatViewModel::turns() const
{
    QList<ChatTurn> out;
    if (!m_systemPrompt.trimmed().isEmpty())
        out.append({QStringLiteral("system"), m_systemPrompt});
    for (const Message &m : m_messages) {
        if (!m.streaming)
            out.append({m.stored.role, m.stored.text});
    }
    return out;
}
