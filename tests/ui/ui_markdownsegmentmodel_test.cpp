// MarkdownSegmentModel: a long message is cut at block boundaries, never inside a construct a
// cut would change (a code block is closed and opened again), the segments hold the whole text,
// and a text that grows by appending is split exactly as it would be at once, without a reset.
#include <QSignalSpy>
#include <QTest>

#include "viewmodels/markdownsegmentmodel.h"

namespace {
constexpr qsizetype kTarget = 100;

QString paragraph(int i)
{
    return QStringLiteral("Paragraph %1 talks about decode speed and memory bandwidth for a while, "
                          "long enough to matter.\n\n")
        .arg(i);
}

// The segments with the code-block markers the model adds at cuts taken out again.
QString joined(const QStringList &segments)
{
    QString out;
    for (qsizetype i = 0; i < segments.size(); ++i) {
        QString segment = segments[i];
        if (i > 0 && segment.startsWith(QStringLiteral("```python\n")) && segments[i - 1].endsWith(QStringLiteral("\n```")))
            segment.remove(0, 10);
        if (i + 1 < segments.size() && segment.endsWith(QStringLiteral("\n```"))
            && segments[i + 1].startsWith(QStringLiteral("```python\n")))
            segment.chop(3);
        out += segment;
    }
    return out;
}

QStringList rows(const MarkdownSegmentModel &model)
{
    QStringList out;
    for (int row = 0; row < model.rowCount(); ++row)
        out.append(model.data(model.index(row), MarkdownSegmentModel::SegmentRole).toString());
    return out;
}
}  // namespace

class MarkdownSegmentModelTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // Code blocks apart from the Markdown around them: the code without its fences, the language
    // from the info string; a fence still open (a streaming reply) runs to the end.
    void blocksSeparateCode()
    {
        const auto blocks = MarkdownSegmentModel::blocks(
            u"Intro **bold**\n\n```python title\nx = 1\n\nprint(x)\n```\nAfter\n~~~\nraw ``` inside\n~~~\n\n```sh\nstill open");
        QCOMPARE(blocks.size(), 5);
        QVERIFY(!blocks[0].code);
        QCOMPARE(blocks[0].text, QStringLiteral("Intro **bold**\n\n"));
        QVERIFY(blocks[1].code);
        QCOMPARE(blocks[1].language, QStringLiteral("python"));
        QCOMPARE(blocks[1].text, QStringLiteral("x = 1\n\nprint(x)"));
        QCOMPARE(blocks[2].text, QStringLiteral("After\n"));
        QVERIFY(blocks[3].code);
        QCOMPARE(blocks[3].text, QStringLiteral("raw ``` inside"));  // a ``` line does not close ~~~
        QVERIFY(blocks[4].code);
        QCOMPARE(blocks[4].language, QStringLiteral("sh"));
        QCOMPARE(blocks[4].text, QStringLiteral("still open"));
        // Plain text is one block; an empty text one empty block.
        QCOMPARE(MarkdownSegmentModel::blocks(u"just text").size(), 1);
        QCOMPARE(MarkdownSegmentModel::blocks(u"").size(), 1);
        QVERIFY(!MarkdownSegmentModel::blocks(u"").constFirst().code);
    }

    void shortTextIsOneSegment()
    {
        QCOMPARE(MarkdownSegmentModel::split(QString(), kTarget), QStringList{QString()});
        const QString text = QStringLiteral("Hello **world**.\n\nA second paragraph.");
        QCOMPARE(MarkdownSegmentModel::split(text, kTarget), QStringList{text});
    }

    void paragraphsAreCutAfterTheTargetLength()
    {
        QString text;
        for (int i = 0; i < 20; ++i)
            text += paragraph(i);
        const QStringList segments = MarkdownSegmentModel::split(text, kTarget);
        QVERIFY(segments.size() > 5);
        QCOMPARE(segments.join(QString()), text);
        for (qsizetype i = 0; i + 1 < segments.size(); ++i) {
            QVERIFY(segments[i].size() >= kTarget);
            QVERIFY(segments[i].endsWith(QStringLiteral("\n\n")));
            QVERIFY(segments[i + 1].startsWith(QStringLiteral("Paragraph ")));
        }
    }

    void noCutBeforeAnOrderedItemOrAnIndentedLine()
    {
        QString text = paragraph(0) + paragraph(1);
        text += QStringLiteral("1. first step\n\n2. second step\n\n   still the second step\n\n3. third step\n");
        for (const QString &segment : MarkdownSegmentModel::split(text, 10)) {
            QVERIFY2(!segment.startsWith(QStringLiteral("2.")) && !segment.startsWith(QStringLiteral("3."))
                         && !segment.startsWith(QStringLiteral(" ")),
                     qPrintable(segment));
        }
    }

    void codeBlockIsClosedAndOpenedAgainAtACut()
    {
        QString text = paragraph(0) + QStringLiteral("```python\n");
        for (int i = 0; i < 30; ++i)
            text += QStringLiteral("x_%1 = bandwidth / weight_bytes\n\n").arg(i);  // blank lines inside the block
        text += QStringLiteral("```\n\n") + paragraph(1);
        const QStringList segments = MarkdownSegmentModel::split(text, kTarget);
        QVERIFY(segments.size() > 3);
        QVERIFY(std::any_of(segments.begin() + 1, segments.end(),
                            [](const QString &segment) { return segment.startsWith(QStringLiteral("```python\n")); }));
        QCOMPARE(joined(segments), text);
        for (const QString &segment : segments) {
            // Every segment closes the code blocks it opens.
            int open = 0;
            for (const QString &line : segment.split(u'\n'))
                if (line.startsWith(QStringLiteral("```")))
                    open ^= 1;
            QCOMPARE(open, 0);
        }
    }

    void longerFenceIsNotClosedByAShorterOne()
    {
        QString text = QStringLiteral("````markdown\n");
        for (int i = 0; i < 10; ++i)
            text += QStringLiteral("```\nan example fence inside the block, line %1\n").arg(i);
        text += QStringLiteral("````\n\n") + paragraph(0) + paragraph(1);
        const QStringList segments = MarkdownSegmentModel::split(text, kTarget);
        QVERIFY(segments.size() > 2);
        for (qsizetype i = 1; i < segments.size(); ++i) {
            if (segments[i].startsWith(QStringLiteral("Paragraph")))
                break;
            QVERIFY2(segments[i].startsWith(QStringLiteral("````markdown\n")), qPrintable(segments[i]));
            QVERIFY(segments[i - 1].endsWith(QStringLiteral("\n````")));
        }
    }

    void appendingSplitsAsTheWholeTextWithoutReset()
    {
        QString text;
        for (int i = 0; i < 12; ++i) {
            text += paragraph(i);
            if (i % 4 == 1) {
                text += QStringLiteral("```python\n");
                for (int line = 0; line < 8; ++line)
                    text += QStringLiteral("step_%1 = bandwidth / model_bytes\n").arg(line);
                text += QStringLiteral("```\n\n");
            }
        }
        MarkdownSegmentModel model(nullptr, kTarget);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        // Streamed in pieces of 1 to 13 characters, like tokens.
        for (qsizetype at = 0, step = 1; at < text.size(); at += step, step = step % 13 + 1)
            model.setText(text.left(at + step));
        QCOMPARE(rows(model), MarkdownSegmentModel::split(text, kTarget));
        QCOMPARE(reset.size(), 0);
        int insertedRows = 0;
        for (const QList<QVariant> &args : std::as_const(inserted))
            insertedRows += args.at(2).toInt() - args.at(1).toInt() + 1;
        QCOMPARE(insertedRows, model.rowCount() - 1);
        QVERIFY(model.data(model.index(model.rowCount() - 1), MarkdownSegmentModel::LastRole).toBool());
        QVERIFY(!model.data(model.index(0), MarkdownSegmentModel::LastRole).toBool());
    }

    void otherChangesReset()
    {
        MarkdownSegmentModel model(nullptr, kTarget);
        model.setText(paragraph(0) + paragraph(1) + paragraph(2));
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setText(paragraph(3));
        QCOMPARE(reset.size(), 1);
        QCOMPARE(rows(model), QStringList{paragraph(3)});
    }
};

QTEST_GUILESS_MAIN(MarkdownSegmentModelTest)
#include "ui_markdownsegmentmodel_test.moc"
