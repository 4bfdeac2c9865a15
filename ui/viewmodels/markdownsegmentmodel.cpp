#include "markdownsegmentmodel.h"

namespace {
// The run of backticks or tildes a fence line starts with ("```", "~~~~"); empty when `line`
// (without its indentation) opens no fence.
QStringView fenceMarker(QStringView trimmedLine)
{
    if (trimmedLine.isEmpty() || (trimmedLine.front() != u'`' && trimmedLine.front() != u'~'))
        return {};
    qsizetype n = 0;
    while (n < trimmedLine.size() && trimmedLine[n] == trimmedLine.front())
        ++n;
    return n >= 3 ? trimmedLine.left(n) : QStringView();
}

// Closes the fence `opener` opened: the same character, at least as many, nothing after them.
bool closesFence(QStringView trimmedLine, QStringView opener)
{
    const QStringView marker = fenceMarker(trimmedLine);
    const QStringView opened = fenceMarker(opener);
    return !marker.isEmpty() && marker.front() == opened.front() && marker.size() >= opened.size()
        && marker.size() == trimmedLine.size();
}

// "1. item" or "12) item": a new segment must not start with one (its number would restart).
bool isOrderedListItem(QStringView line)
{
    qsizetype digits = 0;
    while (digits < line.size() && digits < 10 && line[digits].isDigit())
        ++digits;
    if (digits == 0 || digits >= line.size() || (line[digits] != u'.' && line[digits] != u')'))
        return false;
    return digits + 1 == line.size() || line[digits + 1].isSpace();
}
}  // namespace

MarkdownSegmentModel::MarkdownSegmentModel(QObject *parent, qsizetype targetLength)
    : QAbstractListModel(parent)
    , m_targetLength(targetLength)
{
}

int MarkdownSegmentModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_segments.size());
}

QVariant MarkdownSegmentModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    switch (role) {
    case Qt::DisplayRole:
    case SegmentRole: return segmentMarkdown(m_text, m_segments, index.row());
    case LastRole: return index.row() == m_segments.size() - 1;
    default: return {};
    }
}

QHash<int, QByteArray> MarkdownSegmentModel::roleNames() const
{
    return {{SegmentRole, "segment"}, {LastRole, "last"}};
}

void MarkdownSegmentModel::setText(const QString &text)
{
    if (text == m_text)
        return;
    if (!text.startsWith(m_text)) {
        beginResetModel();
        m_text = text;
        m_segments = scan(m_text, Segment{}, m_targetLength);
        endResetModel();
        Q_EMIT textChanged();
        return;
    }
    // Appended text: only the last segment is split again; the ones before it stay as they are.
    m_text = text;
    const int last = int(m_segments.size()) - 1;
    const QList<Segment> tail = scan(m_text, m_segments.constLast(), m_targetLength);
    if (tail.size() > 1) {
        beginInsertRows({}, last + 1, last + int(tail.size()) - 1);
        m_segments.append(tail.mid(1));
        endInsertRows();
    }
    Q_EMIT dataChanged(index(last), index(last));
    Q_EMIT textChanged();
}

QStringList MarkdownSegmentModel::split(const QString &text, qsizetype targetLength)
{
    const QList<Segment> segments = scan(text, Segment{}, targetLength);
    QStringList out;
    for (qsizetype i = 0; i < segments.size(); ++i)
        out.append(segmentMarkdown(text, segments, i));
    return out;
}

QList<MarkdownSegmentModel::Segment> MarkdownSegmentModel::scan(QStringView text, const Segment &from,
                                                                 qsizetype targetLength)
{
    QList<Segment> out{from};
    QString fence = from.fenceOpener;  // the open fence's opening line; empty outside code blocks
    bool previousBlank = false;
    // Complete lines only: the last, unfinished line of a streaming reply decides nothing yet.
    for (qsizetype lineStart = from.start, newline; (newline = text.indexOf(u'\n', lineStart)) >= 0;
         lineStart = newline + 1) {
        const QStringView line = text.mid(lineStart, newline - lineStart);
        const QStringView trimmed = line.trimmed();
        if (lineStart - out.constLast().start >= targetLength) {
            const bool cut = fence.isEmpty()
                ? previousBlank && !line.isEmpty() && !line.front().isSpace() && !isOrderedListItem(line)
                : !closesFence(trimmed, fence);
            if (cut)
                out.append({lineStart, fence});
        }
        if (fence.isEmpty() && !fenceMarker(trimmed).isEmpty())
            fence = trimmed.toString();
        else if (!fence.isEmpty() && closesFence(trimmed, fence))
            fence.clear();
        previousBlank = trimmed.isEmpty();
    }
    return out;
}

QString MarkdownSegmentModel::segmentMarkdown(QStringView text, const QList<Segment> &segments, qsizetype i)
{
    const Segment &segment = segments.at(i);
    const bool hasNext = i + 1 < segments.size();
    const qsizetype end = hasNext ? segments.at(i + 1).start : text.size();
    QString out;
    if (!segment.fenceOpener.isEmpty())
        out += segment.fenceOpener + u'\n';
    out += text.mid(segment.start, end - segment.start);
    // Cut inside a code block: close it here, the next segment opens it again.
    if (hasNext && !segments.at(i + 1).fenceOpener.isEmpty())
        out += fenceMarker(segments.at(i + 1).fenceOpener);
    return out;
}

QList<MarkdownSegmentModel::Block> MarkdownSegmentModel::blocks(QStringView segment)
{
    QList<Block> out;
    QString fence;  // the open fence's marker; empty outside code blocks
    QString text;
    QString language;
    const auto flush = [&](bool code) {
        if (code || !text.trimmed().isEmpty()) {
            if (code && text.endsWith(u'\n'))
                text.chop(1);
            out.append({code, text, language});
        }
        text.clear();
        language.clear();
    };
    for (qsizetype lineStart = 0; lineStart <= segment.size();) {
        qsizetype newline = segment.indexOf(u'\n', lineStart);
        const bool lastLine = newline < 0;
        if (lastLine)
            newline = segment.size();
        const QStringView line = segment.mid(lineStart, newline - lineStart);
        const QStringView trimmed = line.trimmed();
        if (fence.isEmpty() && !fenceMarker(trimmed).isEmpty()) {
            flush(false);
            fence = fenceMarker(trimmed).toString();
            language = trimmed.mid(fence.size()).trimmed().toString().section(u' ', 0, 0);
        } else if (!fence.isEmpty() && closesFence(trimmed, fence)) {
            flush(true);
            fence.clear();
        } else if (!lastLine || !line.isEmpty()) {
            text += line;
            if (!lastLine)
                text += u'\n';
        }
        if (lastLine)
            break;
        lineStart = newline + 1;
    }
    flush(!fence.isEmpty());
    if (out.isEmpty())
        out.append({false, QString(), QString()});
    return out;
}

QVariantList MarkdownSegmentModel::blocksOf(const QString &segment) const
{
    QVariantList out;
    for (const Block &b : blocks(segment))
        out.append(QVariantMap{{QStringLiteral("code"), b.code}, {QStringLiteral("text"), b.text},
                               {QStringLiteral("language"), b.language}});
    return out;
}
