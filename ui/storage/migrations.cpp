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
    default:
        return {};
    }
}
