// The conversation list in the chat page's side bar: newest first, filtered by a search of
// titles and message text; rename and delete go straight to the ChatStore.
#pragma once
#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "storage/chatstore.h"

class ConversationListModel : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(QString search READ search WRITE setSearch NOTIFY searchChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Roles { IdRole = Qt::UserRole + 1, TitleRole, UpdatedRole };

    explicit ConversationListModel(ChatStore *store, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString search() const { return m_search; }
    void setSearch(const QString &search);

    Q_INVOKABLE void refresh();
    Q_INVOKABLE bool rename(qint64 id, const QString &title);
    Q_INVOKABLE bool remove(qint64 id);
    Q_INVOKABLE int rowOf(qint64 id) const;

Q_SIGNALS:
    void searchChanged();
    void countChanged();
    void removed(qint64 id);

private:
    ChatStore *m_store;
    QString m_search;
    QList<StoredConversation> m_items;
};
