#include "chatstore.h"

#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

#include "migrations.h"

namespace {
QString statsToJson(const QVariantMap &stats)
{
    return stats.isEmpty() ? QStringLiteral("")
                           : QString::fromUtf8(QJsonDocument(QJsonObject::fromVariantMap(stats)).toJson(QJsonDocument::Compact));
}

QVariantMap statsFromJson(const QString &json)
{
    return json.isEmpty() ? QVariantMap() : QJsonDocument::fromJson(json.toUtf8()).object().toVariantMap();
}

// Qt binds a null QString as SQL NULL; the schema wants empty text instead.
QString text(const QString &s)
{
    return s.isNull() ? QStringLiteral("") : s;
}

QVariant parentValue(qint64 parentId)
{
    return parentId > 0 ? QVariant(parentId) : QVariant(QMetaType::fromType<qint64>());
}

// Commits on commit(); rolls back when it goes out of scope without one.
class Transaction
{
public:
    explicit Transaction(QSqlDatabase db) : m_db(db), m_active(m_db.transaction()) {}
    ~Transaction()
    {
        if (m_active)
            m_db.rollback();
    }
    bool active() const { return m_active; }
    bool commit()
    {
        m_active = false;
        return m_db.commit();
    }

private:
    QSqlDatabase m_db;
    bool m_active;
};
}  // namespace

ChatStore::ChatStore()
    : m_connectionName(QStringLiteral("chatstore-") + QUuid::createUuid().toString(QUuid::WithoutBraces))
{
}

ChatStore::~ChatStore()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isOpen())
            db.close();
    }
    QSqlDatabase::removeDatabase(m_connectionName);
}

bool ChatStore::open(const QString &filePath)
{
    QSqlDatabase db = QSqlDatabase::contains(m_connectionName) ? QSqlDatabase::database(m_connectionName, false)
                                                               : QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
    db.setDatabaseName(filePath);
    if (!db.open()) {
        m_lastError = db.lastError().text();
        return false;
    }
    // WAL: readers never block the writer and a crash mid-write keeps the last commit.
    return exec(QStringLiteral("PRAGMA journal_mode=WAL")) && exec(QStringLiteral("PRAGMA foreign_keys=ON"))
        && exec(QStringLiteral("PRAGMA synchronous=NORMAL")) && migrate();
}

bool ChatStore::isOpen() const
{
    return QSqlDatabase::database(m_connectionName, false).isOpen();
}

int ChatStore::schemaVersion() const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    return q.exec(QStringLiteral("PRAGMA user_version")) && q.next() ? q.value(0).toInt() : -1;
}

QString ChatStore::integrityCheck() const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    return q.exec(QStringLiteral("PRAGMA integrity_check")) && q.next() ? q.value(0).toString() : q.lastError().text();
}

bool ChatStore::migrate()
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    const int from = schemaVersion();
    if (from > kSchemaVersion) {
        m_lastError = QStringLiteral("The chat database was written by a newer version (schema %1).").arg(from);
        return false;
    }
    // One transaction per step: a failed step leaves the database at the previous version.
    for (int version = from + 1; version <= kSchemaVersion; ++version) {
        Transaction tx(db);
        for (const QString &sql : migrationSteps(version)) {
            if (!exec(sql))
                return false;
        }
        if (!exec(QStringLiteral("PRAGMA user_version = %1").arg(version)) || !tx.commit()) {
            m_lastError = db.lastError().text();
            return false;
        }
    }
    return true;
}

bool ChatStore::exec(const QString &sql)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    if (!q.exec(sql)) {
        m_lastError = q.lastError().text();
        return false;
    }
    return true;
}

bool ChatStore::touch(qint64 conversationId)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"));
    q.addBindValue(QDateTime::currentMSecsSinceEpoch());
    q.addBindValue(conversationId);
    return q.exec();
}

qint64 ChatStore::createConversation(const QString &title, const QString &systemPrompt)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("INSERT INTO conversations (title, system_prompt, created_at, updated_at) VALUES (?, ?, ?, ?)"));
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    q.addBindValue(text(title));
    q.addBindValue(text(systemPrompt));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return 0;
    }
    return q.lastInsertId().toLongLong();
}

bool ChatStore::renameConversation(qint64 id, const QString &title)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"));
    q.addBindValue(text(title));
    q.addBindValue(id);
    return q.exec() && q.numRowsAffected() == 1;
}

bool ChatStore::setSystemPrompt(qint64 id, const QString &systemPrompt)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("UPDATE conversations SET system_prompt = ? WHERE id = ?"));
    q.addBindValue(text(systemPrompt));
    q.addBindValue(id);
    return q.exec() && q.numRowsAffected() == 1;
}

bool ChatStore::deleteConversation(qint64 id)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    Transaction tx(db);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = ?"));
    q.addBindValue(id);
    if (!q.exec())
        return false;
    q.prepare(QStringLiteral("DELETE FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    return q.exec() && q.numRowsAffected() == 1 && tx.commit();
}

QList<StoredConversation> ChatStore::conversations(const QString &search) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    QString sql = QStringLiteral("SELECT id, title, system_prompt, updated_at, leaf_id FROM conversations");
    if (!search.isEmpty())
        sql += QStringLiteral(" WHERE title LIKE ? ESCAPE '\\' OR id IN "
                              "(SELECT conversation_id FROM messages WHERE text LIKE ? ESCAPE '\\')");
    q.prepare(sql + QStringLiteral(" ORDER BY updated_at DESC, id DESC"));
    if (!search.isEmpty()) {
        QString escaped = search;
        escaped.replace('\\', QStringLiteral("\\\\")).replace('%', QStringLiteral("\\%")).replace('_', QStringLiteral("\\_"));
        q.addBindValue('%' + escaped + '%');
        q.addBindValue('%' + escaped + '%');
    }
    QList<StoredConversation> out;
    if (!q.exec())
        return out;
    while (q.next())
        out.append({q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
                    QDateTime::fromMSecsSinceEpoch(q.value(3).toLongLong()), q.value(4).toLongLong()});
    return out;
}

StoredConversation ChatStore::conversation(qint64 id) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("SELECT id, title, system_prompt, updated_at, leaf_id FROM conversations WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next())
        return {};
    return {q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
            QDateTime::fromMSecsSinceEpoch(q.value(3).toLongLong()), q.value(4).toLongLong()};
}

QList<StoredMessage> ChatStore::messages(qint64 conversationId) const
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("SELECT id, role, text, stats_json, parent_id FROM messages WHERE conversation_id = ? "
                             "ORDER BY position"));
    q.addBindValue(conversationId);
    QList<StoredMessage> out;
    if (!q.exec())
        return out;
    while (q.next())
        out.append({q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
                    statsFromJson(q.value(3).toString()), q.value(4).toLongLong()});
    return out;
}

QList<StoredMessage> ChatStore::path(qint64 conversationId) const
{
    const QList<StoredMessage> all = messages(conversationId);
    QHash<qint64, int> byId;
    for (int i = 0; i < all.size(); ++i)
        byId.insert(all[i].id, i);
    qint64 at = conversation(conversationId).leafId;
    if (!byId.contains(at))
        at = all.isEmpty() ? 0 : all.constLast().id;  // a leaf lost: the newest message
    QList<StoredMessage> out;
    // Bounded by the message count: a cycle in a damaged file cannot loop.
    while (at != 0 && byId.contains(at) && out.size() < all.size()) {
        out.prepend(all[byId.value(at)]);
        at = out.constFirst().parentId;
    }
    return out;
}

bool ChatStore::setLeaf(qint64 conversationId, qint64 leafId)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("UPDATE conversations SET leaf_id = ? WHERE id = ? AND "
                             "(? = 0 OR EXISTS (SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?))"));
    q.addBindValue(leafId);
    q.addBindValue(conversationId);
    q.addBindValue(leafId);
    q.addBindValue(leafId);
    q.addBindValue(conversationId);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return false;
    }
    return q.numRowsAffected() == 1;
}

bool ChatStore::deleteMessage(qint64 conversationId, qint64 messageId)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    Transaction tx(db);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("SELECT COALESCE(parent_id, 0) FROM messages WHERE id = ? AND conversation_id = ? AND "
                             "NOT EXISTS (SELECT 1 FROM messages c WHERE c.parent_id = messages.id)"));
    q.addBindValue(messageId);
    q.addBindValue(conversationId);
    if (!q.exec() || !q.next()) {
        m_lastError = QStringLiteral("Message %1 is not a last message of conversation %2.").arg(messageId).arg(conversationId);
        return false;
    }
    const qint64 parent = q.value(0).toLongLong();
    q.prepare(QStringLiteral("DELETE FROM messages WHERE id = ?"));
    q.addBindValue(messageId);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return false;
    }
    q.prepare(QStringLiteral("UPDATE conversations SET leaf_id = ? WHERE id = ? AND leaf_id = ?"));
    q.addBindValue(parent);
    q.addBindValue(conversationId);
    q.addBindValue(messageId);
    if (!q.exec() || !tx.commit()) {
        m_lastError = db.lastError().text();
        return false;
    }
    return true;
}

qint64 ChatStore::appendMessage(qint64 conversationId, const StoredMessage &message)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    Transaction tx(db);
    QSqlQuery q(db);
    q.prepare(QStringLiteral("INSERT INTO messages (conversation_id, position, role, text, stats_json, parent_id) VALUES "
                             "(?, (SELECT COALESCE(MAX(position), -1) + 1 FROM messages WHERE conversation_id = ?), ?, ?, ?, ?)"));
    q.addBindValue(conversationId);
    q.addBindValue(conversationId);
    q.addBindValue(text(message.role));
    q.addBindValue(text(message.text));
    q.addBindValue(statsToJson(message.stats));
    q.addBindValue(parentValue(message.parentId));
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return 0;
    }
    const qint64 id = q.lastInsertId().toLongLong();
    q.prepare(QStringLiteral("UPDATE conversations SET leaf_id = ? WHERE id = ?"));
    q.addBindValue(id);
    q.addBindValue(conversationId);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return 0;
    }
    return touch(conversationId) && tx.commit() ? id : 0;
}

bool ChatStore::updateMessage(qint64 messageId, const QString &text, const QVariantMap &stats)
{
    QSqlQuery q(QSqlDatabase::database(m_connectionName, false));
    q.prepare(QStringLiteral("UPDATE messages SET text = ?, stats_json = ? WHERE id = ?"));
    q.addBindValue(::text(text));
    q.addBindValue(statsToJson(stats));
    q.addBindValue(messageId);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return false;
    }
    return q.numRowsAffected() == 1;
}

bool ChatStore::replaceMessages(qint64 conversationId, QList<StoredMessage> &messages)
{
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    Transaction tx(db);
    if (!tx.active()) {
        m_lastError = db.lastError().text();
        return false;
    }
    QSqlQuery q(db);
    q.prepare(QStringLiteral("DELETE FROM messages WHERE conversation_id = ?"));
    q.addBindValue(conversationId);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return false;
    }
    QList<qint64> ids;
    q.prepare(QStringLiteral("INSERT INTO messages (conversation_id, position, role, text, stats_json, parent_id) "
                             "VALUES (?, ?, ?, ?, ?, ?)"));
    for (int i = 0; i < messages.size(); ++i) {
        q.addBindValue(conversationId);
        q.addBindValue(i);
        q.addBindValue(text(messages[i].role));
        q.addBindValue(text(messages[i].text));
        q.addBindValue(statsToJson(messages[i].stats));
        q.addBindValue(parentValue(ids.isEmpty() ? 0 : ids.constLast()));
        if (!q.exec()) {
            m_lastError = q.lastError().text();
            return false;  // the transaction rolls back: the previous messages stay
        }
        ids.append(q.lastInsertId().toLongLong());
    }
    q.prepare(QStringLiteral("UPDATE conversations SET leaf_id = ? WHERE id = ?"));
    q.addBindValue(ids.isEmpty() ? 0 : ids.constLast());
    q.addBindValue(conversationId);
    if (!q.exec() || !touch(conversationId) || !tx.commit()) {
        m_lastError = db.lastError().text();
        return false;
    }
    for (int i = 0; i < messages.size(); ++i) {
        messages[i].id = ids[i];
        messages[i].parentId = i > 0 ? ids[i - 1] : 0;
    }
    return true;
}
