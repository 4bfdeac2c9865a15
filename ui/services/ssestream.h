// Incremental parsing of an OpenAI-style server-sent event stream (POST /v1/chat/completions
// with "stream": true). Bytes arrive in arbitrary pieces; each complete event's data is
// interpreted as a chat completion chunk, an error object or the final "[DONE]".
#pragma once
#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

// What one event of the stream means for the reply.
struct SseChunk {
    enum Kind { Text, Done, Error, Malformed, Usage };
    Kind kind = Text;
    QString text;             // Text: the delta's content (may be empty: a role-only chunk)
    QString finishReason;     // Text: set on the last content chunk when the server says why
    QString message;          // Error / Malformed: what went wrong (Malformed: the offending line)
    int completionTokens = -1;  // Usage: usage.completion_tokens when the server reports it
    int promptTokens = -1;
};

class SseParser
{
public:
    // Adds received bytes; returns the chunks of every event they complete, in order.
    QList<SseChunk> feed(const QByteArray &bytes);
    // True once "[DONE]" has been seen.
    bool done() const { return m_done; }
    // Bytes of an incomplete line still held (the stream ended mid-event when non-empty).
    bool hasPartialEvent() const { return !m_line.isEmpty() || !m_data.isEmpty(); }

    // Interprets one event's data (exposed for tests).
    static QList<SseChunk> interpret(const QByteArray &data);

private:
    void endOfLine(QList<SseChunk> &out);

    QByteArray m_line;
    QByteArray m_data;   // data lines of the event being read, joined with '\n'
    bool m_hasData = false;
    bool m_done = false;
    bool m_pendingCr = false;
};

// The message of an OpenAI-style error body {"error": {"message": ...}} (or {"message": ...},
// {"detail": ...}, {"error": "..."}); empty when the body has none.
QString openAiErrorMessage(const QByteArray &body);
