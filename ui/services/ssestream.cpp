#include "ssestream.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {
constexpr int kMaxLineBytes = 4 << 20;  // a line this long is not an event stream

QString shortened(const QByteArray &line)
{
    QString s = QString::fromUtf8(line.left(120)).simplified();
    if (line.size() > 120)
        s += QStringLiteral("…");
    return s;
}

SseChunk malformed(const QByteArray &line)
{
    SseChunk c;
    c.kind = SseChunk::Malformed;
    c.message = shortened(line);
    return c;
}
}  // namespace

QList<SseChunk> SseParser::feed(const QByteArray &bytes)
{
    QList<SseChunk> out;
    for (const char ch : bytes) {
        if (m_done)
            break;
        if (m_pendingCr) {
            m_pendingCr = false;
            if (ch == '\n')
                continue;  // the LF of a CRLF pair
        }
        if (ch == '\r' || ch == '\n') {
            m_pendingCr = ch == '\r';
            endOfLine(out);
            continue;
        }
        m_line.append(ch);
        if (m_line.size() > kMaxLineBytes) {
            out.append(malformed(m_line));
            m_line.clear();
            m_done = true;
        }
    }
    return out;
}

void SseParser::endOfLine(QList<SseChunk> &out)
{
    const QByteArray line = m_line;
    m_line.clear();
    if (line.isEmpty()) {  // blank line: dispatch the event
        if (m_hasData) {
            const QList<SseChunk> chunks = interpret(m_data);
            for (const SseChunk &c : chunks) {
                out.append(c);
                if (c.kind == SseChunk::Done || c.kind == SseChunk::Malformed)
                    m_done = true;
            }
        }
        m_data.clear();
        m_hasData = false;
        return;
    }
    if (line.startsWith(':'))
        return;  // a comment (keep-alive)
    const int colon = line.indexOf(':');
    const QByteArray field = colon < 0 ? line : line.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' '))
        value.remove(0, 1);
    if (field == "data") {
        if (m_hasData)
            m_data.append('\n');
        m_data.append(value);
        m_hasData = true;
    }
    // Other fields (event, id, retry, unknown ones) are ignored, as the SSE specification says.
}

QList<SseChunk> SseParser::interpret(const QByteArray &data)
{
    const QByteArray trimmed = data.trimmed();
    if (trimmed == "[DONE]")
        return {SseChunk{SseChunk::Done, {}, {}, {}, -1, -1}};
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(trimmed, &parseError);
    if (parseError.error != QJsonParseError::NoError || !doc.isObject())
        return {malformed(trimmed)};
    const QJsonObject obj = doc.object();
    if (obj.contains(QLatin1String("error"))) {
        SseChunk c;
        c.kind = SseChunk::Error;
        c.message = openAiErrorMessage(trimmed);
        return {c};
    }
    QList<SseChunk> out;
    const QJsonValue choices = obj.value(QLatin1String("choices"));
    if (!choices.isArray())
        return {malformed(trimmed)};
    for (const QJsonValue &choice : choices.toArray()) {
        const QJsonObject delta = choice.toObject().value(QLatin1String("delta")).toObject();
        const QJsonValue content = delta.value(QLatin1String("content"));
        if (!content.isString() && !content.isNull() && !content.isUndefined())
            return {malformed(trimmed)};
        SseChunk c;
        c.text = content.toString();
        c.finishReason = choice.toObject().value(QLatin1String("finish_reason")).toString();
        out.append(c);
    }
    const QJsonObject usage = obj.value(QLatin1String("usage")).toObject();
    if (!usage.isEmpty()) {
        SseChunk c;
        c.kind = SseChunk::Usage;
        c.completionTokens = usage.value(QLatin1String("completion_tokens")).toInt(-1);
        c.promptTokens = usage.value(QLatin1String("prompt_tokens")).toInt(-1);
        out.append(c);
    }
    return out;
}

QString openAiErrorMessage(const QByteArray &body)
{
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (!doc.isObject())
        return {};
    const QJsonObject obj = doc.object();
    const QJsonValue error = obj.value(QLatin1String("error"));
    if (error.isObject()) {
        const QString message = error.toObject().value(QLatin1String("message")).toString();
        if (!message.isEmpty())
            return message;
    }
    if (error.isString())
        return error.toString();
    for (const char *key : {"message", "detail"}) {
        const QJsonValue v = obj.value(QLatin1String(key));
        if (v.isString())
            return v.toString();
    }
    return {};
}
