#include "conversationlistmodel.h"

ConversationListModel::ConversationListModel(ChatStore *store, QObject *parent)
    : QAbstractListModel(parent)
    , m_store(store)
{
    refresh();
}

int ConversationListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_items.size());
}

QVariant ConversationListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const StoredConversation &c = m_items.at(index.row());
    switch (role) {
    case IdRole: return c.id;
    case Qt::DisplayRole:
    case TitleRole: return c.title;
    case UpdatedRole: return c.updatedAt;
    default: return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const
{
    return {{IdRole, "conversationId"}, {TitleRole, "title"}, {UpdatedRole, "updatedAt"}};
}

void ConversationListModel::setSearch(const QString &search)
{
    if (search == m_search)
        return;
    m_search = search;
    Q_EMIT searchChanged();
    refresh();
}

void ConversationListModel::refresh()
{
    beginResetModel();
    m_items = m_store->conversations(m_search);
    endResetModel();
    Q_EMIT countChanged();
}

bool ConversationListModel::rename(qint64 id, const QString &title)
{
    const QString trimmed = title.simplified();
    if (trimmed.isEmpty() || !m_store->renameConversation(id, trimmed))
        return false;
    const int row = rowOf(id);
    if (row >= 0) {
        m_items[row].title = trimmed;
        Q_EMIT dataChanged(index(row), index(row), {TitleRole});
    }
    return true;
}

bool ConversationListModel::remove(qint64 id)
{
    if (!m_store->deleteConversation(id))
        return false;
    const int row = rowOf(id);
    if (row >= 0) {
        beginRemoveRows({}, row, row);
        m_items.removeAt(row);
        endRemoveRows();
        Q_EMIT countChanged();
    }
    Q_EMIT removed(id);
    return true;
}

int ConversationListModel::rowOf(qint64 id) const
{
    for (int i = 0; i < m_items.size(); ++i) {
        if (m_items.at(i).id == id)
            return i;
    }
    return -1;
}
