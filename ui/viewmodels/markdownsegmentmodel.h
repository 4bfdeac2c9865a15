// A message's Markdown cut into segments of about kTargetLength characters at block boundaries,
// for the chat view to show as one text item per segment. Parsing and laying out Markdown costs
// time in proportion to its length, and a streaming reply changes up to 30 times a second: with
// segments, each change parses and lays out only the last segment, not the whole reply (at
// 2000 tokens/s a reply passes 100 KB in ten seconds).
//
// Segments end before a line that starts a new block after a blank line (not before a
// continuation line or an ordered-list item, whose number would restart), or inside a fenced
// code block before any line but the closing fence: the code block is then closed at the end of
// the segment and opened again, with its info string, at the start of the next. A segment ends
// only before a complete line, so appending text never moves an earlier boundary, and a text
// that grows by appending (a streaming reply) is split again from its last segment only.
#pragma once
#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

class MarkdownSegmentModel : public QAbstractListModel
{
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QString text READ text WRITE setText NOTIFY textChanged)
public:
    enum Roles { SegmentRole = Qt::UserRole + 1, LastRole };
    static constexpr qsizetype kTargetLength = 1000;

    explicit MarkdownSegmentModel(QObject *parent = nullptr, qsizetype targetLength = kTargetLength);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString text() const { return m_text; }
    void setText(const QString &text);

    // The Markdown of each segment of `text` (one, possibly empty, at least), as the model shows it.
    static QStringList split(const QString &text, qsizetype targetLength = kTargetLength);

    // One segment's Markdown as blocks for the view: fenced code blocks apart ({code: true, text: the
    // code without its fences, language: the info string's first word}), the Markdown between them
    // ({code: false, text}). A fence still open at the end (a streaming reply) runs to the end.
    struct Block {
        bool code = false;
        QString text;
        QString language;
    };
    static QList<Block> blocks(QStringView segment);
    Q_INVOKABLE QVariantList blocksOf(const QString &segment) const;

Q_SIGNALS:
    void textChanged();

private:
    struct Segment {
        qsizetype start = 0;   // in m_text
        QString fenceOpener;   // non-empty: starts inside the fenced code block this line opened
    };

    static QList<Segment> scan(QStringView text, const Segment &from, qsizetype targetLength);
    static QString segmentMarkdown(QStringView text, const QList<Segment> &segments, qsizetype i);

    qsizetype m_targetLength;
    QString m_text;
    QList<Segment> m_segments{Segment{}};
};
