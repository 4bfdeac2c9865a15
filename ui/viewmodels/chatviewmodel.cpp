#include "chatviewmodel.h"

#include <algorithm>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

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
    else if (stats.contextFull)
        map.insert(QStringLiteral("stopReason"), QStringLiteral("context"));
    else if (stats.hitTokenLimit)
        map.insert(QStringLiteral("stopReason"), QStringLiteral("length"));
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
    case SiblingIndexRole: return int(siblingsOf(m.stored.parentId).indexOf(m.stored.id));
    case SiblingCountRole: return int(siblingsOf(m.stored.parentId).size());
    default: return {};
    }
}

QHash<int, QByteArray> ChatViewModel::roleNames() const
{
    return {{RoleRole, "role"}, {TextRole, "text"}, {StreamingRole, "streaming"}, {StoppedRole, "stopped"},
            {StatsRole, "stats"}, {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"}};
}

bool ChatViewModel::canRegenerate() const
{
    return !busy() && !m_messages.isEmpty() && m_messages.constLast().stored.role == QLatin1String("assistant");
}

bool ChatViewModel::canRetry() const
{
    return !busy() && !m_messages.isEmpty() && m_messages.constLast().stored.role == QLatin1String("user");
}

QString ChatViewModel::title() const
{
    return m_conversationId != 0 ? m_store->conversation(m_conversationId).title : QString();
}

QString ChatViewModel::titleFrom(const QString &text)
{
    QString t = text;
    static const QRegularExpression fence(QStringLiteral("^\\s*(```|~~~)[^\\n]*$"), QRegularExpression::MultilineOption);
    static const QRegularExpression lineMarks(QStringLiteral("^\\s*(#{1,6}\\s+|>\\s*|[-*+]\\s+|\\d+[.)]\\s+)"),
                                              QRegularExpression::MultilineOption);
    static const QRegularExpression image(QStringLiteral("!\\[([^\\]]*)\\]\\([^)]*\\)"));
    static const QRegularExpression link(QStringLiteral("\\[([^\\]]*)\\]\\([^)]*\\)"));
    static const QRegularExpression emphasis(QStringLiteral("(\\*{1,3}|_{2,3}|~~|`+)"));
    t.replace(fence, QString());
    t.replace(lineMarks, QString());
    t.replace(image, QStringLiteral("\\1"));
    t.replace(link, QStringLiteral("\\1"));
    t.replace(emphasis, QString());
    t = t.simplified();
    if (t.size() > kTitleLength) {
        t = t.left(kTitleLength);
        const int space = int(t.lastIndexOf(QLatin1Char(' ')));
        if (space > kTitleLength / 2)
            t = t.left(space);
        t += QStringLiteral("…");
    }
    return t;
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
    m_all.clear();
    m_conversationId = 0;
    m_systemPrompt.clear();
    if (id != 0) {
        const StoredConversation conversation = m_store->conversation(id);
        if (conversation.id != 0) {
            m_conversationId = id;
            m_systemPrompt = conversation.systemPrompt;
            m_all = m_store->messages(id);
            for (const StoredMessage &stored : m_store->path(id))
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
        QString title = titleFrom(trimmed);
        if (title.isEmpty())
            title = trimmed.left(kTitleLength).simplified();
        const qint64 id = m_store->createConversation(title, m_systemPrompt);
        if (id == 0) {
            setError(tr("Could not save the conversation: %1").arg(m_store->lastError()));
            return false;
        }
        m_conversationId = id;
        Q_EMIT conversationChanged();
        Q_EMIT conversationStored(id);
    }
    StoredMessage user{0, QStringLiteral("user"), trimmed, {}, m_messages.isEmpty() ? 0 : m_messages.constLast().stored.id};
    user.id = m_store->appendMessage(m_conversationId, user);
    if (user.id == 0) {
        setError(tr("Could not save the message: %1").arg(m_store->lastError()));
        return false;
    }
    setError({});
    m_all.append(user);
    beginInsertRows({}, int(m_messages.size()), int(m_messages.size()));
    m_messages.append({user, false, false});
    endInsertRows();
    startReply(user.id);
    return true;
}

void ChatViewModel::startReply(qint64 parentId)
{
    const QList<ChatTurn> conversation = turns();
    StoredMessage reply{0, QStringLiteral("assistant"), QString(), {}, parentId};
    reply.id = m_store->appendMessage(m_conversationId, reply);
    m_all.append(reply);
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
    if (m_messages.constLast().stored.text.isEmpty()) {
        // Stopped before any token: the user's message is left without a reply (Retry asks again).
        dropEmptyReply();
        setActiveRequest(0);
        Q_EMIT replyFinished();
        return;
    }
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
    const qint64 parent = m_messages.at(last).stored.parentId;
    beginRemoveRows({}, last, last);
    m_messages.removeLast();
    endRemoveRows();
    startReply(parent);  // a sibling of the earlier reply, which stays
    return true;
}

bool ChatViewModel::retry()
{
    if (!canRetry() || !m_service)
        return false;
    setError({});
    startReply(m_messages.constLast().stored.id);
    return true;
}

bool ChatViewModel::editMessage(int row, const QString &text)
{
    if (row < 0 || row >= m_messages.size() || m_messages.at(row).stored.role != QLatin1String("user")
        || text.trimmed().isEmpty() || !m_service)
        return false;
    stop();
    if (row >= m_messages.size())
        return false;
    StoredMessage user{0, QStringLiteral("user"), text.trimmed(), {}, m_messages.at(row).stored.parentId};
    user.id = m_store->appendMessage(m_conversationId, user);
    if (user.id == 0) {
        setError(tr("Could not save the message: %1").arg(m_store->lastError()));
        return false;
    }
    m_all.append(user);
    beginRemoveRows({}, row, int(m_messages.size()) - 1);
    m_messages.erase(m_messages.begin() + row, m_messages.end());
    endRemoveRows();
    beginInsertRows({}, row, row);
    m_messages.append({user, false, false});
    endInsertRows();
    setError({});
    startReply(user.id);
    return true;
}

bool ChatViewModel::selectSibling(int row, int delta)
{
    if (busy() || row < 0 || row >= m_messages.size())
        return false;
    const QList<qint64> siblings = siblingsOf(m_messages.at(row).stored.parentId);
    const int to = int(siblings.indexOf(m_messages.at(row).stored.id)) + delta;
    if (delta == 0 || to < 0 || to >= siblings.size())
        return false;
    const qint64 leaf = newestLeafUnder(siblings.at(to));
    if (!m_store->setLeaf(m_conversationId, leaf)) {
        setError(tr("Could not save the conversation: %1").arg(m_store->lastError()));
        return false;
    }
    showBranchFrom(row, leaf);
    return true;
}

QList<qint64> ChatViewModel::siblingsOf(qint64 parentId) const
{
    QList<qint64> out;
    for (const StoredMessage &m : m_all) {
        if (m.parentId == parentId)
            out.append(m.id);
    }
    return out;
}

qint64 ChatViewModel::newestLeafUnder(qint64 id) const
{
    // Bounded by the message count, so a damaged file cannot loop.
    for (int steps = 0; steps <= m_all.size(); ++steps) {
        const QList<qint64> children = siblingsOf(id);
        if (children.isEmpty())
            break;
        id = children.constLast();
    }
    return id;
}

void ChatViewModel::showBranchFrom(int row, qint64 leafId)
{
    QList<Message> tail;
    qint64 at = leafId;
    const qint64 stopAt = m_messages.at(row).stored.parentId;
    while (at != 0 && at != stopAt && tail.size() <= m_all.size()) {
        const auto it = std::find_if(m_all.cbegin(), m_all.cend(), [at](const StoredMessage &m) { return m.id == at; });
        if (it == m_all.cend())
            break;
        tail.prepend({*it, false, it->stats.value(QStringLiteral("stopped")).toBool(),
                      rangesFromVariant(it->stats.value(QStringLiteral("draftRanges")))});
        at = it->parentId;
    }
    beginRemoveRows({}, row, int(m_messages.size()) - 1);
    m_messages.erase(m_messages.begin() + row, m_messages.end());
    endRemoveRows();
    beginInsertRows({}, row, row + int(tail.size()) - 1);
    m_messages.append(tail);
    endInsertRows();
    Q_EMIT canRegenerateChanged();
}

void ChatViewModel::storeNode(const StoredMessage &message)
{
    for (StoredMessage &m : m_all) {
        if (m.id == message.id) {
            m = message;
            return;
        }
    }
}

void ChatViewModel::dropEmptyReply()
{
    const int row = int(m_messages.size()) - 1;
    const qint64 id = m_messages.at(row).stored.id;
    beginRemoveRows({}, row, row);
    m_messages.removeLast();
    endRemoveRows();
    m_all.erase(std::remove_if(m_all.begin(), m_all.end(), [id](const StoredMessage &m) { return m.id == id; }),
                m_all.end());
    if (!m_store->deleteMessage(m_conversationId, id))
        setError(tr("Could not save the conversation: %1").arg(m_store->lastError()));
}

QString ChatViewModel::exportText(const QString &format) const
{
    const QString heading = title().isEmpty() ? tr("Chat") : title();
    if (format == QLatin1String("json")) {
        QJsonArray messages;
        for (const Message &m : m_messages) {
            QJsonObject entry{{QStringLiteral("role"), m.stored.role}, {QStringLiteral("content"), m.stored.text}};
            if (!m.stored.stats.isEmpty())
                entry.insert(QStringLiteral("stats"), QJsonObject::fromVariantMap(m.stored.stats));
            messages.append(entry);
        }
        QJsonObject root{{QStringLiteral("title"), heading},
                         {QStringLiteral("exported"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
                         {QStringLiteral("messages"), messages}};
        if (!m_systemPrompt.trimmed().isEmpty())
            root.insert(QStringLiteral("systemPrompt"), m_systemPrompt);
        return QString::fromUtf8(QJsonDocument(root).toJson(QJsonDocument::Indented));
    }
    QString out = QStringLiteral("# %1\n\n").arg(heading);
    if (!m_systemPrompt.trimmed().isEmpty())
        out += QStringLiteral("## %1\n\n%2\n\n").arg(tr("System"), m_systemPrompt.trimmed());
    for (const Message &m : m_messages) {
        const QString who = m.stored.role == QLatin1String("user") ? tr("User")
                          : m.stored.role == QLatin1String("assistant") ? tr("Assistant") : tr("System");
        out += QStringLiteral("## %1\n\n%2\n\n").arg(who, m.stored.text);
    }
    return out;
}

bool ChatViewModel::exportTo(const QUrl &file, const QString &format)
{
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    if (path.isEmpty() || m_messages.isEmpty()) {
        setError(tr("Nothing to export: the chat is empty."));
        return false;
    }
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly)) {
        setError(tr("Could not export to %1: %2").arg(path, out.errorString()));
        return false;
    }
    const QByteArray bytes = exportText(format).toUtf8();
    if (out.write(bytes) != bytes.size() || !out.commit()) {
        setError(tr("Could not export to %1: %2").arg(path, out.errorString()));
        return false;
    }
    setError({});
    return true;
}

QString ChatViewModel::messageText(int row) const
{
    return row >= 0 && row < m_messages.size() ? m_messages.at(row).stored.text : QString();
}

QString ChatViewModel::lastReplyText() const
{
    for (auto it = m_messages.crbegin(); it != m_messages.crend(); ++it) {
        if (it->stored.role == QLatin1String("assistant") && !it->streaming)
            return it->stored.text;
    }
    return {};
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
        // Nothing was generated: the conversation goes back to ending on the user's message,
        // which Retry answers.
        dropEmptyReply();
        setActiveRequest(0);
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
    storeNode(reply.stored);
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
