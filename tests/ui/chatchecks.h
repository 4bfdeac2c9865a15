// Checks on a ChatViewModel shared by the view-model tests (local and remote services).
#pragma once
#include <QTest>

#include "storage/chatstore.h"
#include "viewmodels/chatviewmodel.h"

inline QString chatText(const ChatViewModel &chat, int row)
{
    return chat.data(chat.index(row), ChatViewModel::TextRole).toString();
}

// The branch the store holds as shown must equal what the list shows.
inline void verifyStoredMatchesShown(const ChatStore &store, const ChatViewModel &chat)
{
    const QList<StoredMessage> stored = store.path(chat.conversationId());
    QCOMPARE(stored.size(), chat.rowCount());
    for (int row = 0; row < chat.rowCount(); ++row) {
        QCOMPARE(stored[row].role, chat.data(chat.index(row), ChatViewModel::RoleRole).toString());
        QCOMPARE(stored[row].text, chatText(chat, row));
    }
}
