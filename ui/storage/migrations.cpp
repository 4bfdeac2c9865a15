#include "migrations.h"

QStringList migrationSteps(int version)
{
    switch (version) {
    case 1:  // conversations and their messages
        return {
            QStringLiteral("CREATE TABLE conversations (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, "
                           "created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                           "conversation_id INTEGER NOT NULL REFERENCES conversations(id), position INTEGER NOT NULL, "
                           "role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')), text TEXT NOT NULL, "
                           "UNIQUE (conversation_id, position))"),
        };
    case 2:  // a system prompt per conversation, statistics per reply
        return {
            QStringLiteral("ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL DEFAULT ''"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN stats_json TEXT NOT NULL DEFAULT ''"),
            QStringLiteral("CREATE INDEX messages_by_conversation ON messages (conversation_id, position)"),
        };
    case 3:  // branches: each message names the one it answers or follows, the conversation the branch shown
        return {
            QStringLiteral("ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id)"),
            QStringLiteral("ALTER TABLE conversations ADD COLUMN leaf_id INTEGER NOT NULL DEFAULT 0"),
            // Existing chats are one branch: each message follows the one before it.
            QStringLiteral("UPDATE messages SET parent_id = (SELECT p.id FROM messages p WHERE p.conversation_id = "
                           "messages.conversation_id AND p.position < messages.position ORDER BY p.position DESC LIMIT 1)"),
            QStringLiteral("UPDATE conversations SET leaf_id = COALESCE((SELECT m.id FROM messages m WHERE "
                           "m.conversation_id = conversations.id ORDER BY m.position DESC LIMIT 1), 0)"),
            QStringLiteral("CREATE INDEX messages_by_parent ON messages (parent_id)"),
        };
    default:
        return {};
    }
}
